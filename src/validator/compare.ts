import type { ParsedRun } from './parse.js';
import type { FailureDetail, TestStatus } from './parser-types.js';

/** How one run of the test command ended, as the sandbox reported it. */
export interface RunEnd {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  timeoutMs: number;
  /** The test the validator stopped the run at, for running past the per-test timeout. */
  hung?: string;
}

/** One run judged from its exit and its output together. */
export interface RunOutcome {
  tests: Map<string, TestStatus>;
  /**
   * What failed, sorted: failing tests by the runner's ids, plus run-level failures in
   * parentheses: "(output) Assertion failed...", "(run) timed out after 60 s",
   * "(run) exited with code 2", "(setup) npm ci exited with code 1".
   */
  failures: string[];
  /** The run ended on its own (no timeout, not stopped at a hung test): a test missing from it did not fail. */
  complete: boolean;
  /** What the output said about failing tests (message, innermost frame in the checkout), by id. */
  details: Map<string, FailureDetail>;
}

/**
 * A run failed if it printed a failing test or an unexplained failure marker, whatever
 * its exit code; a non-zero exit with nothing to show for it fails as "(run) ..."; a run
 * cut off at its timeout fails, and so does the test it was running. A run stopped at a
 * hung test fails that test, by name; the stop itself is no failure of its own (the
 * tests it kept from running are not run, not failed).
 */
export function judgeRun(parsed: ParsedRun, end: RunEnd, setupFailure?: string): RunOutcome {
  const tests = new Map(parsed.tests);
  if (end.timedOut && parsed.running && tests.get(parsed.running) !== 'passed') tests.set(parsed.running, 'failed');
  if (end.hung !== undefined) tests.set(end.hung, 'failed');
  const failures = new Set<string>([...tests].filter(([, s]) => s === 'failed').map(([id]) => id));
  for (const marker of parsed.markers) failures.add(marker);
  if (end.timedOut) failures.add(`(run) timed out after ${Math.round(end.timeoutMs / 1000)} s`);
  else if (end.hung === undefined && end.exitCode !== 0 && failures.size === 0) {
    failures.add(
      end.exitCode === null ? `(run) killed by ${end.signal ?? 'a signal'}` : `(run) exited with code ${end.exitCode}`,
    );
  }
  if (setupFailure) failures.add(setupFailure);
  return {
    tests,
    failures: [...failures].sort(),
    complete: !end.timedOut && end.hung === undefined,
    details: parsed.details,
  };
}

export interface Comparison {
  /** Failing in the change and not in the baseline: regressions. */
  new_failures: string[];
  /** Failing in the baseline and passing in the change. */
  fixed: string[];
  /** Failing in both: not the change's doing. */
  preexisting_failures: string[];
}

const isRunLevel = (id: string) => id.startsWith('(');

/**
 * Baseline against change. A baseline failure counts as fixed when the change reports the
 * test passing; for run-level failures and runners that list only failures (Surefire),
 * when the change's run ended on its own without it.
 */
export function compareRuns(baselineFailures: string[], change: RunOutcome): Comparison {
  const before = new Set(baselineFailures);
  const after = new Set(change.failures);
  const listsPasses = [...change.tests.values()].some((s) => s === 'passed');
  const fixed = baselineFailures.filter((id) => {
    if (after.has(id)) return false;
    const status = change.tests.get(id);
    if (status === 'passed') return true;
    return change.complete && status === undefined && (isRunLevel(id) || !listsPasses);
  });
  return {
    new_failures: change.failures.filter((id) => !before.has(id)),
    fixed: fixed.sort(),
    preexisting_failures: change.failures.filter((id) => before.has(id)),
  };
}

/** What a baseline run that ran in this validation reported (a kept baseline has only its failures). */
export interface BaselineSeen {
  /** Every test id it reported, whatever its status. */
  reported: ReadonlySet<string>;
  /** It exited non-zero or timed out: a chained script (`jest a && jest b`) may have stopped before a test. */
  stoppedShort: boolean;
  /**
   * It listed passing tests, so a test it did not list did not run. A runner that lists only
   * failures (jest without --verbose) says nothing of the rest, and nothing is left out then.
   */
  listsPasses: boolean;
}

/**
 * The change's failing tests the baseline never ran, when its run stopped short: a test script
 * that chains runs with `&&` stops at the first failing one, so on a base commit that already
 * fails, later runs' tests are never reached, and their failures on the change's tree cannot be
 * told new from old. Run-level failures and a baseline that ran to the end are compared as usual.
 */
export function unreachedOnBaseline(newFailures: string[], seen: BaselineSeen | undefined): string[] {
  if (!seen?.stoppedShort || !seen.listsPasses) return [];
  return newFailures.filter((id) => !isRunLevel(id) && !seen.reported.has(id));
}
