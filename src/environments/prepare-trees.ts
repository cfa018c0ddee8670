import { type Repo, type RunTree, commitDate } from './copies.js';
import { type DetectOptions, type TestRecipe, detectTestRecipe } from './detect.js';
import { type CacheUse, type EnvironmentScope, type SetupResults, setupTrees } from './env-setup.js';
import { type Environment, prepareEnvironment } from './environment.js';
import { type RunContext, ValidationAborted } from './sandboxed.js';
import type { ToolchainCache } from './toolchain-cache.js';
import type { MissingToolchain } from './toolchains.js';

/** The checkout a caller prepares trees from (the validator's input, the agent fixer's work tree). */
export interface TreeSource {
  /** The checkout, as it stands (working-tree changes are the change). */
  dir: string;
  /** The baseline: a revision of that checkout. */
  base: string;
  /** The repository's remembered test command (repo memory), if any. */
  testCommand?: string;
  /** The account's settings for the repository: its test command comes first, its setup command last. */
  settings?: { testCommand?: string; setupCommand?: string };
}

/** What the validator and the agent fixer's work tree are given to prepare their trees with. */
export interface PrepareOptions {
  signal?: AbortSignal;
  /**
   * Fetches the node, pnpm or yarn version a repository asks for when the sandbox's does not
   * fit (docs/environments.md, "Toolchains"); without it the sandbox's own are used.
   */
  toolchainCache?: ToolchainCache;
  /** Variables for the setup phase only: an operator's package index (PIP_INDEX_URL, npm_config_registry). */
  setupEnv?: Record<string, string>;
  /** The account's variables for the repository (PATCH /v1/me/repos/settings): in the setup and the test phase. */
  env?: Record<string, string>;
  /**
   * The account's setup-only secrets for the repository: in the setup phase's environment only,
   * redacted from its output and report, and no file holding one is left after setup.
   */
  setupSecrets?: Record<string, string>;
  /**
   * The environment cache and whose entries to use (docs/environments.md, "Cached environments"):
   * setup runs once per key, on the base commit, and its result is copied into both trees.
   */
  environments?: EnvironmentScope;
  log?: (message: string, data?: Record<string, unknown>) => void;
}

/**
 * What a tree is prepared with: the validator's two trees (src/validator/validate.ts), the
 * agent fixer's work tree (src/environments/work-tree.ts) and the eval's judged tree
 * (src/eval/judge.ts) all go through the same detect → environment → setup.
 */
export interface PrepareTreesOptions {
  /** The sandbox, limits, abort and variables of the runs; the toolchains fetched are set on it. */
  ctx: RunContext;
  /** The tree whose setup is reported: the change's (its tests, the agent's commands, the judged run). */
  tree: RunTree;
  /** Where the test recipe is looked for, in order: the first tree that has one decides. */
  detectIn: string[];
  /** The repository's remembered test command and the workspace's settings (src/environments/detect.ts). */
  detect?: DetectOptions;
  /** Turns the detected recipe into the one to run (the eval's listed tests); undefined: nothing to run. */
  select?: (detected: TestRecipe | undefined) => TestRecipe | undefined;
  /**
   * Told the recipe once its environment is known, before any setup runs: the validator logs it
   * and reads the environment's key from the untouched base tree then (src/validator/baseline-key.ts).
   */
  onRecipe?: (recipe: TestRecipe, environment: Environment) => void | Promise<void>;
  /** The commit whose date an install without a lockfile, and a fetched toolchain, resolve as of. */
  dated: { repo: Repo; commit: string };
  /** Fetches the node, pnpm or yarn a repository asks for (docs/environments.md, "Toolchains"). */
  toolchainCache?: ToolchainCache;
  /**
   * The eval operator's setup command, replacing the detected install (`null`: no install); the
   * tests still run by the environment's recipe.
   */
  setupCommand?: string | null;
  /** The environment cache (docs/environments.md, "Cached environments"); without it setup runs in `tree`. */
  cache?: CacheUse;
  log?: (message: string, data?: Record<string, unknown>) => void;
}

/** A prepared tree: no test recipe found, a toolchain the sandbox lacks (nothing set up), or set up. */
export type PreparedTrees =
  | { kind: 'no-recipe' }
  | { kind: 'missing'; environment: Environment; missing: MissingToolchain }
  | { kind: 'ready'; environment: Environment; setups: SetupResults };

/**
 * Detects the test recipe, prepares its environment (toolchains, the install fitted to the
 * sandbox) and runs the setup, through the environment cache when there is one. What a
 * toolchain lacks is found before anything runs: a missing one is named, not mistaken for
 * failing tests.
 */
export async function prepareTrees(options: PrepareTreesOptions): Promise<PreparedTrees> {
  const { ctx } = options;
  const log = options.log ?? (() => {});
  let detected: TestRecipe | undefined;
  for (const dir of options.detectIn) {
    detected = detectTestRecipe(dir, options.detect);
    if (detected) break;
  }
  const selected = options.select ? options.select(detected) : detected;
  if (!selected) return { kind: 'no-recipe' };
  const environment = await prepareEnvironment(ctx.sandbox, selected, {
    toolchainCache: options.toolchainCache,
    baseDate: await commitDate(options.dated.repo, options.dated.commit),
    signal: ctx.signal,
    log,
  }).catch((err: unknown) => {
    // A probe the caller's abort cut short: a stop, not a failure of the sandbox.
    throw ctx.signal?.aborted ? new ValidationAborted() : err;
  });
  await options.onRecipe?.(environment.recipe, environment);
  if (environment.missing) return { kind: 'missing', environment, missing: environment.missing };
  ctx.toolchains = environment.env;
  // An operator's entry replaces the detected install: with its command, or with none.
  const operator = options.setupCommand;
  const recipe =
    operator === undefined
      ? environment.recipe
      : { ...environment.recipe, setup: operator === null ? null : { command: operator, offlineCommand: operator } };
  const setups = await setupTrees(ctx, { change: options.tree, recipe, environment, cache: options.cache, log });
  return { kind: 'ready', environment, setups };
}
