import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../sandbox/types.js';
import { compareRuns } from './compare.js';
import { openCheckout, prepareCopies } from './copies.js';
import { type NewFailureDetail, newFailureDetails } from './failure-detail.js';
import { namesProgressPlugin, withoutProgressPlugin } from './pytest-progress.js';
import { type PlanSource, type RunnerKind, commandWithTimeouts, detectTestPlan } from './detect.js';
import type { RunOutcome } from './compare.js';
import {
  type HungTest,
  type RunContext,
  type RunLimits,
  type SetupReport,
  type SetupState,
  defaultLimits,
  describeHung,
  probe,
  runSetup,
  runTests,
  setupState,
} from './run.js';

export const NO_TEST_COMMAND = 'no test command found';

/** The baseline's result, kept in the step output so a fixer retry on the same commit need not run it again. */
export interface BaselineSummary {
  commit: string;
  command: string;
  failures: string[];
  tests: number;
  exit_code: number | null;
  timed_out: boolean;
  duration_ms: number;
  /** How its dependency install went. */
  setup: SetupState;
  /** The test the run was stopped at for running past the per-test timeout; the tests after it did not run. */
  hung?: HungTest;
}

/** The validator's result: the step output and what `emend validate --json` prints. */
export interface ValidatorOutput {
  /** The test command as run (with the timeout flags added), or null when none was found. */
  command: string | null;
  /** The dependency install of the change's run, or null when nothing needed installing. */
  setup: SetupReport | null;
  /** No new failures; null when nothing was validated (no tests, or tests that run on neither tree). */
  passed: boolean | null;
  new_failures: string[];
  /** The new failures' messages and innermost frames in the checkout, as the runner printed them. */
  failure_details?: NewFailureDetail[];
  fixed: string[];
  preexisting_failures: string[];
  duration_ms: number;
  /** The end of the change's test output. */
  log_tail: string;
  /** Why passed is null, or anything else a reader should know. */
  message?: string;
  source?: PlanSource;
  runner?: RunnerKind;
  /** Test counts of the change's run. */
  tests?: { passed: number; failed: number; skipped: number };
  /** The test the change's run was stopped at for running past the per-test timeout (it is among the failures). */
  hung?: HungTest;
  baseline?: BaselineSummary;
}

export interface ValidateInput {
  /** The checkout to validate, as it stands (working-tree changes are the change). */
  dir: string;
  /** Its git directory, when it lives outside the files (a task's workspace). */
  gitDir?: string;
  /** The baseline: a revision of that checkout. */
  base: string;
  /** The repository's remembered test command (repo memory), if any. */
  testCommand?: string;
  /** A baseline result from an earlier run; used when its commit and command match. */
  cachedBaseline?: BaselineSummary;
}

export interface ValidateOptions {
  limits?: Partial<RunLimits>;
  signal?: AbortSignal;
  /** Where the temporary copies go (default: the OS temp dir). */
  tmpRoot?: string;
  log?: (message: string, data?: Record<string, unknown>) => void;
}

/**
 * Runs the repository's tests on the baseline and on the change, each in its own copy in
 * the sandbox, in sequence, and compares them: failures present before the change are
 * pre-existing, the others are new; tests failing before and passing now are fixed.
 */
