import { execFile, spawn } from 'node:child_process';
import { cp, lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A checkout on the host. With `gitDir` (a task's checkout keeps its git directory outside
 * the files) git is pointed at it explicitly and never reads whatever `.git` the files hold:
 * code that ran on the files could have put a config with an fsmonitor or filter command there.
 */
export interface Repo {
  dir: string;
  gitDir?: string;
}

function gitArgs(repo: Repo, args: string[]): string[] {
  const where = repo.gitDir ? ['--git-dir', repo.gitDir, '--work-tree', repo.dir] : ['-C', repo.dir];
  return [...where, '-c', 'core.fsmonitor=false', ...args];
}

async function git(repo: Repo, args: string[]): Promise<string> {
  const { stdout } = await run('git', gitArgs(repo, args), {
    cwd: repo.dir,
    maxBuffer: 64 * 1024 * 1024,
    encoding: 'utf8',
  });
  return stdout;
}

export class NotACheckoutError extends Error {}

export interface Checkout extends Repo {
  /** The commit the revision names. */
  commit: string;
}

/**
 * The checkout a directory belongs to (a --repo pointing into a subdirectory means its
 * repository) and the commit a revision names in it; a NotACheckoutError says what is wrong.
 */
export async function openCheckout(repo: Repo, rev: string): Promise<Checkout> {
  let dir = repo.dir;
  try {
    if ((await git(repo, ['rev-parse', '--is-inside-work-tree'])).trim() !== 'true') throw new Error('not a work tree');
    if (!repo.gitDir) dir = (await git(repo, ['rev-parse', '--show-toplevel'])).trim();
  } catch {
    throw new NotACheckoutError(`${repo.dir} is not a git checkout`);
  }
  const top = { ...repo, dir };
  try {
    return { ...top, commit: (await git(top, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`])).trim() };
  } catch {
    throw new NotACheckoutError(`${rev} does not name a commit in ${dir}`);
  }
}

/**
 * When `commit` was made (its committer date), in UTC ISO 8601: an install without a
 * lockfile resolves its dependencies as of this date (npm's --before).
 */
export async function commitDate(repo: Repo, commit: string): Promise<string | undefined> {
  const text = (await git(repo, ['show', '-s', '--format=%cI', commit]).catch(() => '')).trim();
  const date = new Date(text);
  return text === '' || Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/**
 * A directory bound at /workspace for one run: the checkout in `repo/` (the command's
 * working directory), and `home/`, the commands' HOME, so what the setup phase installs
 * or downloads (pip's user site, npm's, go's, cargo's, maven's caches) is still there
 * for the test phase and stays out of the tree the tests see.
 */
export interface RunTree {
  /** Host directory bound at /workspace. */
  workdir: string;
  /** Host path of the checkout copy, workdir/repo. */
  repo: string;
}

export const TREE_REPO = 'repo';
export const TREE_HOME = 'home';

async function newTree(root: string, name: string): Promise<RunTree> {
  const workdir = join(root, name);
  await mkdir(join(workdir, TREE_HOME), { recursive: true });
  return { workdir, repo: join(workdir, TREE_REPO) };
}

/**
 * The two trees the tests run in, each its own copy (tests write files, and the sandbox's
 * workdir is writable):
 * - change: the checkout as it stands, working-tree changes and untracked files included;
 * - baseline: the tracked files at `baseCommit`.
 * Both get the checkout's ignored files (node_modules, a virtualenv, build caches), so the
 * two runs differ only by the change. Neither gets .git.
 */
export async function prepareCopies(
  repo: Repo,
  baseCommit: string,
  root: string,
): Promise<{ baseline: RunTree; change: RunTree }> {
  const { dir } = repo;
  const baseline = await newTree(root, 'baseline');
  const change = await newTree(root, 'change');
  const dotGit = join(dir, '.git');
  await cp(dir, change.repo, { recursive: true, verbatimSymlinks: true, filter: (src) => src !== dotGit });
  await mkdir(baseline.repo);
  await extractTree(repo, baseCommit, baseline.repo);
  const ignored = (await git(repo, ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory']))
    .split('\0')
    .filter(Boolean);
  for (const entry of ignored) {
    const path = entry.replace(/\/$/, '');
    if (path === '.git' || path.startsWith('.git/')) continue;
    // A directory that is a link in the base commit's tree would lead the copy out of it.
    if (await linkOnTheWay(baseline.repo, path)) continue;
    await cp(join(dir, path), join(baseline.repo, path), { recursive: true, verbatimSymlinks: true, force: true });
  }
  return { baseline, change };
}

/** `git archive <commit> | tar -x -C dest`. */
function extractTree(repo: Repo, commit: string, dest: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const archive = spawn('git', gitArgs(repo, ['archive', '--format=tar', commit]), {
      cwd: repo.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const tar = spawn('tar', ['-x', '-C', dest], { stdio: ['pipe', 'ignore', 'pipe'] });
    archive.stdout.pipe(tar.stdin);
    let errors = '';
    archive.stderr.on('data', (d) => (errors += d));
    tar.stderr.on('data', (d) => (errors += d));
    let pending = 2;
    let failed = false;
    const done = (what: string) => (code: number | null) => {
      if (code !== 0 && !failed) {
        failed = true;
        reject(new Error(`${what} of ${commit} failed: ${errors.trim()}`));
      }
      if (--pending === 0 && !failed) resolve();
    };
    archive.once('error', reject);
    tar.once('error', reject);
    archive.once('close', done('git archive'));
    tar.once('close', done('tar'));
  });
}

/**
 * The files the working tree adds or modifies against `commit` (committed, staged or not,
 * untracked but not ignored), relative to the checkout; deletions are left out.
 */
export async function changedFiles(repo: Repo, commit: string): Promise<string[]> {
  const diff = await git(repo, ['diff', '--name-only', '-z', '--no-renames', '--diff-filter=AM', commit, '--']);
  const untracked = await git(repo, ['ls-files', '-z', '--others', '--exclude-standard']);
  return [...new Set([...diff.split('\0'), ...untracked.split('\0')].filter(Boolean))].sort();
}

/** Lines of a file's new side that a change touched, 1-based and inclusive. */
export interface LineSpan {
  start: number;
  end: number;
  /** A hunk that only removes lines: start and end are the lines on either side of the gap. */
  gap?: true;
}

/**
 * The lines of `path` the change touched against `commit`: each hunk's new-side lines (a hunk
 * that only removes lines touches the lines on either side of the gap); 'new' when `commit`
 * does not have the file.
 */
export async function touchedLines(repo: Repo, commit: string, path: string): Promise<LineSpan[] | 'new'> {
  const known = await git(repo, ['cat-file', '-e', `${commit}:${path}`]).then(
    () => true,
    () => false,
  );
  if (!known) return 'new';
  const diff = await git(repo, [
    'diff',
    '-U0',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    '--no-renames',
    commit,
    '--',
    path,
  ]);
  const spans: LineSpan[] = [];
  for (const m of diff.matchAll(/^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/gm)) {
    const start = Number(m[1]);
    const count = m[2] === undefined ? 1 : Number(m[2]);
    spans.push(count === 0 ? { start, end: start + 1, gap: true } : { start, end: start + count - 1 });
  }
  return spans;
}

/** Whether a directory of `path` below `root` exists as a link (or as anything but a directory). */
export async function linkOnTheWay(root: string, path: string): Promise<boolean> {
  let at = root;
  for (const part of path.split('/').slice(0, -1)) {
    at = join(at, part);
    const stat = await lstat(at).catch(() => undefined);
    if (!stat) return false;
    if (!stat.isDirectory()) return true;
  }
  return false;
}

/**
 * The paths `commit` tracks, directories included (`git ls-tree -r -t`): what setup finds in
 * the base tree, as against what it creates there (docs/environments.md, "Cached environments").
 */
export async function trackedPaths(repo: Repo, commit: string): Promise<Set<string>> {
  const out = await git(repo, ['ls-tree', '-r', '-t', '-z', '--name-only', commit]);
  return new Set(out.split('\0').filter(Boolean));
}
