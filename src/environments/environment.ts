import semver from 'semver';
import type { Sandbox } from '../sandbox/types.js';
import type { TestRecipe } from './detect.js';
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
    const version = await use(`node ${wants.node.range} (${wants.node.from})`, (c) =>
      c.node(wants.node!.range, options.signal),
    );
    if (version) facts.node = version;
    else if (facts.node) notes.push(`the tests ran with the sandbox's node ${facts.node}`);
  }
  const pm = wants?.packageManager;
  // The version packageManager names, always; a default major only where the sandbox has none.
  if (pm && (pm.from === 'package.json packageManager' || facts[pm.name] === undefined)) {
    const version = await use(`${pm.name} ${pm.version} (${pm.from})`, (c) =>
      c.packageManager(pm.name, pm.version, options.signal),
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
