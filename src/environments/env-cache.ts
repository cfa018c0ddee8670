import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { link, mkdir, readFile, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { processAlive } from '../db/data-dir-lock.js';
import { linkOnTheWay } from './copies.js';
import { copyLeavingOut, copyTree } from './tree-copy.js';

const run = promisify(execFile);

/**
 * Environments that setup produced, kept on the host per key (src/environments/env-key.ts) under
 * `<data dir>/environments/<key>/`: `home/` (the run's HOME) and `repo/<path>` for each path of
 * the checkout the setup created (node_modules and the like), with `entry.json` and the marker
 * `complete`, written last. An entry is built in a `.tmp-<pid>-…` directory and renamed into
 * place, so a reader sees a whole entry or none, and a build cut short (a SIGKILLed worker)
 * leaves only a temporary directory, never looked up and swept once its process is gone.
 * The sandbox never binds the data dir. An entry reaches a run tree as hard links when the
 * service runs as root under bubblewrap: its files then belong to ENTRY_OWNER, a uid the
 * sandbox's user namespace does not map, and nobody may write them, so a command sees another
 * user's read-only files it can neither write nor chmod (it has no capabilities), while the
 * tree's directories are its own (it can still replace a file). Otherwise, and wherever a link
 * cannot be made (another filesystem), by copying. Symbolic links stay links, never followed.
 */
export interface EnvCacheOptions {
  /** `<data dir>/environments`. */
  dir: string;
  /** EMEND_ENV_CACHE_MB in bytes; 0 turns the cache off. Evicted least recently used above it. */
  maxBytes: number;
  metrics?: EnvCacheMetrics;
}

/** What the cache reports, for the service's metrics (src/metrics/registry.ts). */
export interface EnvCacheMetrics {
  hit(): void;
  miss(): void;
  built(seconds: number): void;
  /** The bytes all entries hold, after a build or an eviction. */
  bytes(total: number): void;
}

/** What an entry says about itself (entry.json): no secret, only names. */
export interface EnvEntryMeta {
  key: string;
  /** The workspace id (EnvironmentScope.workspace): named `account` in entry.json and `emend env list --json`, as entries already on disk are. */
  account: string;
  repository: string;
  /** Names of the setup-only variables it was built with (never their values). */
  setup_env_names: string[];
  /** The repository-relative paths it holds besides HOME. */
  paths: string[];
  bytes: number;
  created_at: string;
  /** Changes with every build, so a reader can tell its entry was not replaced while it copied. */
  build_id: string;
  /** Its files belong to ENTRY_OWNER and nobody may write them: safe to hard-link into a sandboxed run. */
  read_only?: boolean;
}

export interface EnvEntry extends EnvEntryMeta {
  dir: string;
  /** When a validation last used it (the marker's modification time). */
  last_used: string;
}

const COMPLETE = 'complete';
const META = 'entry.json';
const SECRET = '.key';
const KEY_PATTERN = /^[0-9a-f]{40}$/;
/** A spare lay's name: `.spare-<key>-<build id>-<uuid>` (prepareSpare). */
const SPARE = '.spare-';
const SPARE_NAME = /^\.spare-([0-9a-f]{40})-([0-9a-f-]{36})-[0-9a-f-]{36}$/;

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Who owns an entry's files when the service runs as root: nobody's uid, which bubblewrap's
 * user namespace does not map (it maps only the sandbox's uid 1000, to root), so inside the
 * sandbox the files are another user's.
 */
export const ENTRY_OWNER = 65534;

/** How an entry reaches a run tree: hard links (read-only entries, bubblewrap, root) or copies. */
export type LayMode = 'link' | 'copy';

/** Where an entry's own files go inside the run tree. */
export interface TreeParts {
  /** The run's checkout copy (RunTree.repo). */
  repo: string;
  /** The run's HOME on the host (workdir/home). */
  home: string;
}

/**
 * The package managers' download caches under HOME: what an install reads, never a test run
 * (npm's and yarn 1's tarballs, pip's wheels, pnpm's store, whose files node_modules already
 * holds as its own links or copies). A tree that only runs tests is laid without them: yarn's
 * cache alone can be tens of thousands of files. Not yarn 2+'s global cache, which Plug'n'Play
 * reads at run time, nor the module caches builds read (Go's, Cargo's, Maven's).
 */
export const DOWNLOAD_CACHES: readonly string[] = [
  '.npm/_cacache',
  '.cache/yarn',
  '.cache/pip',
  '.cache/pnpm',
  '.local/share/pnpm/store',
];

/**
 * Makes a built entry's files ENTRY_OWNER's and unwritable by anyone else: `chown -h`
 * changes links themselves, never what they point to; chmod skips links. Root only; false
 * when it cannot (the entry is then laid by copying).
 */
async function makeReadOnly(dir: string): Promise<boolean> {
  if (process.getuid?.() !== 0) return false;
  try {
    await run('chown', ['-R', '-h', `${ENTRY_OWNER}:${ENTRY_OWNER}`, '--', dir]);
    // Group and others: the sandbox's user is neither the owner nor in its group. The owner's
    // bits stay, so a copy made from the entry (owned by its maker) is writable as usual.
    await run('chmod', ['-R', 'go-w', '--', dir]);
    return true;
  } catch {
    return false;
  }
}

async function sizeOf(dir: string): Promise<number> {
  const { stdout } = await run('du', ['-s', '-b', '--', dir]);
  return Number(stdout.split('\t')[0]) || 0;
}

export class EnvironmentCache {
  private secretPromise: Promise<Buffer> | undefined;

  constructor(private readonly options: EnvCacheOptions) {}

  get enabled(): boolean {
    return this.options.maxBytes > 0;
  }

  get dir(): string {
    return this.options.dir;
  }

  /**
   * The cache's own HMAC secret (`.key`, 0600), made once: keys and the secrets' fingerprints
   * are HMACs under it. Made by linking a written file into place, so two processes agree.
   */
  secret(): Promise<Buffer> {
    this.secretPromise ??= (async () => {
      const path = join(this.options.dir, SECRET);
      await mkdir(this.options.dir, { recursive: true, mode: 0o700 });
      const existing = await readFile(path).catch(() => undefined);
      if (existing && existing.length >= 32) return existing;
      const tmp = join(this.options.dir, `.tmp-${process.pid}-${randomUUID()}.key`);
      await writeFile(tmp, randomBytes(32), { mode: 0o600 });
      await link(tmp, path).catch(() => {});
      await rm(tmp, { force: true });
      return readFile(path);
    })();
    return this.secretPromise;
  }

  /** A complete entry for `key`, or undefined; a hit counts as a use (LRU) and in the metrics. */
  async lookup(key: string): Promise<EnvEntry | undefined> {
    const entry = await this.read(key);
    if (!entry) {
      this.options.metrics?.miss();
      return undefined;
    }
    const now = new Date();
    await utimes(join(entry.dir, COMPLETE), now, now).catch(() => {});
    this.options.metrics?.hit();
    return { ...entry, last_used: now.toISOString() };
  }

  private async read(key: string): Promise<EnvEntry | undefined> {
    if (!KEY_PATTERN.test(key)) return undefined;
    const dir = join(this.options.dir, key);
    try {
      const marker = await readFile(join(dir, COMPLETE), 'utf8');
      const meta = JSON.parse(await readFile(join(dir, META), 'utf8')) as EnvEntryMeta;
      if (meta.key !== key || marker.trim() !== meta.build_id) return undefined;
      const used = await stat(join(dir, COMPLETE));
      return { ...meta, dir, last_used: used.mtime.toISOString() };
    } catch {
      return undefined;
    }
  }

  /**
   * Builds the entry from a run tree whose setup just ran (the base commit's, never a change's):
   * its HOME and the given paths of its checkout. Returns the entry in place: this build's, or
   * another's that was renamed into place first. `link`: the entry's files are hard links to the
   * tree's (made read-only with them), so the tree holds the entry as a linked lay would.
   */
  async store(
    key: string,
    meta: Pick<EnvEntryMeta, 'account' | 'repository' | 'setup_env_names'>,
    from: TreeParts,
    paths: string[],
    mode: LayMode = 'copy',
  ): Promise<EnvEntry | undefined> {
    if (!KEY_PATTERN.test(key)) throw new Error(`not an environment key: ${key}`);
    const started = performance.now();
    await this.sweep();
    const tmp = join(this.options.dir, `.tmp-${process.pid}-${randomUUID()}`);
    try {
      await mkdir(join(tmp, 'repo'), { recursive: true });
      const link = mode === 'link';
      await copyTree(from.home, join(tmp, 'home'), link);
      for (const path of paths) {
        await mkdir(dirname(join(tmp, 'repo', path)), { recursive: true });
        await copyTree(join(from.repo, path), join(tmp, 'repo', path), link);
      }
      const readOnly = await makeReadOnly(tmp);
      const built: EnvEntryMeta = {
        key,
        ...meta,
        paths,
        bytes: await sizeOf(tmp),
        created_at: new Date().toISOString(),
        build_id: randomUUID(),
        ...(readOnly ? { read_only: true } : {}),
      };
      await writeFile(join(tmp, META), `${JSON.stringify(built, null, 2)}\n`);
      // The marker last: an entry without it was never finished.
      await writeFile(join(tmp, COMPLETE), `${built.build_id}\n`);
      const final = join(this.options.dir, key);
      if (!(await this.renameIntoPlace(tmp, final))) return this.read(key);
      this.options.metrics?.built((performance.now() - started) / 1000);
      return { ...built, dir: final, last_used: built.created_at };
    } finally {
      await rm(tmp, { recursive: true, force: true }).catch(() => {});
    }
  }

  /**
   * Renames a finished build into place. Another complete entry there wins (a concurrent build
   * of the same key); a directory there without its marker (an interrupted or foreign one) is
   * moved aside and removed first.
   */
  private async renameIntoPlace(tmp: string, final: string): Promise<boolean> {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await rename(tmp, final);
        return true;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
        const key = final.slice(this.options.dir.length + 1);
        if (await this.read(key)) return false;
        await this.discard(final);
      }
    }
    return false;
  }

  /**
   * Lays the entry into a run tree: HOME replaced, each path of the checkout replaced (never
   * through a link: a path whose directory is a link in the tree is left out); hard links when
   * `mode` is `link` and the entry is read-only, else copies; HOME without the paths of
   * `leaveOut`. A tree that only runs tests (linked, without the download caches) takes a spare
   * lay of the entry when one is ready (prepareSpare), by renaming its parts into place. False
   * when the entry changed or went while it was laid (an eviction, a rebuild): the caller runs setup.
   */
  async layInto(
    entry: EnvEntry,
    to: TreeParts,
    mode: LayMode = 'copy',
    leaveOut: readonly string[] = [],
  ): Promise<{ ok: boolean; skipped: string[]; spare?: true }> {
    const skipped: string[] = [];
    const link = mode === 'link' && entry.read_only === true;
    const spare = link && sameList(leaveOut, DOWNLOAD_CACHES) ? await this.claimSpare(entry) : undefined;
    // A part of the spare renamed into place, or (the spare lacks it, another filesystem) laid as without one.
    const place = async (part: string | undefined, dest: string, lay: () => Promise<void>) => {
      if (
        part !== undefined &&
        (await rename(part, dest).then(
          () => true,
          () => false,
        ))
      )
        return;
      await lay();
    };
    try {
      await rm(to.home, { recursive: true, force: true });
      await place(spare && join(spare, 'home'), to.home, () =>
        copyLeavingOut(join(entry.dir, 'home'), to.home, link, leaveOut),
      );
      for (const path of entry.paths) {
        if (await linkOnTheWay(to.repo, path)) {
          skipped.push(path);
          continue;
        }
        const dest = join(to.repo, path);
        // rm removes a link itself, never what it points to.
        await rm(dest, { recursive: true, force: true });
        await mkdir(dirname(dest), { recursive: true });
        await place(spare && join(spare, 'repo', path), dest, () =>
          copyTree(join(entry.dir, 'repo', path), dest, link),
        );
      }
    } catch {
      return { ok: false, skipped };
    } finally {
      // What is left of it: its top directories, and a path the tree skipped.
      if (spare) await rm(spare, { recursive: true, force: true }).catch(() => {});
    }
    // Eviction renames an entry away before deleting anything, so the same build still in place
    // after the copy means nothing was deleted under it.
    const still = await this.read(entry.key);
    return { ok: still?.build_id === entry.build_id, skipped, ...(spare ? { spare: true as const } : {}) };
  }

  /**
   * Lays the entry ahead, as a tree that only runs tests gets it (hard links, HOME without the
   * download caches), into a spare directory of the cache that the next such lay renames into its
   * tree (docs/environments.md, "Spare lays"). On ext4 making the directories is a linked lay's
   * whole cost (express's node_modules: 999 of them, 0.2-0.5 s), which a spare moves off the
   * validation's path: the service lays one after a validation has given its verdict. At most one
   * spare per build; only a read-only entry's (a spare is links to its files, which nobody may write).
   * It lives in the cache's directory, which no sandbox binds, until a lay takes it. True when made.
   */
  async prepareSpare(entry: EnvEntry): Promise<boolean> {
    if (entry.read_only !== true || (await this.sparesOf(entry)).length > 0) return false;
    const tmp = join(this.options.dir, `.tmp-${process.pid}-${randomUUID()}`);
    try {
      await mkdir(join(tmp, 'repo'), { recursive: true });
      // Aside: one low-priority `cp` at a time, whatever task runs beside it goes first.
      await copyLeavingOut(join(entry.dir, 'home'), join(tmp, 'home'), true, DOWNLOAD_CACHES, { aside: true });
      for (const path of entry.paths) {
        await mkdir(dirname(join(tmp, 'repo', path)), { recursive: true });
        await copyTree(join(entry.dir, 'repo', path), join(tmp, 'repo', path), true, { aside: true });
      }
      // A spare of a build no longer in place would never be taken.
      if ((await this.read(entry.key))?.build_id !== entry.build_id) return false;
      await rename(tmp, join(this.options.dir, `${SPARE}${entry.key}-${entry.build_id}-${randomUUID()}`));
      return true;
    } catch {
      return false;
    } finally {
      await rm(tmp, { recursive: true, force: true }).catch(() => {});
    }
  }

  /** The names of the spare lays of this build of the entry. */
  private async sparesOf(entry: Pick<EnvEntry, 'key' | 'build_id'>): Promise<string[]> {
    const prefix = `${SPARE}${entry.key}-${entry.build_id}-`;
    return (await readdir(this.options.dir).catch(() => [] as string[])).filter((n) => n.startsWith(prefix));
  }

  /**
   * Takes a spare lay of this build, renamed to a temporary name of this process (swept if it dies
   * holding it): a rename succeeds for one taker only, so two lays never share a spare.
   */
  private async claimSpare(entry: EnvEntry): Promise<string | undefined> {
    for (const name of await this.sparesOf(entry)) {
      const mine = join(this.options.dir, `.tmp-${process.pid}-${randomUUID()}`);
      if (
        await rename(join(this.options.dir, name), mine).then(
          () => true,
          () => false,
        )
      )
        return mine;
    }
    return undefined;
  }

  /** Every complete entry, most recently used first. */
  async list(): Promise<EnvEntry[]> {
    const names = await readdir(this.options.dir).catch(() => [] as string[]);
    const entries: EnvEntry[] = [];
    for (const name of names) {
      const entry = await this.read(name);
      if (entry) entries.push(entry);
    }
    return entries.sort((a, b) => (a.last_used < b.last_used ? 1 : a.last_used > b.last_used ? -1 : 0));
  }

  /** Removes the least recently used entries until the rest fit in EMEND_ENV_CACHE_MB. */
  async evict(): Promise<string[]> {
    const entries = await this.list();
    let total = entries.reduce((sum, e) => sum + e.bytes, 0);
    const removed: string[] = [];
    for (const entry of [...entries].reverse()) {
      if (total <= this.options.maxBytes) break;
      await this.discard(entry.dir);
      total -= entry.bytes;
      removed.push(entry.key);
    }
    if (removed.length > 0) await this.sweep();
    this.options.metrics?.bytes(total);
    return removed;
  }

  /** Removes the entries `which` selects; returns their keys. */
  async purge(which: (entry: EnvEntry) => boolean): Promise<string[]> {
    const removed: string[] = [];
    for (const entry of await this.list()) {
      if (!which(entry)) continue;
      await this.discard(entry.dir);
      removed.push(entry.key);
    }
    if (removed.length > 0) await this.sweep();
    const left = await this.list();
    this.options.metrics?.bytes(left.reduce((sum, e) => sum + e.bytes, 0));
    return removed;
  }

  /**
   * Removes builds whose process is gone (`.tmp-<pid>-…`, `.trash-<pid>-…`): a worker killed
   * mid-build leaves one. A live process's build is left alone. And spare lays whose build is no
   * longer in place (evicted, rebuilt), which no lay would take.
   */
  async sweep(): Promise<string[]> {
    const names = await readdir(this.options.dir).catch(() => [] as string[]);
    const swept: string[] = [];
    for (const name of names) {
      const spare = SPARE_NAME.exec(name);
      if (spare) {
        if ((await this.read(spare[1]!))?.build_id === spare[2]) continue;
        await this.discard(join(this.options.dir, name)).catch(() => {});
        swept.push(name);
        continue;
      }
      const m = /^\.(tmp|trash)-(\d+)-/.exec(name);
      if (!m || (Number(m[2]) !== process.pid && processAlive(Number(m[2])))) continue;
      if (Number(m[2]) === process.pid && m[1] === 'tmp') continue;
      await rm(join(this.options.dir, name), { recursive: true, force: true }).catch(() => {});
      swept.push(name);
    }
    return swept;
  }

  /** Moves a directory aside (atomically: readers then miss it), then deletes it. */
  private async discard(dir: string): Promise<void> {
    const trash = join(this.options.dir, `.trash-${process.pid}-${randomUUID()}`);
    try {
      await rename(dir, trash);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    await rm(trash, { recursive: true, force: true });
  }
}
