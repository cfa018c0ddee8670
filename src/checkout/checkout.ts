import { chmod, lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { TaskCheckoutError } from './errors.js';
import { gitEnvOf, taskWorkDirOf } from './layout.js';
import type { CheckoutDeps } from './checkout-deps.js';
import { GitError, runGit } from './git.js';
import { withMirror } from './mirrors.js';

export interface CheckoutRequest {
  taskId: string;
  repoUrl: string;
  baseBranch: string;
  /** The code-host token for a private repository; it reaches git as an HTTP header only. */
  token?: string;
  /** The HTTP Basic user the host expects with the token (HostKind.gitUser). */
  tokenUser?: string;
  signal?: AbortSignal;
}

export interface TaskCheckout {
  /** <dataDir>/work/<taskId>: everything of this task's, removed by dispose. */
  root: string;
  /**
   * The checked-out files (root/tree): what steps edit. Its `.git` is a file pointing at gitDir,
   * so `git -C dir` works on the host; the repository itself is not inside.
   */
  dir: string;
  /** The task's git directory (root/git), outside `dir` so sandboxed code can neither read nor rewrite it. */
  gitDir: string;
  baseBranch: string;
  /** The commit `dir` was checked out at. */
  baseCommit: string;
  dispose(): Promise<void>;
}

const TASK_ID = /^[A-Za-z0-9_-]{1,100}$/;

export function checkoutPaths(dataDir: string, taskId: string): { root: string; dir: string; gitDir: string } {
  if (!TASK_ID.test(taskId)) throw new TaskCheckoutError('bad_request', `task id "${taskId}" cannot name a directory`);
  const root = taskWorkDirOf(dataDir, taskId);
  return { root, dir: join(root, 'tree'), gitDir: join(root, 'git') };
}

/**
 * Fetches the repository's mirror and checks `baseBranch` out of it into the task's own
 * directory. A directory left by an earlier run of the same task is replaced.
 *
 * The task gets a local clone of the mirror (objects hard-linked, so it costs no copy) with its
 * git directory beside the files rather than inside them (the files' `.git` is only a pointer):
 * - it is self-contained: no alternates file or worktree link back into the mirror, so a
 *   repack of the mirror cannot pull objects from under a running task;
 * - hard links are safe as long as nothing sandboxed can reach the git directory to rewrite an
 *   object file in place (git itself never does): bind `dir`, never `root` or `gitDir`;
 * - host-side git given gitDir explicitly (as checkoutDiff does) reads a config and hooks that
 *   only we wrote, even if whatever edited the files replaced the `.git` pointer with a
 *   directory of its own (core.fsmonitor, filter drivers and hooks there would run commands).
 */
export async function prepareCheckout(deps: CheckoutDeps, req: CheckoutRequest): Promise<TaskCheckout> {
  const { root, dir, gitDir } = checkoutPaths(deps.dataDir, req.taskId);
  const branch = await checkBranchName(deps, req.baseBranch);
  await removeDir(root);
  const git = gitEnvOf(deps);
  const started = performance.now();
  try {
    const baseCommit = await withMirror(deps, req, async (mirror) => {
      const commit = await resolveBranch(deps, mirror.path, branch, req.repoUrl);
      await mkdir(root, { recursive: true, mode: 0o700 });
      // Under the mirror's lock: no fetch moves or repacks the mirror while it is cloned.
      await runGit(git, {
        args: [
          'clone',
          '--quiet',
          '--no-checkout',
          '--template=',
          '--single-branch',
          '--branch',
          branch,
          '--separate-git-dir',
          gitDir,
          '--',
          mirror.path,
          dir,
        ],
        allowFile: true,
        safeDirs: [mirror.path],
        signal: req.signal,
      });
      return commit;
    });
    const call = { gitDir, signal: req.signal };
    await runGit(git, { ...call, args: ['config', 'core.worktree', dir] });
    await runGit(git, { ...call, args: ['remote', 'remove', 'origin'] });
    await runGit(git, { ...call, workTree: dir, cwd: dir, args: ['checkout', '--quiet', '--force', branch, '--'] });
    const head = (await runGit(git, { ...call, args: ['rev-parse', 'HEAD'] })).stdout.trim();
    if (head !== baseCommit)
      throw new TaskCheckoutError('git', `checked out ${head} but the mirror had ${branch} at ${baseCommit}`);
    deps.log.info(
      { task: req.taskId, repo: req.repoUrl, branch, commit: baseCommit, ms: Math.round(performance.now() - started) },
      'checkout ready',
    );
    return { root, dir, gitDir, baseBranch: branch, baseCommit, dispose: () => removeDir(root) };
  } catch (err) {
    await removeDir(root);
    if (err instanceof TaskCheckoutError) throw err;
    if (err instanceof GitError) {
      if (err.aborted) throw new TaskCheckoutError('aborted', 'stopped: the task was cancelled');
      throw new TaskCheckoutError('git', `checking out ${branch} of ${req.repoUrl} failed: ${err.message}`);
    }
    throw err;
  }
}

/** Removes a task's directory, e.g. one left by a worker that died; the same as TaskCheckout.dispose. */
export function removeCheckout(dataDir: string, taskId: string): Promise<void> {
  return removeDir(checkoutPaths(dataDir, taskId).root);
}

async function checkBranchName(deps: CheckoutDeps, name: string): Promise<string> {
  // refs/heads/<name> as a whole is checked, so a name like "-x" or "@{-1}" cannot act as an option or a shorthand.
  const ok =
    name.length > 0 &&
    !name.startsWith('-') &&
    (await runGit(gitEnvOf(deps), { args: ['check-ref-format', `refs/heads/${name}`] }).then(
      () => true,
      () => false,
    ));
  if (!ok) throw new TaskCheckoutError('bad_request', `base branch "${name}" is not a valid branch name`);
  return name;
}

async function resolveBranch(deps: CheckoutDeps, mirror: string, branch: string, repoUrl: string): Promise<string> {
  try {
    const { stdout } = await runGit(gitEnvOf(deps), {
      args: ['rev-parse', '--verify', '--quiet', '--end-of-options', `refs/heads/${branch}^{commit}`],
      gitDir: mirror,
    });
    return stdout.trim();
  } catch (err) {
    if (err instanceof GitError && err.exitCode === 1) {
      throw new TaskCheckoutError('missing_branch', `base branch "${branch}" does not exist in ${repoUrl}`);
    }
    throw err;
  }
}

/**
 * fs.rm unlinks symlinks rather than following them, so links planted in the tree cannot
 * lead the removal outside it. Sandboxed code may have left directories without write
 * permission: on EACCES those are opened up (again without following links) and it retries.
 */
async function removeDir(path: string): Promise<void> {
  try {
    await rm(path, { recursive: true, force: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EACCES' && code !== 'EPERM') throw err;
    await openUp(path);
    await rm(path, { recursive: true, force: true });
  }
}

async function openUp(path: string): Promise<void> {
  const stat = await lstat(path).catch(() => undefined);
  if (!stat?.isDirectory()) return;
  await chmod(path, 0o700);
  for (const entry of await readdir(path)) await openUp(join(path, entry));
}

/**
 * A tree of its own for one of a step's attempts (docs/agent.md, "Attempts"): a local clone of the
 * task's git directory (objects hard-linked) at the task's base commit, in root/attempts/<n> with
 * its git directory beside its files as the task's is. Removed by its dispose, and with the task's.
 */
export async function attemptCheckout(
  deps: CheckoutDeps,
  from: TaskCheckout,
  n: number,
  signal?: AbortSignal,
): Promise<TaskCheckout> {
  if (!Number.isInteger(n) || n < 1) throw new TaskCheckoutError('bad_request', `attempt ${n} cannot name a directory`);
  const root = join(from.root, 'attempts', String(n));
  const dir = join(root, 'tree');
  const gitDir = join(root, 'git');
  await removeDir(root);
  const git = gitEnvOf(deps);
  try {
    await mkdir(root, { recursive: true, mode: 0o700 });
    await runGit(git, {
      args: ['clone', '--quiet', '--no-checkout', '--template=', '--separate-git-dir', gitDir, '--', from.gitDir, dir],
      allowFile: true,
      safeDirs: [from.gitDir],
      signal,
    });
    const call = { gitDir, signal };
    await runGit(git, { ...call, args: ['config', 'core.worktree', dir] });
    await runGit(git, { ...call, args: ['remote', 'remove', 'origin'] });
    await runGit(git, {
      ...call,
      workTree: dir,
      cwd: dir,
      args: ['checkout', '--quiet', '--force', '--detach', from.baseCommit, '--'],
    });
    return {
      root,
      dir,
      gitDir,
      baseBranch: from.baseBranch,
      baseCommit: from.baseCommit,
      dispose: () => removeDir(root),
    };
  } catch (err) {
    await removeDir(root);
    if (err instanceof GitError && err.aborted)
      throw new TaskCheckoutError('aborted', 'stopped: the task was cancelled');
    throw err;
  }
}
