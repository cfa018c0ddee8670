import type { FixPayload, FixStep, StepHelpers } from '../step.js';
import type { RepoRunSettings } from '../../repos/repo-settings.js';
import type { Sandbox } from '../../sandbox/types.js';
import { join } from 'node:path';
import { ValidationAborted } from '../../environments/sandboxed.js';
import { setupFetch } from '../../sandbox/egress-fetch.js';
import { ToolchainCache } from '../../environments/toolchain-cache.js';
import { type ValidateOptions, validate } from '../../validator/validate.js';
import type { EnvironmentScope } from '../../environments/env-setup.js';
import { environmentScopeFor } from './env-scope.js';
import type { BaselineStore } from '../../validator/baseline-store.js';
import { baselineStoreFor } from './baseline-scope.js';
import { setupOutputToTaskLog } from './setup-stream.js';
import { mayRetry } from '../../step-contract/retries.js';
import { lastFailuresOf } from '../../validator/focus-read.js';

/** The part of a task's checkout (src/checkout/checkout.ts) the validator reads. */
export interface ValidatorCheckout {
  /** The checked-out files, with the fixer's change in the working tree. */
  dir: string;
  /** The commit the task started from: the baseline. */
  baseCommit: string;
  /** The git directory, when it lives outside `dir`; git is then pointed at it explicitly. */
  gitDir?: string;
}

/**
 * What the engine gives the validator step for one task. The validator reads the checkout
 * (it never writes to it: both runs happen in temporary copies).
 */
export interface ValidatorContext {
  /** The sandbox every repository command runs in (deps.sandbox). */
  sandbox: Sandbox;
  /** The task's checkout with the fixer's change in it, and the commit the task started from. */
  checkout: ValidatorCheckout;
  /** The test command remembered for this account and repository (repo_memory.test_command). */
  testCommand?: string;
  /** The account's settings for the repository (src/repos/repo-settings.ts), secrets decrypted for this run. */
  repoSettings?: RepoRunSettings;
  /** How long one test may run (EMEND_VALIDATOR_TEST_TIMEOUT_S); the validator's default otherwise. */
  testTimeoutMs?: number;
  /** Fetches the node, pnpm or yarn a repository asks for (docs/environments.md); the sandbox's own without it. */
  toolchainCache?: ToolchainCache;
  /** The environment cache to use; by default the data dir's for the task's account (env-scope.ts); null: none. */
  environments?: EnvironmentScope | null;
  /** The kept baselines to use; by default the database's for the task's workspace (baseline-scope.ts); null: none. */
  baselines?: BaselineStore | null;
}

export type ValidatorContextOf = (
  payload: FixPayload,
  helpers: StepHelpers,
) => ValidatorContext | Promise<ValidatorContext>;

/**
 * The context from the step's helpers: the sandbox of deps and the run's checkout (the
 * engine's checkout lease, whose TaskCheckout has dir, gitDir and baseCommit). No remembered
 * test command: an engine that has one passes its own ValidatorContextOf.
 */
export const validatorContextFromHelpers: ValidatorContextOf = async (_payload, helpers) => ({
  sandbox: helpers.deps.sandbox,
  checkout: await helpers.checkout(),
  testTimeoutMs: helpers.deps.config.validator.testTimeoutMs,
  // Kept in the data dir, fetched under the setup phase's policy: what a setup may reach, the
  // service may fetch for it (src/sandbox/egress-fetch.ts).
  toolchainCache: new ToolchainCache({
    dir: join(helpers.deps.config.dataDir, 'toolchains'),
    fetch: setupFetch(helpers.deps.config.sandbox.setupAllow),
  }),
});

/**
 * The validator as a pipeline step. Its output is the validator's result; `passed` is false
 * when the change brings new failures (the runner then re-runs the fixer with this output
 * while retries remain), and left out when nothing could be validated (no tests).
 */
export function validatorStep(
  contextOf: ValidatorContextOf = validatorContextFromHelpers,
  options: Omit<ValidateOptions, 'signal' | 'log'> = {},
): FixStep<'validator'> {
  return async (payload, helpers) => {
    const context = await contextOf(payload, helpers);
    // The setup's output reaches the task's log (and SSE) as it runs; drained before the step ends.
    const stream = setupOutputToTaskLog(helpers);
    const settings = context.repoSettings;
    // A fixer retry that another retry may follow gets the focused pass first: its failing verdict sends
    // the fixer back sooner. The verdict no retry follows (the task's last) is always the whole suite's.
    const previous = payload.outputs.validator;
    const focused = previous !== undefined && mayRetry(payload.task.retryCount, helpers.limits);
    try {
      const output = await validate(
        context.sandbox,
        {
          dir: context.checkout.dir,
          gitDir: context.checkout.gitDir,
          base: context.checkout.baseCommit,
          testCommand: context.testCommand,
          ...(settings?.testCommand || settings?.setupCommand
            ? { settings: { testCommand: settings.testCommand, setupCommand: settings.setupCommand } }
            : {}),
          // A fixer retry: the previous validator run's baseline (the contract parsed it), if it kept one.
          cachedBaseline: payload.outputs.validator?.baseline,
        },
        {
          ...(context.toolchainCache ? { toolchainCache: context.toolchainCache } : {}),
          // The environment cache (docs/environments.md, "Cached environments"): per account and repository.
          ...(context.environments !== null
            ? { environments: context.environments ?? environmentScopeFor(payload, helpers) }
            : {}),
          ...(settings ? { env: settings.env, setupSecrets: settings.setupSecrets } : {}),
          // Kept baselines (docs/validator.md): per workspace and repository, in the database.
          ...baselinesOf(context.baselines, payload, helpers),
          // The process's test runs: the two trees at once when the machine has room.
          ...(helpers.deps.testRuns ? { runSlots: helpers.deps.testRuns } : {}),
          ...(focused ? { pass: 'focused' as const, lastFailures: lastFailuresOf(previous) } : {}),
          // The copies removed, the environment laid ahead for the next validation: after the verdict.
          ...(helpers.deps.afterWork ? { afterwards: helpers.deps.afterWork.add } : {}),
          ...options,
          limits: {
            ...(context.testTimeoutMs !== undefined ? { testTimeoutMs: context.testTimeoutMs } : {}),
            ...options.limits,
          },
          signal: helpers.signal,
          log: stream.log,
        },
      );
      // No verdict when nothing could be validated (no tests): the task goes on as if it passed.
      return { output, ...(output.passed === null ? {} : { patch: { passed: output.passed } }) };
    } catch (err) {
      if (err instanceof ValidationAborted) throw new Error('the validator was stopped (task killed)');
      throw err;
    } finally {
      await stream.drain();
    }
  };
}

function baselinesOf(
  given: BaselineStore | null | undefined,
  payload: FixPayload,
  helpers: StepHelpers,
): { baselines?: BaselineStore } {
  const store = given === null ? undefined : (given ?? baselineStoreFor(payload, helpers));
  return store ? { baselines: store } : {};
}
