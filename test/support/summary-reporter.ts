import type { Reporter, TestCase, TestModule, TestRunEndReason, TestSuite } from 'vitest/node';
import { isCI } from './requirements.js';

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

/** How many skipped tests are named one by one at the end before the rest is only counted. */
const SKIPS_LISTED = 30;

export interface SummaryOptions {
  /** The test projects a whole run has (one per database leg): a leg that did not run is said so. */
  legs?: string[];
}

/**
 * Prints, after vitest's own report, the tests run on each leg and then the plain closing
 * line "N passed, N failed, N skipped" that CI reads. A test that did not run because a
 * hook or the file around it failed counts as failed, not skipped. Skipped tests are listed
 * by name, with the note of `ctx.skip(note)`; under CI any skip fails the run, since CI
 * installs everything the suite needs (test/support/requirements.ts).
 */
export default class SummaryReporter implements Reporter {
  constructor(private readonly options: SummaryOptions = {}) {}

  onTestRunEnd(modules: ReadonlyArray<TestModule>, _errors: unknown, reason: TestRunEndReason) {
    const legs = new Map<string, Counts>(
      (this.options.legs ?? []).map((leg) => [leg, { passed: 0, failed: 0, skipped: 0 }]),
    );
    const skips: string[] = [];
    for (const m of modules) {
      const leg = m.project.name || 'default';
      const counts = legs.get(leg) ?? { passed: 0, failed: 0, skipped: 0 };
      legs.set(leg, counts);
      let failedHere = 0;
      for (const t of m.children.allTests()) {
        const result = t.result();
        if (result.state === 'passed') counts.passed++;
        else if (result.state === 'failed' || brokenAround(t)) {
          counts.failed++;
          failedHere++;
        } else {
          counts.skipped++;
          skips.push(
            `[${leg}] ${m.relativeModuleId} ` +
              `> ${t.fullName}${result.state === 'skipped' && result.note ? ` (${result.note})` : ''}`,
          );
        }
      }
      // A file that failed outside its tests (on import, or in a hook) when none of its tests did.
      if (failedHere === 0 && (m.state() === 'failed' || m.errors().length > 0)) counts.failed++;
    }
    const total = { passed: 0, failed: 0, skipped: 0 };
    const width = Math.max(0, ...[...legs.keys()].map((leg) => leg.length));
    const lines = ['', 'tests run per leg:'];
    for (const [leg, c] of legs) {
      const ran = c.passed + c.failed + c.skipped > 0;
      lines.push(
        `  ${`${leg}:`.padEnd(width + 1)} ${
          ran ? `${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped` : 'not run'
        }`,
      );
      total.passed += c.passed;
      total.failed += c.failed;
      total.skipped += c.skipped;
    }
    if (skips.length > 0) {
      lines.push(`skipped (${skips.length}):`);
      for (const skip of skips.slice(0, SKIPS_LISTED)) lines.push(`  ${skip}`);
      if (skips.length > SKIPS_LISTED) lines.push(`  … and ${skips.length - SKIPS_LISTED} more`);
      if (isCI() && reason !== 'interrupted') {
        lines.push(
          `CI: ${skips.length} skipped tests fail the run: CI installs all the suite needs, so a skip here is ` +
            `a missing requirement or a forgotten skip`,
        );
        process.exitCode = 1;
      }
    }
    lines.push(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
    console.log(lines.join('\n'));
  }
}

/** True when a hook of a suite around the test, or its file, failed: the test never got to run. */
function brokenAround(test: TestCase): boolean {
  // A suite's own errors are its hooks' (a failed test is not among them); a module's are
  // its collection's and its top-level hooks'.
  for (let parent: TestSuite | TestModule = test.parent; ; parent = parent.parent) {
    if (parent.errors().length > 0) return true;
    if (parent.type === 'module') return false;
  }
}
