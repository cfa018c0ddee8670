import { join } from 'node:path';
import semver from 'semver';
import type { Sandbox } from '../sandbox/types.js';
import type { TestRecipe } from './detect.js';
import { nodeCandidates } from './node-versions.js';
import { npmFor } from './npm-era.js';
import type { ToolchainCache } from './toolchain-cache.js';
import {
  type MissingToolchain,
  type Toolchain,
  type ToolchainFacts,
  missingToolchain,
  needsOf,
  probeToolchains,
} from './toolchains.js';

/** Toolchains fetched for this repository: bound read-only into every command, first on PATH. */
export interface ToolchainEnv {
  roots: string[];
  path: string[];
}

export interface Environment {
  /** The recipe with its setup fitted to the sandbox (no pytest-only install where pytest is there; --before). */
  recipe: TestRecipe;
  env: ToolchainEnv;
  facts: ToolchainFacts;
  /** A toolchain the repository needs and the sandbox lacks: nothing is run then. */
  missing?: MissingToolchain;
  /** What did not go as the repository asked (a node version that could not be fetched). */
  notes: string[];
}

export interface EnvironmentOptions {
  /** Fetches node, pnpm and yarn versions the sandbox lacks; without it the sandbox's are used. */
  toolchainCache?: ToolchainCache;
  /** The base commit's date (ISO 8601): an install without a lockfile resolves as of it. */
  baseDate?: string;
  signal?: AbortSignal;
  log?: (message: string, data?: Record<string, unknown>) => void;
}

/**
 * Asks the sandbox for what the recipe needs, fetches what the repository asks for and the
 * sandbox lacks (a node version, pnpm or yarn), and fits the setup to what is there.
 */
export async function prepareEnvironment(
  sandbox: Sandbox,
  detected: TestRecipe,
  options: EnvironmentOptions = {},
): Promise<Environment> {
  const log = options.log ?? (() => {});
  const wants = detected.node;
  const names = new Set<Toolchain>(needsOf(detected).map((n) => n.toolchain));
  if (detected.runner === 'pytest' || detected.runner === 'unittest')
    for (const n of ['venv', 'pytest'] as const) names.add(n);
  if (wants?.packageManager) names.add(wants.packageManager.name);
  const facts = await probeToolchains(sandbox, [...names], { signal: options.signal });
  const env: ToolchainEnv = { roots: [], path: [] };
  const notes: string[] = [];
  const cache = options.toolchainCache;

  const use = async (
    what: string,
    fetchIt: (c: ToolchainCache) => Promise<{ version: string; root: string; bin: string }>,
  ) => {
    if (!cache) {
      notes.push(`${what} is not fetched here (no toolchain cache)`);
      return undefined;
    }
    try {
      const fetched = await fetchIt(cache);
      env.roots.push(fetched.root);
      env.path.push(fetched.bin);
      log('toolchain', { what, version: fetched.version, root: fetched.root });
      return fetched.version;
    } catch (err) {
      notes.push(`${what} could not be fetched (${err instanceof Error ? err.message : String(err)})`);
      return undefined;
    }
  };

  if (wants?.node && !(facts.node && semver.satisfies(facts.node, wants.node.range))) {
    const what = `node ${wants.node.range} (${wants.node.from})`;
    if (!cache) notes.push(`${what} is not fetched here (no toolchain cache)`);
    const version = cache
      ? await nodeThatRuns(sandbox, cache, what, wants.node.range, { env, notes, log, signal: options.signal })
      : undefined;
    if (version) facts.node = version;
    else if (facts.node) notes.push(`the tests ran with the sandbox's node ${facts.node}`);
  }
  // npm as the node and the lockfile need it (src/environments/npm-era.ts).
  const npmChoice =
    names.has('npm') && facts.node ? npmFor(facts.node, facts.npm, wants?.npmLockfileVersion) : undefined;
  if (npmChoice) {
    const version = await use(`npm ${npmChoice.range} (${npmChoice.why})`, (c) =>
      c.packageManager('npm', npmChoice.range, options.signal),
    );
    if (version) facts.npm = version;
  }
  const pm = wants?.packageManager;
  // The version packageManager names, always; a default major only where the sandbox has none.
  if (pm && (pm.from === 'package.json packageManager' || facts[pm.name] === undefined)) {
    // A package manager older than the node the tests run on runs under a node it supports.
    const pmNode = nodeForManager(pm.name, pm.version, facts.node);
    const runWith = pmNode && cache ? await cache.node(pmNode, options.signal).catch(() => undefined) : undefined;
    if (runWith) {
      env.roots.push(runWith.root);
      log('toolchain', { what: `node ${pmNode} for ${pm.name} ${pm.version}`, version: runWith.version });
    }
    const version = await use(`${pm.name} ${pm.version} (${pm.from})`, (c) =>
      c.packageManager(pm.name, pm.version, options.signal, runWith),
    );
    if (version) facts[pm.name] = version;
  }

  let recipe = detected;
  if (recipe.setup?.onlyFor === 'pytest' && facts.pytest !== undefined) recipe = { ...recipe, setup: null };
  if (recipe.setup?.resolveAsOf && options.baseDate)
    recipe = { ...recipe, setup: { ...recipe.setup, command: `${recipe.setup.command} --before=${options.baseDate}` } };
  const missing = missingToolchain(recipe, facts, sandbox.report().networkForSetup);
  return { recipe, env, facts, notes, ...(missing ? { missing } : {}) };
}

