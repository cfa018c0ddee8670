import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DOWNLOAD_CACHES, type EnvEntry, type EnvironmentCache, type LayMode, type TreeParts } from './env-cache.js';
import { type EnvKeyParts, environmentKey, isManifest, manifestDigest } from './env-key.js';
import { type Checkout, type RunTree, TREE_HOME, changedFiles, trackedPaths } from './copies.js';
import type { TestRecipe } from './detect.js';
import type { Environment } from './environment.js';
import type { SetupReport } from '../step-contract/fix.js';
import type { RunContext } from './sandboxed.js';
import { runSetup, setupState } from './setup-phase.js';

/** Whose cache a validation uses: entries are keyed by workspace and repository among the rest. */
export interface EnvironmentScope {
  cache: EnvironmentCache;
  /** The workspace id; `local` for `emend validate`, `eval` for an eval run. */
  workspace: string;
  /** The repository's URL for a task; the checkout's path for `emend validate`. */
  repository: string;
}

export interface SetupResults {
  /** The change's setup, as the output reports it. */
  change: SetupReport | null;
  /** The baseline's, when it already ran here (a cache build); undefined: the baseline run does it. */
  baseline?: SetupReport | null;
  /**
   * A cache hit: lays the entry into the baseline's tree when a run there needs it (once), and gives
   * its report. A validation whose baseline is kept never runs there, so never pays for it.
   */
  layBaseline?: () => Promise<SetupReport | null>;
  /**
   * Lays the entry ahead for the next validation that only runs tests with it (a spare lay:
   * src/environments/env-cache.ts): for the caller to run once its verdict is out, off its path.
   */
  spare?: () => Promise<boolean>;
}

/**
 * The environment cache as a preparation uses it: whose entries, the base commit's tree that
 * builds one, the checkout and commit its key is read from, and the workspace's settings in the key.
 */
export interface CacheUse {
  scope: EnvironmentScope;
  baseline: RunTree;
  checkout: Checkout;
  commit: string;
  settings?: unknown;
}

interface SetupArgs {
  /** The change's tree, whose setup is reported. */
  change: RunTree;
  recipe: TestRecipe;
  environment: Environment;
  cache?: CacheUse;
  log: (message: string, data?: Record<string, unknown>) => void;
}

/** What an environment's key is made of, read before any setup runs in the base commit's tree. */
export interface KeySource {
  scope: Pick<EnvironmentScope, 'workspace' | 'repository'>;
  /** The base commit's tree, before setup (which may rewrite a lockfile) and before the change's test files. */
  baseline: RunTree;
  /** The paths the base commit tracks (trackedPaths). */
  tracked: Set<string>;
  settings?: unknown;
  recipe: TestRecipe;
  environment: Environment;
}

/**
 * The parts of an environment's key (src/environments/env-key.ts): the environment cache hashes
 * them under its own secret, the validator's baseline store (src/validator/baseline-key.ts) under
 * the service's, so that every worker computes the same key for the same environment.
 */
export function environmentKeyParts(ctx: RunContext, source: KeySource): EnvKeyParts {
  const { recipe, environment } = source;
  const network = ctx.sandbox.report();
  return {
    workspace: source.scope.workspace,
    repository: source.scope.repository,
    manifests: manifestDigest(source.baseline.repo, source.tracked),
    setup: [recipe.setup?.command ?? '', recipe.setup?.offlineCommand ?? '', ...(recipe.extraSetup ?? [])],
    settings: source.settings,
    setupEnv: ctx.setupEnv,
    toolchains: { ...environment.facts },
    toolRoots: environment.env.roots,
    sandbox: `${network.kind} setup-network:${network.networkForSetup}`,
  };
}

const parts = (tree: RunTree): TreeParts => ({ repo: tree.repo, home: join(tree.workdir, TREE_HOME) });

/**
 * The setup of both trees, through the environment cache when there is one
 * (docs/environments.md, "Cached environments"). The cache is built from the baseline's setup
 * only, before the change's test files are added to it, and never from the change's tree: a
 * change cannot put anything into an environment a later task gets. A hit is laid into the
 * change's tree, and into the baseline's when a run there needs it; a miss runs the baseline's
 * setup first, stores what it produced and lays that into the change's tree. A change that
 * modifies a manifest or `.emend/setup` runs its own setup over the laid environment, as it would
 * without the cache (never stored).
 */
