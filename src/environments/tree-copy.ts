import { execFile } from 'node:child_process';
import { chmod, lstat, mkdir, readdir, rm, utimes } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * How a copy runs: `aside` (work off a task's path, such as a spare lay) in one `cp` at the lowest
 * priority, so the kernel's time it takes goes to the task's processes first.
 */
export interface CopyOptions {
  aside?: boolean;
}

const cpIn = (options: CopyOptions, args: string[]) =>
  options.aside
    ? run('nice', ['-n', '19', 'cp', ...args], { maxBuffer: 1024 * 1024 })
    : run('cp', args, { maxBuffer: 1024 * 1024 });

/**
 * `cp` of a tree: symbolic links as links (never followed), modes and times kept, the files'
 * owner not (the copy is the caller's, so a run can write its own copy). `link`: hard links to
 * the files instead of copies (directories are always new), falling back to a copy where the
 * two trees are on different filesystems.
 */
export async function copyTree(src: string, dest: string, link = false, options: CopyOptions = {}): Promise<void> {
  if (link && !options.aside && (await linkShared(src, dest))) return;
  const args = ['-R', '--no-dereference', '--preserve=mode,timestamps,links', '--no-target-directory'];
  if (link) {
    try {
      await cpIn(options, [...args, '--link', '--', src, dest]);
      return;
    } catch {
      await rm(dest, { recursive: true, force: true });
    }
  }
  await cpIn(options, [...args, '--', src, dest]);
}

/** How many `cp` processes link a large directory at once (at most 4, one per core). */
const LINKING_PROCESSES = Math.max(1, Math.min(4, availableParallelism()));
/** A directory with at least this many entries is linked by LINKING_PROCESSES processes. */
const SHARED_FROM = 64;

/**
 * Hard-links a large directory (a node_modules) by several `cp` processes at once, each a share of
 * its entries: making the directories is most of a link copy's time (express's 999 under its
 * node_modules: 0.85 s of the kernel's time on ext4, one process; 0.57 s with two), and the kernel
 * runs them on every core. Each process keeps hard links within its share only, which costs
 * nothing here: every file is a link to the entry's own inode. False for a small directory, a
 * single core, or when a `cp` failed (what they made is removed): the caller then copies as before.
 */
async function linkShared(src: string, dest: string): Promise<boolean> {
  if (LINKING_PROCESSES < 2) return false;
  const info = await lstat(src);
  if (!info.isDirectory()) return false;
  const names = await readdir(src);
  if (names.length < SHARED_FROM) return false;
  try {
    await mkdir(dest);
  } catch {
    // Only into a new directory: an existing one is left to `cp`, which merges into it.
    return false;
  }
  const shares = Array.from({ length: LINKING_PROCESSES }, (_, k) =>
    names.filter((_, i) => i % LINKING_PROCESSES === k).map((name) => join(src, name)),
  );
  const args = ['-R', '--no-dereference', '--preserve=mode,timestamps', '--link', '-t', dest, '--'];
  // Every process is waited for before anything is removed under them.
  const done = await Promise.allSettled(
    shares.map((share) => run('cp', [...args, ...share], { maxBuffer: 1024 * 1024 })),
  );
  try {
    if (done.some((d) => d.status === 'rejected')) throw new Error('cp failed');
    await chmod(dest, info.mode & 0o7777);
    await utimes(dest, info.atime, info.mtime);
    return true;
  } catch {
    await rm(dest, { recursive: true, force: true });
    return false;
  }
}

/**
 * copyTree, but without the paths of `leaveOut` (relative to `src`): the directories on the way
 * to one are made anew and their other entries copied (or linked) one by one.
 */
export async function copyLeavingOut(
  src: string,
  dest: string,
  link: boolean,
  leaveOut: readonly string[],
  options: CopyOptions = {},
): Promise<void> {
  if (leaveOut.length === 0) return copyTree(src, dest, link, options);
  await mkdir(dest, { mode: (await lstat(src)).mode & 0o7777 });
  for (const e of await readdir(src, { withFileTypes: true })) {
    const inner = leaveOut
      .filter((p) => p === e.name || p.startsWith(`${e.name}/`))
      .map((p) => p.slice(e.name.length + 1));
    if (inner.includes('')) continue;
    if (inner.length > 0 && e.isDirectory())
      await copyLeavingOut(join(src, e.name), join(dest, e.name), link, inner, options);
    else await copyTree(join(src, e.name), join(dest, e.name), link, options);
  }
}

/** `rm -rf` of a directory, `aside` at the lowest priority (links are removed, never followed). */
export async function removeTree(dir: string, options: CopyOptions = {}): Promise<void> {
  if (!options.aside) return rm(dir, { recursive: true, force: true });
  await run('nice', ['-n', '19', 'rm', '-rf', '--', dir]).catch(() => rm(dir, { recursive: true, force: true }));
}
