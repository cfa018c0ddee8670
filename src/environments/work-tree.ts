import { lstatSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sandbox } from '../sandbox/types.js';
import { ConfinedDir } from '../checkout/confined-fs.js';
import { runGit } from '../checkout/git.js';
import { gitEnvOf } from '../checkout/layout.js';
import type { CheckoutDeps } from '../checkout/checkout-deps.js';
import { type RunTree, openCheckout, prepareCopies } from './copies.js';
import { type TestRecipe, runnableCommand } from './detect.js';
import { type PrepareOptions, type TreeSource, prepareTrees } from './prepare-trees.js';
import { testRunTimeouts, runContextOf, testPhase } from './sandboxed.js';
import { setupFailure, setupState } from './setup-phase.js';
import type { SetupState } from '../step-contract/fix.js';
import { describeMissing } from './toolchains.js';

/**
 * A tree to work in with the repository's environment: the agent fixer's commands run here
 * (docs/agent.md, "The environment"). It is a copy of the task's checkout as it stands, set up as
 * the validator sets up its trees — the same test recipe, toolchains, workspace settings and
 * environment cache (a hit lays the cached install in; a miss builds it from the base commit,
 * as the validator would) — so `npm test` or `pytest` find the installed dependencies. What the
 * commands change is carried back to the checkout by `carryBack`, leaving out what the setup
 * produced (node_modules, a build); the checkout stays the one place a change lives.
 */
export interface WorkTree {
  /** workdir: bound at /workspace; repo: the copy of the checkout the commands and the editor change. */
  tree: RunTree;
  /** The checkout's path inside the sandbox. */
  sandboxRepo: string;
  /** The environment, PATH assignment and toolchains a command needs to see the setup's result. */
  env: Record<string, string>;
  pathAssignment: string;
  toolRoots: string[];
  /** The repository's test command as the validator will run it; undefined when none was found. */
  testCommand?: string;
  /** The test recipe it came from (the focused pass builds its command from it). */
  recipe?: TestRecipe;
  /** How the setup went ('none': nothing to set up), and why when it did not. */
  setup: SetupState;
  setupProblem?: string;
  /** The files the tree's change so far adds, modifies or removes against the base commit, less what setup produced. */
  changed(signal?: AbortSignal): Promise<string[]>;
  /** Makes the checkout's files what the commands left in the tree; the paths carried (changed or removed). */
  carryBack(signal?: AbortSignal): Promise<{ carried: string[]; refused: string[] }>;
  dispose(): Promise<void>;
}

export interface WorkTreeInput extends TreeSource {
  /** The task's git directory (outside `dir`). */
  gitDir: string;
}

/** Paths that differ between `workTree` and `base`: modified or deleted tracked files, and new files no .gitignore excludes. */
async function changedPaths(
  deps: CheckoutDeps,
  gitDir: string,
  workTree: string,
  base: string,
  signal?: AbortSignal,
): Promise<Set<string>> {
  const git = gitEnvOf(deps);
  // GIT_OPTIONAL_LOCKS=0: reading another tree must not refresh the task's index.
  const call = { gitDir, workTree, cwd: workTree, signal, env: { GIT_OPTIONAL_LOCKS: '0' } };
  const tracked = await runGit(git, {
    ...call,
    args: ['diff', '--name-only', '-z', '--no-renames', '--end-of-options', base, '--'],
  });
  const untracked = await runGit(git, { ...call, args: ['ls-files', '--others', '--exclude-standard', '-z'] });
  return new Set([...tracked.stdout.split('\0'), ...untracked.stdout.split('\0')].filter(Boolean));
}