export async function setupTrees(ctx: RunContext, args: SetupArgs): Promise<SetupResults> {
  const { recipe, log } = args;
  const scope = args.cache?.scope;
  const cache = scope?.cache;
  if (!args.cache || !scope || !cache?.enabled || (!recipe.setup && (recipe.extraSetup ?? []).length === 0))
    return { change: await runSetup(ctx, args.change, recipe) };
  const { checkout, commit } = args.cache;
  const copies = { baseline: args.cache.baseline, change: args.change };

  const tracked = await trackedPaths(checkout, commit);
  const network = ctx.sandbox.report();
  const key = environmentKey(
    await cache.secret(),
    environmentKeyParts(ctx, { ...args.cache, tracked, recipe, environment: args.environment }),
  );
  const ownSetup = (await changedFiles(checkout, commit)).filter(isManifest);
  const changeSetup = async (laid: SetupReport): Promise<SetupReport | null> => {
    if (ownSetup.length === 0) return laid;
    log('the change modifies what setup reads: its own setup runs over the cached environment', { files: ownSetup });
    return runSetup(ctx, copies.change, recipe);
  };

  // Hard links only where a command cannot write through them (src/environments/env-cache.ts):
  // bubblewrap, started as root; and a change that runs its own setup over the environment
  // gets a copy, which its install may rewrite.
  const mode: LayMode = network.kind === 'bubblewrap' && process.getuid?.() === 0 ? 'link' : 'copy';
  // A tree that only runs tests is linked, without the download caches; one that runs its own
  // setup gets a whole copy.
  const changeRunsSetup = ownSetup.length > 0;
  const lay = (laid: EnvEntry, tree: RunTree, runsSetup: boolean) =>
    cache.layInto(laid, parts(tree), runsSetup ? 'copy' : mode, runsSetup ? [] : DOWNLOAD_CACHES);
  // The next validation's change tree, laid ahead where it is laid by links (the warm case).
  const spareOf = (laid: EnvEntry) =>
    mode === 'link' && laid.read_only ? { spare: () => cache.prepareSpare(laid) } : {};

  const started = performance.now();
  const entry = await cache.lookup(key);
  if (entry) {
    // The change's tree now; the baseline's only when a run there needs it: a kept baseline (the
    // warm validation's case) never does, and laying express's into both trees was 0.4-0.6 s.
    const change = await lay(entry, copies.change, changeRunsSetup);
    if (change.ok) {
      const report = laidReport(recipe, ctx, key, 'hit', performance.now() - started);
      log('environment from the cache', {
        key,
        ms: report.duration_ms,
        skipped: change.skipped,
        ...(change.spare ? { spare: true } : {}),
      });
      let baseline: Promise<SetupReport | null> | undefined;
      const layBaseline = () =>
        (baseline ??= (async () => {
          const laidAt = performance.now();
          if ((await lay(entry, copies.baseline, false)).ok) {
            const laid = laidReport(recipe, ctx, key, 'hit', performance.now() - laidAt);
            log('environment from the cache laid into the baseline tree', { key, ms: laid.duration_ms });
            return laid;
          }
          // Evicted since: the baseline's tree is set up as without the cache.
          log('the cached environment went before the baseline was laid; its setup runs', { key });
          return runSetup(ctx, copies.baseline, recipe);
        })());
      return { change: await changeSetup(report), layBaseline, ...spareOf(entry) };
    }
    log('the cached environment went while it was copied; setup runs', { key });
  }

  // A miss: the base commit's setup builds the entry, and only what it created is kept.
  const before = await untrackedTops(copies.baseline.repo, tracked);
  const baseline = await runSetup(ctx, copies.baseline, recipe);
  if (setupState(baseline) !== 'ok') return { change: await runSetup(ctx, copies.change, recipe), baseline };
  const after = await untrackedTops(copies.baseline.repo, tracked);
  const produced = [...after].filter(([path, mtime]) => before.get(path) !== mtime).map(([path]) => path);
  const stored = await cache
    .store(
      key,
      {
        account: scope.workspace,
        repository: scope.repository,
        setup_env_names: Object.keys(ctx.setupEnv ?? {}).sort(),
      },
      parts(copies.baseline),
      produced,
      mode,
    )
    .catch((err: unknown) => {
      log('the environment could not be stored', { key, error: err instanceof Error ? err.message : String(err) });
      return undefined;
    });
  let change: SetupReport | null | undefined;
  if (stored) {
    const laidAt = performance.now();
    const laid = await lay(stored, copies.change, changeRunsSetup);
    log('environment stored', { key, paths: produced, bytes: stored.bytes });
    if (laid.ok)
      change = await changeSetup({
        ...baseline!,
        environment: { key, cache: 'built' },
        // The install that built it (on the base tree) and laying it into this one: what a cold
        // setup cost, which the report is read for (bench/environments.ts, RESULTS.md).
        duration_ms: baseline!.duration_ms + Math.round(performance.now() - laidAt),
      });
  }
  await cache.evict().catch(() => []);
  return {
    change: change !== undefined ? change : await runSetup(ctx, copies.change, recipe),
    baseline,
    ...(stored && change !== undefined ? spareOf(stored) : {}),
  };
}

function laidReport(recipe: TestRecipe, ctx: RunContext, key: string, how: 'hit', ms: number): SetupReport {
  const command = [recipe.setup?.command, ...(recipe.extraSetup ?? [])].filter((c) => c !== undefined).join(' && ');
  return {
    command,
    network: ctx.sandbox.report().networkForSetup,
    exit_code: 0,
    duration_ms: Math.round(ms),
    environment: { key, cache: how },
  };
}

/**
 * The topmost paths of a tree the base commit does not track (node_modules, a build directory,
 * `packages/a/node_modules`), each with its modification time; tracked directories are walked,
 * untracked ones are not entered, links are never followed.
 */
async function untrackedTops(root: string, tracked: Set<string>): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(rel === '' ? root : join(root, rel), { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const path = rel === '' ? e.name : `${rel}/${e.name}`;
      if (path === '.git') continue;
      if (tracked.has(path)) {
        if (e.isDirectory()) await walk(path);
        continue;
      }
      const st = await lstat(join(root, path)).catch(() => undefined);
      if (st) found.set(path, st.mtimeMs);
    }
  };
  await walk('');
  return found;
}
