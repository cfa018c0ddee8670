import type { RunTree } from '../environments/copies.js';
import { type Probe, type TestRecipe, probeCommand, readProbe } from '../environments/detect.js';
import {
  type RunContext,
  SANDBOX_REPO,
  type Watched,
  normalizeOutput,
  sandboxed,
  tail,
} from '../environments/sandboxed.js';
import { setupFailure } from '../environments/setup-phase.js';
import type { HungTest, SetupReport } from '../step-contract/fix.js';
import { type RunOutcome, judgeRun } from './outcome.js';
import { parseOutput } from './parse.js';
import { ProgressWatch, withoutProgress } from './progress-watch.js';
import { type TestCounts, testCounts } from './summary-counts.js';
import { namesJasmineHelper, writeJasmineHelper } from './jasmine-reporter.js';
import { KARMA_PRELOAD, writeKarmaHooks } from './karma-hooks.js';
import { MOCHA_PRELOAD, writeMochaNames } from './mocha-names.js';
import { clearNamesFile, readNamesFile, withNamePreloads } from './names-file.js';
import { PROGRESS_ENV, PROGRESS_FD, TREE_TOOLS, prepareToolsDir, writeProgressPlugin } from './pytest-progress.js';

/**
 * How long after its per-test timeout a watched pytest test is stopped: long enough for
 * faulthandler's stack dump at the timeout (and pytest-timeout's own stop, where installed)
 * to come out first, so the output shows where the test was stuck.
 */
export const HANG_GRACE_MS = 1_000;

/** Kept per run for parsing: the whole report of a big suite, but not without end. */
const TEST_OUTPUT_BYTES = 8 * 1024 * 1024;

/** Asks the sandbox what the timeout flags depend on (node's version, the pytest-timeout plugin). */
export async function probe(ctx: RunContext, tree: RunTree, recipe: TestRecipe): Promise<Probe> {
  const command = probeCommand(recipe);
  if (command === undefined) return {};
  const result = await sandboxed(ctx, tree, { command, timeoutMs: 30_000, network: false, outputBytes: 64 * 1024 });
  return readProbe(result.stdout);
}

export interface TestRun {
  outcome: RunOutcome;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  /** The end of the output, paths made relative to the checkout. */
  logTail: string;
  /** The whole output (up to the validator's cap), paths made relative to the checkout: the eval's judge reads ids from it. */
  output: string;
  /**
   * How many tests passed, failed and were skipped, by the tests the output names or the runners'
   * totals (./summary-counts.ts); undefined when the output has neither.
   */
  counts?: TestCounts;
  hung?: HungTest;
}

export interface TestOptions {
  /**
   * Watch the run's progress through the pytest plugin and stop it when one test runs past
   * the per-test timeout (plus HANG_GRACE_MS); the command must load the plugin (-p).
   */
  watchPytest?: boolean;
  /** Variables for the test command (the eval harness's per-repository environment, e.g. PYTHONPATH). */
  env?: Record<string, string>;
}

/** Runs the test command once, offline, and judges it from its exit and its output. */
export async function runTests(
  ctx: RunContext,
  tree: RunTree,
  command: string,
  setup: SetupReport | null,
  options: TestOptions = {},
): Promise<TestRun> {
  let watched: Watched | undefined;
  let watch: ProgressWatch | undefined;
  // The run's tools (pytest's progress plugin, jasmine's spec list, mocha's names, Karma's hooks), written after
  // setup and read-only to the tests; only bubblewrap binds the directory where they look for it.
  const bubblewrap = ctx.sandbox.report().kind === 'bubblewrap';
  const tools = bubblewrap || options.watchPytest ? await prepareToolsDir(tree) : undefined;
  if (options.watchPytest && tools) {
    await writeProgressPlugin(tools);
    const stop = new AbortController();
    watch = new ProgressWatch({ limitMs: ctx.limits.testTimeoutMs + HANG_GRACE_MS, onHang: () => stop.abort() });
    watched = { stop, watch, fd: PROGRESS_FD, env: PROGRESS_ENV, readOnlyPaths: [TREE_TOOLS] };
  }
  if (tools && namesJasmineHelper(command)) await writeJasmineHelper(tools);
  // The preloads that name tests (mocha's, Karma's) go into every node of the run.
  const preloads = bubblewrap && tools !== undefined;
  if (preloads) {
    await writeMochaNames(tools);
    await writeKarmaHooks(tools);
    await clearNamesFile(tree);
  }
  const env = { GOPROXY: 'off', ...ctx.testEnv, ...options.env };
  const result = await sandboxed(ctx, tree, {
    command,
    ...(tools ? { readOnlyPaths: [TREE_TOOLS] } : {}),
    timeoutMs: ctx.limits.runTimeoutMs,
    network: false,
    outputBytes: TEST_OUTPUT_BYTES,
    env: preloads ? withNamePreloads(env, [MOCHA_PRELOAD, KARMA_PRELOAD]) : env,
    ...(watched ? { watched } : {}),
  });
  // The names the preloads wrote to the run's own file, read after the run's output.
  const names = preloads ? readNamesFile(tree) : '';
  let output = normalizeOutput(result.stdout + withoutProgress(result.stderr) + (names ? `\n${names}` : ''), [
    SANDBOX_REPO,
    tree.repo,
  ]);
  const hungId = watch?.hung;
  const outcome = judgeRun(
    parseOutput(output),
    {
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      timeoutMs: ctx.limits.runTimeoutMs,
      ...(hungId !== undefined ? { hung: hungId } : {}),
    },
    setupFailure(setup),
  );
  const counts = testCounts(outcome.tests, output);
  let hung: HungTest | undefined;
  if (hungId !== undefined) {
    hung = {
      id: hungId,
      reason: `timed out after ${Math.round(ctx.limits.testTimeoutMs / 1000)} s (killed)`,
      not_run: watch?.notRun ?? null,
    };
    // Said at the end of the output too, where the fixer reads the log.
    output = `${output.replace(/\n*$/, '')}\nemend: ${describeHung(hung)}\n`;
  }
  return {
    outcome,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: Math.round(result.durationMs),
    logTail: tail(output),
    output,
    ...(counts ? { counts } : {}),
    ...(hung ? { hung } : {}),
  };
}

/** A stopped run in words: the test, why, and what it kept from running. */
export function describeHung(hung: HungTest): string {
  const after =
    hung.not_run === null ? 'the tests after it did not run' : `${hung.not_run} test(s) after it did not run`;
  return `${hung.id} ${hung.reason}; ${after}`;
}