export async function prepareWorkTree(
  sandbox: Sandbox,
  deps: CheckoutDeps,
  input: WorkTreeInput,
  options: PrepareOptions & {
    /** Where the tree goes (the task's own directory, so it is removed with the task's checkout). */
    root: string;
    setupTimeoutMs?: number;
  },
): Promise<WorkTree> {
  const log = options.log ?? (() => {});
  const ctx = runContextOf(
    sandbox,
    testRunTimeouts(sandbox, options.setupTimeoutMs ? { setupTimeoutMs: options.setupTimeoutMs } : {}),
    options,
  );
  const checkout = await openCheckout({ dir: input.dir, gitDir: input.gitDir }, input.base);
  const root = await mkdtemp(join(options.root, 'work-tree-'));
  const dispose = () => rm(root, { recursive: true, force: true });
  try {
    const copies = await prepareCopies(checkout, checkout.commit, root);
    const tree = copies.change;
    // What the copy holds before any setup: the change so far (a retry's), which is the commands' to keep or undo.
    const before = await changedPaths(deps, input.gitDir, tree.repo, checkout.commit, options.signal);
    let setup: SetupState = 'none';
    let setupProblem: string | undefined;
    let testCommand: string | undefined;
    let recipe: TestRecipe | undefined;
    const prepared = await prepareTrees({
      ctx,
      tree,
      detectIn: [copies.baseline.repo, tree.repo],
      detect: { testCommand: input.testCommand, settings: input.settings },
      dated: { repo: checkout, commit: checkout.commit },
      toolchainCache: options.toolchainCache,
      cache: options.environments
        ? {
            scope: options.environments,
            baseline: copies.baseline,
            checkout,
            commit: checkout.commit,
            settings: input.settings,
          }
        : undefined,
      log,
    });
    if (prepared.kind !== 'no-recipe') recipe = prepared.environment.recipe;
    if (prepared.kind === 'missing') {
      testCommand = runnableCommand(prepared.environment.recipe);
      setup = 'failed';
      setupProblem = [describeMissing(prepared.missing), ...prepared.environment.notes].join('; ');
    } else if (prepared.kind === 'ready') {
      testCommand = runnableCommand(prepared.environment.recipe);
      setup = setupState(prepared.setups.change);
      setupProblem = setupFailure(prepared.setups.change);
    }
    // The baseline copy only served the cache; the commands work in the change's copy.
    await rm(copies.baseline.workdir, { recursive: true, force: true });
    const afterSetup = await changedPaths(deps, input.gitDir, tree.repo, checkout.commit, options.signal);
    const produced = new Set([...afterSetup].filter((p) => !before.has(p)));
    const phase = testPhase(ctx);
    return {
      tree,
      sandboxRepo: phase.repo,
      env: phase.env,
      pathAssignment: phase.pathAssignment,
      toolRoots: phase.toolRoots,
      testCommand,
      ...(recipe ? { recipe } : {}),
      setup,
      setupProblem,
      dispose,
      changed: async (signal) =>
        [...(await changedPaths(deps, input.gitDir, tree.repo, checkout.commit, signal))]
          .filter((p) => !produced.has(p))
          .sort(),
      carryBack: async (signal) => {
        const inTree = await changedPaths(deps, input.gitDir, tree.repo, checkout.commit, signal);
        const inCheckout = await changedPaths(deps, input.gitDir, input.dir, checkout.commit, signal);
        const from = new ConfinedDir(tree.repo);
        const to = new ConfinedDir(input.dir);
        const carried: string[] = [];
        const refused: string[] = [];
        for (const path of [...new Set([...inTree, ...inCheckout])].sort()) {
          if (produced.has(path)) continue;
          // Read and written through the confined reader; a link the commands made is not followed, and not carried.
          const st = lstatSync(join(tree.repo, path), { throwIfNoEntry: false });
          try {
            if (st?.isSymbolicLink()) {
              refused.push(path);
              continue;
            }
            if (!st) {
              if (to.info(path).kind !== 'missing') {
                to.remove(path);
                carried.push(path);
              }
              continue;
            }
            const read = from.read(path);
            if (!read.ok) {
              refused.push(path);
              continue;
            }
            const now = to.read(path);
            if (now.ok && now.bytes.equals(read.bytes)) continue;
            to.write(path, read.bytes, { mkdirs: true });
            carried.push(path);
          } catch {
            refused.push(path);
          }
        }
        return { carried, refused };
      },
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}
