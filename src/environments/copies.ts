import { execFile } from 'node:child_process';
import { cp, lstat, mkdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { baseSpareKey, makeBaseSpare, takeBaseSpare } from './base-spares.js';
import { type BasePack, type BaseRefs, type SourceGit, baseRefs, copyPack, giveTreeGit, packBase } from './tree-git.js';

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

/** Never a `.git` (the checkout's, a submodule's or a nested repository's): each tree has its own. */
const notGit = (src: string) => basename(src) !== '.git';

const copyOptions = { recursive: true, verbatimSymlinks: true, force: true, filter: notGit } as const;

/** What building the trees' git repositories needs: the base commit's pack and a HOME for host git. */
interface TreeGitSource {
  pack: BasePack;
  env: { home: string };
}

/** How host git reads the checkout, for the pack and its refs. */
async function sourceOf(repo: Repo): Promise<SourceGit> {
  return { args: (args) => gitArgs(repo, args), cwd: repo.dir, gitDir: repo.gitDir ?? (await ownGitDir(repo)) };
}

async function treeGitSource(repo: Repo, baseCommit: string, root: string, refs?: BaseRefs): Promise<TreeGitSource> {
  const home = join(root, 'git-home');
  await mkdir(home, { recursive: true });
  const pack = await packBase(await sourceOf(repo), baseCommit, join(root, 'base-pack'), refs);
  return { pack, env: { home } };
}

/** The git directory of a checkout without a separate one (`emend validate` on a local clone). */
async function ownGitDir(repo: Repo): Promise<string | undefined> {
  const out = await git(repo, ['rev-parse', '--absolute-git-dir']).catch(() => '');
  return out.trim() || undefined;
}

/** The checkout as it stands: its files, working-tree changes and untracked files included, never a `.git`. */
const copyFiles = (repo: Repo, tree: RunTree) => cp(repo.dir, tree.repo, copyOptions);

/** Every result of `work`, each awaited to its end even when another fails; then the first failure, if any. */
async function allEnded<T extends readonly unknown[]>(work: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** The two trees a validation runs in (prepareCopies). */
export interface PreparedCopies {
  baseline: RunTree;
  change: RunTree;
  extras: string[];
  /** The baseline's tree was a spare checkout of the base commit (src/environments/base-spares.ts). */
  fromSpare?: true;
  /** With `spares`: checks the base commit out ahead for the next validation; run it before `root` is removed. */
  nextSpare?: () => Promise<void>;
}

/**
 * The two trees the tests run in, each its own copy (tests write files, and the sandbox's
 * workdir is writable):
 * - change: the checkout as it stands, working-tree changes and untracked files included;
 * - baseline: the tracked files at `baseCommit`.
 * Both get the checkout's ignored files (node_modules, a virtualenv, build caches), so the
 * two runs differ only by the change, and the files of its submodules as the checkout has them.
 * Each gets a `.git` of its own (src/environments/tree-git.ts): HEAD at the base commit, clean on
 * the baseline, the change as uncommitted work; never the checkout's git directory. `extras` names
 * what the baseline took from the checkout beyond the base commit's files (its ignored files and
 * submodules): a result of the baseline is only as reusable as they are (src/validator/baseline-key.ts).
 * With `spares` (a directory: the service's validations), the baseline's tree is a spare checkout of the
 * base commit made ahead when one is ready, and `nextSpare` makes the next one.
 */
export async function prepareCopies(
  repo: Repo,
  baseCommit: string,
  root: string,
  options: { spares?: string } = {},
): Promise<PreparedCopies> {
  const baseline = await newTree(root, 'baseline');
  const change = await newTree(root, 'change');
  const listings = () =>
    allEnded<[string, string]>([
      git(repo, ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory']),
      git(repo, ['ls-tree', '-r', '-z', baseCommit]),
    ]);
  const { spares } = options;
  let refs: BaseRefs | undefined;
  if (spares) {
    refs = await baseRefs(await sourceOf(repo), baseCommit);
    if (await takeBaseSpare(spares, baseSpareKey(baseCommit, refs), baseline.repo)) {
      // The spare's pack, copied before anything runs in its tree, is the change's and the next spare's.
      const home = join(root, 'git-home');
      await mkdir(home, { recursive: true });
      const pack: BasePack = {
        dir: join(root, 'base-pack'),
        commit: baseCommit,
        tags: refs.tags,
        ...(refs.exclude !== undefined ? { exclude: refs.exclude } : {}),
      };
      await copyPack(join(baseline.repo, '.git', 'objects', 'pack'), pack.dir);
      const [, [listed, tree]] = await allEnded<[unknown, [string, string]]>([
        copyFiles(repo, change).then(() => giveTreeGit(pack, change.repo, 'index', { home })),
        listings(),
      ]);
      const extras = await copyExtras(repo, baseline, listed, tree);
      return { baseline, change, extras, fromSpare: true, nextSpare: () => makeBaseSpare(pack, spares) };
    }
  }
  // Making files and directories is most of this time, the kernel's, which every core can do: the
  // change's files are copied while the base commit is packed, then both trees get their git at once,
  // the baseline's checkout writing its files (express: 0.42 s one after the other).
  let source: TreeGitSource | undefined;
  try {
    const [packed, , [listed, tree]] = await allEnded<[TreeGitSource, unknown, [string, string]]>([
      treeGitSource(repo, baseCommit, root, refs),
      copyFiles(repo, change),
      listings(),
    ]);
    source = packed;
    await allEnded<[unknown, unknown]>([
      giveTreeGit(packed.pack, change.repo, 'index', packed.env),
      giveTreeGit(packed.pack, baseline.repo, 'checkout', packed.env),
    ]);
    const extras = await copyExtras(repo, baseline, listed, tree);
    return spares
      ? { baseline, change, extras, nextSpare: () => makeBaseSpare(packed.pack, spares) }
      : { baseline, change, extras };
  } finally {
    // Kept for the next spare, which is made from it before `root` goes.
    if (!spares) await rm(source?.pack.dir ?? join(root, 'base-pack'), { recursive: true, force: true });
  }
}

/**
 * Copies into the baseline's tree what the checkout has beyond the base commit's files: its ignored
 * files (`listed`: ls-files' NUL-separated output) and its submodules' files (`tree`: ls-tree's);
 * returns their paths.
 */
async function copyExtras(repo: Repo, baseline: RunTree, listed: string, tree: string): Promise<string[]> {
  const { dir } = repo;
  const ignored = listed.split('\0').filter(Boolean);
  const submodules = tree
    .split('\0')
    .filter((line) => line.startsWith('160000 '))
    .map((line) => line.slice(line.indexOf('\t') + 1));
  const extras: string[] = [];
  for (const entry of [...ignored, ...submodules]) {
    const path = entry.replace(/\/$/, '');
    if (path === '.git' || path.startsWith('.git/')) continue;
    // A directory that is a link in the base commit's tree would lead the copy out of it.
    if (await linkOnTheWay(baseline.repo, path)) continue;
    if (!(await lstat(join(dir, path)).catch(() => undefined))) continue;
    await cp(join(dir, path), join(baseline.repo, path), copyOptions);
    extras.push(path);
  }
  return extras;
}

/**
 * The change's tree alone (the eval's judged tree without the environment cache): the
 * checkout as it stands in `root/tree`, with its own `.git` as prepareCopies gives it.
 */
export async function prepareChangeCopy(repo: Repo, baseCommit: string, root: string): Promise<RunTree> {
  const tree = await newTree(root, 'tree');
  const source = await treeGitSource(repo, baseCommit, root);
  try {
    await copyFiles(repo, tree);
    await giveTreeGit(source.pack, tree.repo, 'index', source.env);
  } finally {
    await rm(source.pack.dir, { recursive: true, force: true });
  }
  return tree;
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
