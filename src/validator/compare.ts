import type { RunOutcome } from '../test-runs/outcome.js';

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
