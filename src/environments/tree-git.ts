import { spawn } from 'node:child_process';
import { copyFile, constants, mkdir, open, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type GitEnv, runGit } from '../checkout/git.js';

/**
 * The git repository each run tree holds (docs/validator.md, "The copies' git"): what a fresh
 * shallow clone of the base commit has, made from the checkout's objects but sharing nothing
 * with its git directory. The base commit's objects (the commit, its tree, its blobs) and the
 * annotated tags that point at it are packed once per preparation (`packBase`); each tree gets
 * its own copy of that pack (never a hard link, never an alternates file: a test that writes
 * into its `.git` reaches nothing but its own tree), `shallow` naming the base commit, the
 * branch `main` at it, the tags that point at it, no remote, no hooks and git's own config.
 */
export interface BasePack {
  /** A directory holding pack-<hash>.pack and .idx. */
  dir: string;
  commit: string;
  /** refs/tags/* naming the base commit (lightweight or annotated), with the object each names. */
  tags: Array<{ ref: string; object: string }>;
  /** The checkout's `info/exclude`, so the ignored files copied into the trees stay ignored. */
  exclude?: string;
}

/** The branch HEAD is on in every tree: a fresh clone's default branch, at the base commit. */
export const TREE_BRANCH = 'main';

/** How host git reads the checkout: its argv prefix (--git-dir or -C) and working directory. */
export interface SourceGit {
  args: (args: string[]) => string[];
  cwd: string;
  /** The checkout's git directory, where its `info/exclude` is read; undefined when not known. */
  gitDir?: string;
}

/** Runs a source git command and collects its stdout (or writes it to the file `toFile`). */
function source(from: SourceGit, args: string[], input?: string, toFile?: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', from.args(args), {
      cwd: from.cwd,
      stdio: [input === undefined ? 'ignore' : 'pipe', toFile ?? 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let err = '';
    child.stdout?.on('data', (d: Buffer) => out.push(d));
    child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(out).toString('utf8'))
        : reject(new Error(`git ${args[0]} failed: ${err.trim()}`)),
    );
    if (child.stdin) {
      // A git that stops reading early fails by its exit code; the broken pipe says nothing more.
      child.stdin.once('error', () => {});
      child.stdin.end(input);
    }
  });
}

/** What names the base commit besides its objects: the tags pointing at it, the checkout's `info/exclude`. */
export type BaseRefs = Pick<BasePack, 'tags' | 'exclude'> & {
  /** The annotated tags' own objects, which the pack carries. */
  tagObjects: string[];
};

/** The tags that point at `commit` and the checkout's `info/exclude`: what a tree's `.git` holds besides the pack. */
export async function baseRefs(from: SourceGit, commit: string): Promise<BaseRefs> {
  const tagLines = await source(from, [
    'for-each-ref',
    '--format=%(refname) %(objectname) %(objecttype)',
    '--points-at',
    commit,
    'refs/tags',
  ]);
  const tags: BasePack['tags'] = [];
  const tagObjects: string[] = [];
  for (const line of tagLines.split('\n').filter(Boolean)) {
    const [ref, object, type] = line.split(' ');
    if (!ref || !object) continue;
    tags.push({ ref, object });
    if (type === 'tag') tagObjects.push(object);
  }
  const exclude = from.gitDir
    ? await readFile(join(from.gitDir, 'info', 'exclude'), 'utf8').catch(() => undefined)
    : undefined;
  return { tags, tagObjects, ...(exclude !== undefined ? { exclude } : {}) };
}

/**
 * Packs what a shallow clone of `commit` holds, from the checkout (through its alternates, if
 * it has any: the pack is self-contained), into `dir`.
 */