export async function validate(
  sandbox: Sandbox,
  input: ValidateInput,
  options: ValidateOptions = {},
): Promise<ValidatorOutput> {
  const started = performance.now();
  const limits = defaultLimits(sandbox, options.limits);
  const ctx: RunContext = { sandbox, limits, signal: options.signal };
  const log = options.log ?? (() => {});
  const checkout = await openCheckout({ dir: input.dir, gitDir: input.gitDir }, input.base);
  const { commit } = checkout;
  const root = await mkdtemp(join(options.tmpRoot ?? tmpdir(), 'emend-validate-'));
  try {
    const copies = await prepareCopies(checkout, commit, root);
    // The command comes from the unmodified tree, so a change cannot pick its own judge;
    // only when the baseline has no tests at all does the change's tree decide.
    const plan =
      detectTestPlan(copies.baseline.repo, { testCommand: input.testCommand }) ??
      detectTestPlan(copies.change.repo, { testCommand: input.testCommand });
    if (!plan) return noTests(started);
    log('test plan', { runner: plan.runner, source: plan.source, command: plan.command, setup: plan.setup?.command });

    // Setup and probe on the change's copy first: the command it yields decides whether a
    // cached baseline still applies, and then the baseline's setup need not run at all.
    const setup = await runSetup(ctx, copies.change, plan);
    const probed = await probe(ctx, copies.change, plan);
    // The progress plugin needs the read-only bind of its directory, which only bubblewrap gives.
    const canWatch = sandbox.report().kind === 'bubblewrap';
    const timed = commandWithTimeouts(
      plan,
      Math.ceil(limits.testTimeoutMs / 1000),
      Math.ceil(limits.runTimeoutMs / 1000),
      probed,
      { pytestProgress: canWatch },
    );
    const command = canWatch ? timed : withoutProgressPlugin(timed);
    const watchPytest = canWatch && namesProgressPlugin(command);

    let baseline = input.cachedBaseline;
    if (!baseline || baseline.commit !== commit || baseline.command !== command) {
      const baselineSetup = await runSetup(ctx, copies.baseline, plan);
      const run = await runTests(ctx, copies.baseline, command, baselineSetup, { watchPytest });
      baseline = {
        commit,
        command,
        failures: run.outcome.failures,
        tests: run.outcome.tests.size,
        exit_code: run.exitCode,
        timed_out: run.timedOut,
        duration_ms: run.durationMs,
        setup: setupState(baselineSetup),
        ...(run.hung ? { hung: run.hung } : {}),
      };
      log('baseline run', { failures: baseline.failures.length, tests: baseline.tests, ms: run.durationMs });
    } else {
      log('baseline reused', { commit });
    }

    const change = await runTests(ctx, copies.change, command, setup, { watchPytest });
    log('change run', {
      failures: change.outcome.failures.length,
      tests: change.outcome.tests.size,
      ms: change.durationMs,
    });
    const comparison = compareRuns(baseline.failures, change.outcome);
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const s of change.outcome.tests.values()) counts[s]++;

    const judged = verdict(comparison.new_failures, change.outcome, baseline, setup);
    const message =
      [judged.message, ...hungNotes(change.hung, baseline.hung)].filter((m) => m !== undefined).join('; ') || undefined;
    const passed = judged.passed;
    const details = newFailureDetails(comparison.new_failures, change.outcome.details);
    return {
      command,
      setup,
      passed,
      ...comparison,
      ...(details.length > 0 ? { failure_details: details } : {}),
      duration_ms: Math.round(performance.now() - started),
      log_tail: change.logTail,
      ...(message !== undefined ? { message } : {}),
      source: plan.source,
      ...(plan.runner !== undefined ? { runner: plan.runner } : {}),
      tests: counts,
      ...(change.hung ? { hung: change.hung } : {}),
      baseline,
    };
  } finally {
    await rm(root, { recursive: true, force: true }).catch(() => {});
  }
}

/**
 * Passed when nothing fails that did not fail before, but null (not validated) when there
 * was nothing to judge by: no test reported on either tree, or a baseline failing without
 * its dependencies, where failures from the missing install can hide the change's own.
 */
function verdict(
  newFailures: string[],
  change: RunOutcome,
  baseline: BaselineSummary,
  setup: SetupReport | null,
): { passed: boolean | null; message?: string } {
  if (newFailures.length > 0) return { passed: false };
  if (change.tests.size === 0 && baseline.tests === 0 && change.failures.length > 0) {
    return {
      passed: null,
      message:
        `the test command reports no tests and fails the same way on the unmodified checkout ` +
        `(${change.failures[0]}); the change could not be validated`,
    };
  }
  const install = setup
    ? `${setup.command}: ${setup.skipped ?? (setup.timed_out ? 'timed out' : `exit code ${setup.exit_code}`)}`
    : '';
  if ((baseline.setup === 'skipped' || baseline.setup === 'failed') && baseline.failures.length > 0) {
    return {
      passed: null,
      message:
        `the dependencies were not installed (${install}) and the unmodified checkout ` +
        `fails ${baseline.failures.length} test(s) without them; the change could not be validated`,
    };
  }
  if (setupState(setup) === 'skipped' || setupState(setup) === 'failed')
    return { passed: true, message: `the dependencies were not installed (${install}); the tests passed without them` };
  return { passed: true };
}

/**
 * What the runs stopped at a hung test could not show: the tests after it did not run.
 * Not run on the change: neither failed nor fixed. Not run on the baseline: a failure among
 * them on the change counts as new, since nothing shows it failed before (docs/validator.md).
 */
function hungNotes(change: HungTest | undefined, baseline: HungTest | undefined): string[] {
  const notes: string[] = [];
  if (change) notes.push(`the change's run was stopped: ${describeHung(change)}`);
  if (baseline)
    notes.push(
      `the unmodified checkout's run was stopped: ${describeHung(baseline)}, so a failure among them on the ` +
        `change counts as new`,
    );
  return notes;
}

function noTests(started: number): ValidatorOutput {
  return {
    command: null,
    setup: null,
    passed: null,
    new_failures: [],
    fixed: [],
    preexisting_failures: [],
    duration_ms: Math.round(performance.now() - started),
    log_tail: NO_TEST_COMMAND,
    message: NO_TEST_COMMAND,
  };
}
