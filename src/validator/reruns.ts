import type { RunOutcome } from '../test-runs/outcome.js';
import type { FailureDetail } from '../test-runs/parser-types.js';

/*
 * Flaky tests are not the change's fault (docs/validator.md, "Flaky tests"). A test that fails on
 * the change's tree and did not fail on the baseline is a suspect; the test command runs once more
 * on both trees, and a suspect whose result changes on the same tree is flaky, not new. The whole
 * command runs again (every runner can, none needs an id it may not parse back); that costs one
 * more run of each tree, so it is bounded: few suspects, quick first runs.
 */

/** More suspects than this is a broken change, not bad luck: no re-run. */
export const RERUN_MAX_TESTS = 20;
/** The two first runs together took longer than this: a re-run would double a long validation. */
export const RERUN_MAX_FIRST_RUNS_MS = 180_000;

export type RunStatus = 'passed' | 'failed' | 'skipped' | 'not run';

export interface RerunResult {
  test: string;
  /** The change's tree: first run, re-run. */
  change: RunStatus[];
  /** The baseline's tree: first run (absent when a kept baseline was reused), re-run. */
  baseline: RunStatus[];
}

const isRunLevel = (id: string) => id.startsWith('(');

/** The new failures worth a second look: failing tests by id, not the change's own still-failing tests. */
export function suspectsOf(newFailures: string[], own: string[]): string[] {
  const mine = new Set(own);
  return newFailures.filter((id) => !isRunLevel(id) && !mine.has(id));
}

/** Why the suspects are not run again, or undefined when they are. */
export function rerunRefusal(suspects: string[], firstRunsMs: number): string | undefined {
  if (suspects.length > RERUN_MAX_TESTS)
    return `${suspects.length} new failures (more than ${RERUN_MAX_TESTS}) were not run again`;
  if (firstRunsMs > RERUN_MAX_FIRST_RUNS_MS)
    return `the new failures were not run again: the two test runs took ${Math.round(firstRunsMs / 1000)} s`;
  return undefined;
}

export function statusIn(run: Pick<RunOutcome, 'tests' | 'failures'>, id: string): RunStatus {
  if (run.failures.includes(id)) return 'failed';
  return run.tests.get(id) ?? 'not run';
}

/**
 * Which suspects are flaky: passed when run again on the change's tree, or failed when run again
 * on the baseline's (where they had not failed). A suspect that fails again on the change and
 * does not fail again on the baseline stays a new failure.
 */
export function judgeReruns(
  suspects: string[],
  first: { change: RunOutcome; baseline?: Pick<RunOutcome, 'tests' | 'failures'> },
  again: { change: RunOutcome; baseline?: RunOutcome },
): { flaky: string[]; results: RerunResult[] } {
  const results = suspects.map((test) => ({
    test,
    change: [statusIn(first.change, test), statusIn(again.change, test)],
    baseline: [
      ...(first.baseline ? [statusIn(first.baseline, test)] : []),
      ...(again.baseline ? [statusIn(again.baseline, test)] : []),
    ],
  }));
  const flaky = results
    .filter((r) => r.change[1] === 'passed' || (again.baseline !== undefined && r.baseline.at(-1) === 'failed'))
    .map((r) => r.test);
  return { flaky: flaky.sort(), results };
}

export function flakyNote(flaky: string[], results: RerunResult[]): string | undefined {
  if (flaky.length === 0) return undefined;
  const shown = results
    .filter((r) => flaky.includes(r.test))
    .slice(0, 3)
    .map((r) => `${r.test} (change: ${r.change.join(', ')}; base: ${r.baseline.join(', ') || 'not run again'})`);
  return (
    `${flaky.length} test(s) changed their result when run again on the same tree, so they are flaky and not ` +
    `counted as new: ${shown.join('; ')}${flaky.length > 3 ? '; …' : ''}`
  );
}

/*
 * A test that needs the network: the test phase has none, so a lookup or a connection to a host
 * other than this machine fails. Loopback connections are the test's own servers and stay ordinary
 * failures.
 */
const NETWORK_ERROR =
  /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH)\b|Name or service not known|Temporary failure in name resolution|Network is unreachable|nodename nor servname/;
const LOOPBACK = /(\b127\.\d+\.\d+\.\d+|::1\b|\blocalhost\b|\[::1\])/;

/** The failing tests whose message says they reached for the network, sorted. */
export function needingNetwork(failures: string[], details: ReadonlyMap<string, FailureDetail>): string[] {
  return failures
    .filter((id) => {
      const message = details.get(id)?.message;
      return message !== undefined && NETWORK_ERROR.test(message) && !LOOPBACK.test(message);
    })
    .sort();
}

export function networkNote(ids: string[]): string | undefined {
  if (ids.length === 0) return undefined;
  return (
    `${ids.length} failing test(s) need the network, which the test phase does not have: ` +
    `${ids.slice(0, 3).join(', ')}${ids.length > 3 ? ', …' : ''}`
  );
}
