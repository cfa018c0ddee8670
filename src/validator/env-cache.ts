import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { link, mkdir, readFile, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { linkOnTheWay } from './copies.js';

const run = promisify(execFile);

/**
 * Environments that setup produced, kept on the host per key (src/validator/env-key.ts) under
 * `<data dir>/environments/<key>/`: `home/` (the run's HOME) and `repo/<path>` for each path of
 * the checkout the setup created (node_modules and the like), with `entry.json` and the marker
 * `complete`, written last. An entry is built in a `.tmp-<pid>-…` directory and renamed into
 * place, so a reader sees a whole entry or none, and a build cut short (a SIGKILLed worker)
 * leaves only a temporary directory, never looked up and swept once its process is gone.
 * Entries are laid into a run by copying (`cp -a`: links stay links, never followed), so
 * nothing a run writes reaches them; the sandbox never binds the data dir.
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

/** Where an entry's own files go inside the run tree. */
export interface TreeParts {
  /** The run's checkout copy (RunTree.repo). */
  repo: string;
  /** The run's HOME on the host (workdir/home). */
  home: string;
}

/** `cp -a SRC DEST`: modes, times, links as links, hard links within the copy. */
async function copyTree(src: string, dest: string): Promise<void> {
  await run('cp', ['-a', '--no-target-directory', '--', src, dest], { maxBuffer: 1024 * 1024 });
}

async function sizeOf(dir: string): Promise<number> {
  const { stdout } = await run('du', ['-s', '-b', '--', dir]);
  return Number(stdout.split('\t')[0]) || 0;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
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
   * another's that was renamed into place first.
   */
  async store(
    key: string,
    meta: Pick<EnvEntryMeta, 'account' | 'repository' | 'setup_env_names'>,
    from: TreeParts,
    paths: string[],
  ): Promise<EnvEntry | undefined> {
    if (!KEY_PATTERN.test(key)) throw new Error(`not an environment key: ${key}`);
    const started = performance.now();
    await this.sweep();
    const tmp = join(this.options.dir, `.tmp-${process.pid}-${randomUUID()}`);
    try {
      await mkdir(join(tmp, 'repo'), { recursive: true });
      await copyTree(from.home, join(tmp, 'home'));
      for (const path of paths) {
        await mkdir(dirname(join(tmp, 'repo', path)), { recursive: true });
        await copyTree(join(from.repo, path), join(tmp, 'repo', path));
      }
      const built: EnvEntryMeta = {
        key,
        ...meta,
        paths,
        bytes: await sizeOf(tmp),
        created_at: new Date().toISOString(),
        build_id: randomUUID(),
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
   * Copies the entry into a run tree: HOME replaced, each path of the checkout replaced (never
   * through a link: a path whose directory is a link in the tree is left out). False when the
   * entry changed or went while it was copied (an eviction, a rebuild): the caller runs setup.
   */
  async layInto(entry: EnvEntry, to: TreeParts): Promise<{ ok: boolean; skipped: string[] }> {
    const skipped: string[] = [];
    try {
      await rm(to.home, { recursive: true, force: true });
      await copyTree(join(entry.dir, 'home'), to.home);
      for (const path of entry.paths) {
        if (await linkOnTheWay(to.repo, path)) {
          skipped.push(path);
          continue;
        }
        const dest = join(to.repo, path);
        // rm removes a link itself, never what it points to.
        await rm(dest, { recursive: true, force: true });
        await mkdir(dirname(dest), { recursive: true });
        await copyTree(join(entry.dir, 'repo', path), dest);
      }
    } catch {
      return { ok: false, skipped };
    }
    // Eviction renames an entry away before deleting anything, so the same build still in place
    // after the copy means nothing was deleted under it.
    const still = await this.read(entry.key);
    return { ok: still?.build_id === entry.build_id, skipped };
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
    const left = await this.list();
    this.options.metrics?.bytes(left.reduce((sum, e) => sum + e.bytes, 0));
    return removed;
  }

  /**
   * Removes builds whose process is gone (`.tmp-<pid>-…`, `.trash-<pid>-…`): a worker killed
   * mid-build leaves one. A live process's build is left alone.
   */
  async sweep(): Promise<string[]> {
    const names = await readdir(this.options.dir).catch(() => [] as string[]);
    const swept: string[] = [];
    for (const name of names) {
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
