import type { TaskCheckout } from '../../../checkout/checkout.js';
import { ConfinedDir } from '../../../checkout/confined-fs.js';
import { runGit } from '../../../checkout/git.js';
import { gitEnvOf } from '../../../checkout/layout.js';
import type { CheckoutDeps } from '../../../checkout/checkout-deps.js';

/**
 * What the agent's commands leave behind that is not part of the change: new files no .gitignore
 * excludes but no fix wants — caches and build output (`__pycache__`, `.pytest_cache`,
 * `node_modules`, …) and binary files. A new text file a command wrote (a test written with a
 * heredoc) stays: bash-only models create files that way. Files the editor created always stay.
 */

const CACHE_DIRS = new Set([
  '__pycache__',
  '.pytest_cache',
  '.mypy_cache',
  '.ruff_cache',
  '.tox',
  '.nox',
  'node_modules',
  '.cache',
  '.eslintcache',
  '.nyc_output',
  'coverage',
  '.next',
  '.turbo',
]);

const isBinary = (data: Buffer) => data.subarray(0, 8_000).includes(0);

/** Removes the artifacts among the checkout's untracked files; the paths removed. */
export async function dropArtifacts(
  deps: CheckoutDeps,
  checkout: Pick<TaskCheckout, 'dir' | 'gitDir'>,
  keep: ReadonlySet<string>,
  signal: AbortSignal,
): Promise<string[]> {
  const listed = await runGit(gitEnvOf(deps), {
    gitDir: checkout.gitDir,
    workTree: checkout.dir,
    cwd: checkout.dir,
    signal,
    args: ['ls-files', '--others', '--exclude-standard', '-z'],
  });
  const fs = new ConfinedDir(checkout.dir);
  const dropped: string[] = [];
  for (const path of listed.stdout.split('\0').filter(Boolean)) {
    if (keep.has(path)) continue;
    const inCache = path.split('/').some((seg) => CACHE_DIRS.has(seg));
    const read = inCache ? undefined : fs.read(path, { firstBytes: 8_000 });
    const binary = read?.ok === true && isBinary(read.bytes);
    if (!inCache && !binary) continue;
    fs.remove(path);
    dropped.push(path);
  }
  return dropped;
}
