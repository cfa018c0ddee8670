import { z } from 'zod';
import { BaselineSummary } from '../step-contract/fix.js';
import type { RunOutcome } from '../test-runs/outcome.js';
import type { TestStatus } from '../test-runs/parser-types.js';
import type { BaselineSeen } from './compare.js';

/*
 * A baseline run as the validator keeps it for later validations on the same base
 * (docs/validator.md, "Kept baselines"): everything the verdict reads of the base commit's run.
 * The summary the output shows (failures, counts, exit, setup, the change's test files' failures),
 * and every test the run reported by the runner's id with its status: the comparison's "never ran
 * on the base commit" (compare.ts) and the flaky re-runs' first statuses (reruns.ts) read those.
 * The failures' messages and frames are not kept: only the change's are ever shown.
 */

const STATUS = z.enum(['passed', 'failed', 'skipped']);

/** What a kept baseline holds; parsed on the way out of the store, so a row of another shape is a miss. */
export const KeptBaseline = z.object({
  summary: BaselineSummary,
  /** Every test the run reported, by the runner's id, with its status. */
  tests: z.array(z.tuple([z.string(), STATUS])),
  /** The run ended on its own (no timeout, not stopped at a hung test). */
  complete: z.boolean(),
});
export type KeptBaseline = z.infer<typeof KeptBaseline>;

/** A baseline run to keep: its summary (without `reused`, which says where a later validation got it) and its outcome. */
export function keptOf(summary: BaselineSummary, outcome: Pick<RunOutcome, 'tests' | 'complete'>): KeptBaseline {
  const { reused: _, ...own } = summary;
  return { summary: own, tests: [...outcome.tests], complete: outcome.complete };
}

/**
 * Whether a run is worth keeping: one whose dependencies were installed (or needed none) and that
 * ended on its own. A failed or skipped install may be the registry's bad minute, and a run cut
 * short by a timeout or a hung test the machine's load: those run again next time.
 */
export function keepable(kept: KeptBaseline): boolean {
  const { summary } = kept;
  return (
    kept.complete &&
    !summary.timed_out &&
    summary.hung === undefined &&
    (summary.setup === 'ok' || summary.setup === 'none')
  );
}

/** The run's statuses by id, and its failures: what the flaky re-runs compare with. */
export function outcomeOf(kept: KeptBaseline): Pick<RunOutcome, 'tests' | 'failures'> {
  return { tests: new Map<string, TestStatus>(kept.tests), failures: kept.summary.failures };
}

/** What the comparison reads of a baseline run that reported these tests and ended so. */
export function seenOf(
  tests: ReadonlyMap<string, TestStatus>,
  end: { exit_code: number | null; timed_out: boolean },
): BaselineSeen {
  return {
    reported: new Set(tests.keys()),
    stoppedShort: end.exit_code !== 0 || end.timed_out,
    listsPasses: [...tests.values()].some((s) => s === 'passed'),
  };
}
