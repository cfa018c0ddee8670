import type { RunTree } from '../environments/copies.js';
import type { TestRecipe } from '../environments/detect.js';
import type { RunContext } from '../environments/sandboxed.js';
import { runSetup, setupState } from '../environments/setup-phase.js';
import type { BaselineSummary, SetupReport } from '../step-contract/fix.js';
import type { RunOutcome } from '../test-runs/outcome.js';
import { type TestRun, runTests } from '../test-runs/run.js';
import type { KeptRow } from './baseline-key.js';
import type { BaselineStore } from './baseline-store.js';
import type { BaselineSeen } from './compare.js';
import { type KeptBaseline, keepable, keptOf, outcomeOf, seenOf } from './kept-baseline.js';
import { type ChangeTests, addTestsToBaseline, failuresIn } from './reproduction.js';

type Log = (message: string, data?: Record<string, unknown>) => void;

/** The baseline as the comparison reads it: its summary, and what a run of it (here or kept) reported. */
export interface BaselineResult {
  summary: BaselineSummary;
  /** Its tests and how it ended; undefined for a retry's kept output, which has only its failures. */
  seen?: BaselineSeen;
  /** Its statuses by id, for the flaky re-runs' first column; undefined as `seen`. */
  outcome?: Pick<RunOutcome, 'tests' | 'failures'>;
  /** It ran in this validation, in this tree. */
  ranHere: boolean;
}

/**
 * The baseline copy: the base commit with the change's test files copied in and its setup done,
 * once, by its first run; a flaky suspect's re-run (src/validator/reruns.ts) finds it ready. A
 * baseline kept from an earlier validation leaves it untouched.
 */
export class BaselineTree {
  private prepared: Promise<SetupReport | null> | undefined;

  constructor(
    private readonly ctx: RunContext,
    readonly tree: RunTree,
    private readonly recipe: TestRecipe,
    private readonly given: {
      checkoutDir: string;
      tests: ChangeTests;
      /** The baseline tree's setup when it already ran (an environment cache build). */
      setup?: SetupReport | null;
      /** Lays a cached environment into the tree (a cache hit), instead of its setup. */
      laySetup?: () => Promise<SetupReport | null>;
      log: Log;
    },
  ) {}

  prepare(): Promise<SetupReport | null> {
    this.prepared ??= (async () => {
      const { checkoutDir, tests, setup, laySetup, log } = this.given;
      const leftOut = await addTestsToBaseline(checkoutDir, tests.copied, this.tree.repo);
      if (leftOut.length > 0) log('test files not copied to the base commit (a link on their way there)', { leftOut });
      if (setup !== undefined) return setup;
      return laySetup ? await laySetup() : await runSetup(this.ctx, this.tree, this.recipe);
    })();
    return this.prepared;
  }

  /** One run of the test command on the base commit, set up first if it was not. */
  async run(command: string, watchPytest: boolean): Promise<TestRun & { setup: SetupReport | null }> {
    const setup = await this.prepare();
    return { ...(await runTests(this.ctx, this.tree, command, setup, { watchPytest })), setup };
  }

  /** The base commit's run, summarised for the output and kept as the store keeps it. */
  async result(
    command: string,
    watchPytest: boolean,
    commit: string,
  ): Promise<{ result: BaselineResult; kept: KeptBaseline }> {
    const { tests, log } = this.given;
    const run = await this.run(command, watchPytest);
    const summary: BaselineSummary = {
      commit,
      command,
      failures: run.outcome.failures,
      tests: run.outcome.tests.size,
      exit_code: run.exitCode,
      timed_out: run.timedOut,
      duration_ms: run.durationMs,
      setup: setupState(run.setup),
      ...(run.hung ? { hung: run.hung } : {}),
      ...(tests.digest !== undefined
        ? {
            test_files_digest: tests.digest,
            test_file_failures: failuresIn(tests.tests, run.outcome.failures, run.outcome.details),
          }
        : {}),
    };
    log('baseline run', {
      failures: summary.failures.length,
      tests: summary.tests,
      ms: run.durationMs,
      with_test_files: tests.copied,
    });
    return {
      result: {
        summary,
        seen: seenOf(run.outcome.tests, { exit_code: run.exitCode, timed_out: run.timedOut }),
        outcome: run.outcome,
        ranHere: true,
      },
      kept: keptOf(summary, run.outcome),
    };
  }
}

/** Where a kept baseline may come from, and under which key: the store's, and a retry's previous output. */
export interface KeptSources {
  store?: { store: BaselineStore; row: KeptRow };
  /** The previous validation's baseline (a fixer retry); used when its commit, command and test files match. */
  previous?: BaselineSummary;
  commit: string;
  command: string;
  tests: ChangeTests;
  log: Log;
}

/** A baseline kept by an earlier validation that applies to this one, or undefined (it runs). */
export async function keptBaseline(sources: KeptSources): Promise<BaselineResult | undefined> {
  const { store, previous, commit, command, tests, log } = sources;
  if (store) {
    const found = await store.store.lookup(store.row.key).catch((err: unknown) => {
      log('the kept baselines could not be read', { error: err instanceof Error ? err.message : String(err) });
      return undefined;
    });
    if (found) {
      const ranAt = found.ranAt.toISOString();
      log('baseline reused', { from: 'store', key: store.row.key, ran_at: ranAt });
      const { kept } = found;
      return {
        summary: { ...kept.summary, reused: { from: 'store', key: store.row.key, ran_at: ranAt } },
        seen: seenOf(new Map(kept.tests), kept.summary),
        outcome: outcomeOf(kept),
        ranHere: false,
      };
    }
  }
  if (
    previous &&
    previous.commit === commit &&
    previous.command === command &&
    previous.test_files_digest === tests.digest
  ) {
    log('baseline reused', { from: 'retry', commit });
    return { summary: { ...previous, reused: { from: 'retry' } }, ranHere: false };
  }
  return undefined;
}

/** Keeps a baseline that ran here for later validations, when it is worth keeping; a failure only logs. */
export async function keepBaseline(
  store: { store: BaselineStore; row: KeptRow } | undefined,
  kept: KeptBaseline,
  log: Log,
): Promise<void> {
  if (!store) return;
  if (!keepable(kept)) {
    log('baseline not kept: its setup did not go through, or its run was cut short', { key: store.row.key });
    return;
  }
  await store.store
    .save(store.row, kept)
    .then(() => log('baseline kept', { key: store.row.key }))
    .catch((err: unknown) =>
      log('the baseline could not be kept', { error: err instanceof Error ? err.message : String(err) }),
    );
}
