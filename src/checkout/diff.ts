import { randomBytes } from 'node:crypto';
import { copyFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskCheckout } from './checkout.js';
import { gitEnvOf } from './layout.js';
import type { CheckoutDeps } from './checkout-deps.js';
import { runGit } from './git.js';

export interface DiffOptions {
  /** Binary patches (`git apply` can then recreate binary files); otherwise "Binary files differ". */
  binary?: boolean;
  signal?: AbortSignal;
}

/**
 * The unified diff of the task's files against its base commit: modified, deleted and new
 * files (those .gitignore does not exclude), paths prefixed a/ and b/.
 *
 * New files are staged into a throwaway index, a copy of the task's own one (so unchanged files
 * are not read again); the task's index and refs are left as they were. git runs with the
 * task's git directory, never a .git that code run on the files could have written.
 */
export async function checkoutDiff(
  deps: CheckoutDeps,
  checkout: Pick<TaskCheckout, 'dir' | 'gitDir' | 'baseCommit'>,
  options: DiffOptions = {},
): Promise<string> {
  const git = gitEnvOf(deps);
  const index = join(checkout.gitDir, `diff-index-${randomBytes(4).toString('hex')}`);
  const call = {
    gitDir: checkout.gitDir,
    workTree: checkout.dir,
    cwd: checkout.dir,
    env: { GIT_INDEX_FILE: index },
    signal: options.signal,
  };
  try {
    const original = join(checkout.gitDir, 'index');
    await copyFile(original, index);
    // The copy keeps the index's own mtime: git trusts an entry whose file stat matches unless
    // the entry is as new as the index file ("racy git"). A copy stamped later would make a
    // same-size edit written in place within the checkout's second look unchanged (no diff).
    const { atime, mtime } = await stat(original);
    await utimes(index, atime, mtime);
    await runGit(git, { ...call, args: ['add', '--all'] });
    const args = [
      'diff',
      '--cached',
      '--no-color',
      '--no-ext-diff',
      '--no-textconv',
      '--src-prefix=a/',
      '--dst-prefix=b/',
    ];
    if (options.binary) args.push('--binary');
    args.push('--end-of-options', checkout.baseCommit, '--');
    return (await runGit(git, { ...call, args })).stdout;
  } finally {
    await rm(index, { force: true });
  }
}

/**
 * Applies a diff (checkoutDiff's, with `binary` for binary files) to the task's files. The patch
 * file sits in the git directory, out of reach of anything run on the files.
 */
export async function applyDiff(
  deps: CheckoutDeps,
  checkout: Pick<TaskCheckout, 'dir' | 'gitDir'>,
  diff: string,
  signal?: AbortSignal,
): Promise<void> {
  const patch = join(checkout.gitDir, `emend-apply-${randomBytes(4).toString('hex')}.patch`);
  await writeFile(patch, diff);
  try {
    await runGit(gitEnvOf(deps), {
      gitDir: checkout.gitDir,
      workTree: checkout.dir,
      cwd: checkout.dir,
      signal,
      args: ['apply', '--whitespace=nowarn', '--', patch],
    });
  } finally {
    await rm(patch, { force: true });
  }
}
