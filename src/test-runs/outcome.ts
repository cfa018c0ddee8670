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