export async function packBase(from: SourceGit, commit: string, dir: string, known?: BaseRefs): Promise<BasePack> {
  await mkdir(dir, { recursive: true });
  const refs = known ?? (await baseRefs(from, commit));
  const objects = await source(from, ['rev-list', '--objects', '--no-object-names', '--max-count=1', commit]);
  // To stdout, then indexed and named here: `pack-objects BASE` writes its pack in the checkout's
  // objects directory and renames it to BASE, which fails (EXDEV) when `dir` is on another
  // filesystem than the checkout (a container's /tmp and its data volume, a tmpfs /tmp).
  const packFile = join(dir, 'base.pack');
  const file = await open(packFile, 'w');
  try {
    await source(
      from,
      ['pack-objects', '-q', '--stdout'],
      `${objects}${refs.tagObjects.map((o) => `${o}\n`).join('')}`,
      file.fd,
    );
  } finally {
    await file.close();
  }
  const hash = (await source(from, ['index-pack', packFile])).trim();
  if (!/^[0-9a-f]+$/.test(hash)) throw new Error(`git index-pack printed no pack name: ${hash.slice(0, 200)}`);
  await rename(packFile, join(dir, `pack-${hash}.pack`));
  await rename(join(dir, 'base.idx'), join(dir, `pack-${hash}.idx`));
  return { dir, commit, tags: refs.tags, ...(refs.exclude !== undefined ? { exclude: refs.exclude } : {}) };
}

/** Copies the pack files of `from` (a pack directory) into `to`: a test may rewrite its own, never another's. */
export async function copyPack(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  for (const name of await readdir(from))
    if (/^pack-[0-9a-f]+\.(pack|idx)$/.test(name))
      await copyFile(join(from, name), join(to, name), constants.COPYFILE_FICLONE);
}

/**
 * Gives a run tree (`repo`, its files already there or not) its own `.git` from the pack:
 * `checkout` writes the base commit's files and index (the baseline); `index` keeps the files
 * as they are and records the base commit's index refreshed against them, so `git status`
 * shows exactly what differs from the base commit (the change, as uncommitted work).
 * Every git call here runs on the host with the service's safe settings (no hooks, no
 * fsmonitor, no user or system config) before any of the repository's code has run.
 */
export async function giveTreeGit(pack: BasePack, repo: string, how: 'checkout' | 'index', env: GitEnv): Promise<void> {
  const gitDir = join(repo, '.git');
  await mkdir(repo, { recursive: true });
  // An empty template: no sample hooks, nothing of the host's templates.
  await runGit(env, { args: ['init', '-q', `--template=${join(pack.dir, 'no-template')}`, repo] });
  await mkdir(join(gitDir, 'hooks'), { recursive: true });
  await mkdir(join(gitDir, 'info'), { recursive: true });
  if (pack.exclude !== undefined) await writeFile(join(gitDir, 'info', 'exclude'), pack.exclude);
  // Copies (a clone where the filesystem can): a test may rewrite its own pack, never another tree's.
  await copyPack(pack.dir, join(gitDir, 'objects', 'pack'));
  await writeFile(join(gitDir, 'shallow'), `${pack.commit}\n`);
  const refs = [
    { ref: `refs/heads/${TREE_BRANCH}`, object: pack.commit },
    ...pack.tags.filter((t) => /^refs\/tags\/[^\s]+$/.test(t.ref)),
  ].sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  await writeFile(join(gitDir, 'packed-refs'), refs.map((r) => `${r.object} ${r.ref}\n`).join(''));
  await writeFile(join(gitDir, 'HEAD'), `ref: refs/heads/${TREE_BRANCH}\n`);
  const call = { gitDir, workTree: repo, cwd: repo, env: { GIT_CEILING_DIRECTORIES: join(repo, '..') } };
  if (how === 'checkout') {
    await runGit(env, { ...call, args: ['read-tree', '--reset', '-u', 'HEAD'] });
    return;
  }
  await runGit(env, { ...call, args: ['read-tree', 'HEAD'] });
  // -q: files that differ (the change) are left as they are; only the clean entries get their stat data.
  await runGit(env, { ...call, args: ['update-index', '-q', '--refresh'] });
}