/**
 * The node for a range: the newest satisfying it, fetched and asked for its version in the
 * sandbox (an old binary may not run here); where none satisfies it or runs, the nearest that
 * runs, said in a note. Its version as it tells it; undefined (noted) when nothing could be
 * fetched or ran.
 */
async function nodeThatRuns(
  sandbox: Sandbox,
  cache: ToolchainCache,
  what: string,
  range: string,
  into: {
    env: ToolchainEnv;
    notes: string[];
    log: (message: string, data?: Record<string, unknown>) => void;
    signal?: AbortSignal;
  },
): Promise<string | undefined> {
  const { env, notes, log, signal } = into;
  const passed: string[] = [];
  try {
    const candidates = nodeCandidates(await cache.nodeVersions(signal), range);
    if (!candidates[0]?.satisfies) passed.push(`no ${cache.nodePackage} version on the registry satisfies it`);
    for (const candidate of candidates) {
      const fetched = await cache.node(candidate.version, signal);
      // The binary itself, by its path: `node` on PATH could be the sandbox's.
      const ran = await probeToolchains(sandbox, [], {
        toolRoots: [fetched.root],
        ...(signal ? { signal } : {}),
        script: `'${join(fetched.bin, 'node')}' -p '"node=" + process.versions.node'`,
      }).then((facts) => ({ node: facts.node }));
      if (ran.node === undefined) {
        passed.push(`node ${fetched.version} does not run here`);
        continue;
      }
      env.roots.push(fetched.root);
      env.path.push(fetched.bin);
      log('toolchain', { what, version: fetched.version, root: fetched.root });
      if (!candidate.satisfies)
        notes.push(`${what}: ${passed.join('; ')}; the nearest that runs here, node ${fetched.version}, ran the tests`);
      // What it says it is, which is what ran.
      return ran.node;
    }
    notes.push(`${what}: ${passed.join('; ') || 'no node binary on the registry'}`);
  } catch (err) {
    notes.push(`${what} could not be fetched (${err instanceof Error ? err.message : String(err)})`);
  }
  return undefined;
}

/**
 * The node a package manager runs under when the tests' node is one it fails on: pnpm 6 and 7
 * under node 18 and later fail every download with ERR_INVALID_THIS, so they run under node 16
 * (both support it). Undefined: the tests' node serves.
 */
function nodeForManager(name: 'pnpm' | 'yarn', version: string, node: string | undefined): string | undefined {
  const major = semver.minVersion(version)?.major;
  if (name === 'pnpm' && major !== undefined && major < 8 && node !== undefined && semver.major(node) > 16) return '16';
  return undefined;
}
