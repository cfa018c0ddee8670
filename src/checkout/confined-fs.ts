import {
  type Stats,
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  ftruncateSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * Files of a directory tree the service does not trust (a task's checkout, a copy of it, a
 * site's scratch directory), read and written on the host without ever leaving the tree.
 *
 * A repository is hostile input: it can hold symlinks to /etc/passwd, /proc/self/environ or
 * the data dir's secret key, FIFOs that block a read for ever, and (once code has run on it)
 * links swapped in while we look. So every operation here:
 * - opens the path with O_PATH (no data is read, a device or FIFO is not really opened), asks
 *   the kernel where the descriptor really is (/proc/self/fd/N) and refuses it unless that is
 *   inside the root (and not under an excluded top-level name such as .git);
 * - then works through that same descriptor (`/proc/self/fd/N` reopened for reading or
 *   writing, or as the directory to create, list or remove in), so a link swapped in between
 *   the check and the use cannot redirect it;
 * - reads and writes regular files only.
 * Links whose target stays inside keep working; a link out is reported as `outside` with the
 * link's own text, never followed.
 *
 * Where /proc/self/fd is not available (not Linux) the same checks run on realpath() results:
 * the link check still holds, the swap-between-check-and-use guarantee does not.
 */

/** What a repository-relative path is, seen from inside the tree. */
export type PathInfo =
  | { kind: 'file'; size: number }
  | { kind: 'dir' }
  /**
   * Resolves outside the root, or into an excluded name (`into`); `link` is the symlink that
   * leads there and `target` its text.
   */
  | { kind: 'outside'; link?: string; target?: string; into?: string }
  | { kind: 'special'; what: 'fifo' | 'socket' | 'device' }
  | { kind: 'missing' }
  /** Not a relative path inside the tree at all (absolute, `..`, NUL), or a link loop. */
  | { kind: 'invalid'; reason: string };

/** `size`: the file's size when it was read (more than `bytes` holds when only its head was asked for). */
export type ReadResult =
  | { ok: true; bytes: Buffer; size: number }
  | { ok: false; info: PathInfo | { kind: 'too-large'; size: number } };

export interface DirEntry {
  name: string;
  /** The entry itself, links not followed. */
  type: 'file' | 'dir' | 'symlink' | 'special';
}

export class ConfinedPathError extends Error {
  constructor(
    readonly path: string,
    readonly info: PathInfo | { kind: 'too-large'; size: number },
    message: string,
  ) {
    super(message);
    this.name = 'ConfinedPathError';
  }
}

export interface ConfinedOptions {
  /** Top-level names treated as outside the tree (case-insensitive), e.g. `.git`. */
  exclude?: string[];
}

// O_PATH is not in fs.constants; its value is the generic Linux one on every architecture Node
// runs on. Opening with it reads nothing and does not open a device or a FIFO for real.
const O_PATH = 0o10000000;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_NOCTTY = constants.O_NOCTTY ?? 0;
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** Whether this process can open O_PATH descriptors and see where they point. */
function probeProcFd(): boolean {
  if (process.platform !== 'linux') return false;
  let fd: number | undefined;
  try {
    fd = openSync('/', O_PATH);
    return readlinkSync(`/proc/self/fd/${fd}`) === '/' && fstatSync(fd).isDirectory();
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function typeOf(st: Stats): PathInfo {
  if (st.isFile()) return { kind: 'file', size: st.size };
  if (st.isDirectory()) return { kind: 'dir' };
  if (st.isFIFO()) return { kind: 'special', what: 'fifo' };
  if (st.isSocket()) return { kind: 'special', what: 'socket' };
  return { kind: 'special', what: 'device' };
}

/** A checked place: the descriptor (or, without /proc, the real path) every use goes through. */
interface Held {
  info: PathInfo;
  /** `/proc/self/fd/N` of the O_PATH descriptor, or the checked real path. */
  via: string;
  fd?: number;
}

/** One tree's files, confined to it. `root` must exist; it is resolved once, here. */
export class ConfinedDir {
  readonly root: string;
  private readonly exclude: Set<string>;
  private readonly procFd: boolean;

  constructor(root: string, options: ConfinedOptions = {}) {
    this.root = realpathSync(root);
    this.exclude = new Set((options.exclude ?? []).map((n) => n.toLowerCase()));
    this.procFd = probeProcFd();
  }

  /** The path's segments if it is relative and stays inside lexically, else why not. */
  segments(path: string): string[] | { reason: string } {
    if (path.includes('\0')) return { reason: 'the path contains a NUL character' };
    // Only '/' separates: on Linux a backslash or a drive-like "C:" is part of a file name
    // (a model's Windows-style paths are normalised by its callers, e.g. src/edits/paths.ts).
    if (path.startsWith('/')) return { reason: 'absolute paths are refused' };
    const segs = path.split('/').filter((s) => s !== '' && s !== '.');
    if (segs.includes('..')) return { reason: '".." is refused in paths' };
    return segs;
  }

  /** Whether a real (resolved) absolute path is inside the root and not under an excluded name. */
  private contains(real: string): boolean {
    const rel = relative(this.root, real);
    if (rel === '') return true;
    if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return false;
    return !this.exclude.has(rel.split(sep)[0]!.toLowerCase());
  }

  /** The excluded top-level name a real path inside the root lies under, if any. */
  private excludedName(real: string): string | undefined {
    const rel = relative(this.root, real);
    if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
    const top = rel.split(sep)[0]!;
    return this.exclude.has(top.toLowerCase()) ? top : undefined;
  }

  private outside(segs: string[], real: string): PathInfo {
    const into = this.excludedName(real);
    return { kind: 'outside', ...this.escapingLink(segs), ...(into ? { into } : {}) };
  }

  /**
   * The symlink that takes `segs` out of the tree, and its text, found by reading link texts
   * only (never what they point at), for telling the model and the logs what was refused.
   */
  private escapingLink(segs: string[]): { link?: string; target?: string } {
    for (let i = 1; i <= segs.length; i++) {
      const abs = join(this.root, ...segs.slice(0, i));
      try {
        if (!lstatSync(abs).isSymbolicLink()) continue;
        let real: string | undefined;
        try {
          real = realpathSync(abs);
        } catch {
          real = undefined;
        }
        if (real === undefined || !this.contains(real))
          return { link: segs.slice(0, i).join('/'), target: readlinkSync(abs) };
      } catch {
        break;
      }
    }
    return {};
  }

  /** Opens and checks a path; the caller must release() what it gets. */
  private hold(path: string): Held {
    const segs = this.segments(path);
    if (!Array.isArray(segs)) return { info: { kind: 'invalid', reason: segs.reason }, via: '' };
    if (segs.length > 0 && this.exclude.has(segs[0]!.toLowerCase()))
      return { info: { kind: 'outside', into: segs[0]! }, via: '' };
    const abs = join(this.root, ...segs);
    if (this.procFd) {
      let fd: number;
      try {
        fd = openSync(abs, O_PATH);
      } catch (err) {
        return { info: this.openFailure(err, segs), via: '' };
      }
      const via = `/proc/self/fd/${fd}`;
      let real: string;
      try {
        real = readlinkSync(via);
      } catch {
        closeSync(fd);
        return { info: { kind: 'invalid', reason: 'cannot tell where the path leads' }, via: '' };
      }
      if (!this.contains(real)) {
        closeSync(fd);
        return { info: this.outside(segs, real), via: '' };
      }
      return { info: typeOf(fstatSync(fd)), via, fd };
    }
    let real: string;
    try {
      real = realpathSync(abs);
    } catch (err) {
      return { info: this.openFailure(err, segs), via: '' };
    }
    if (!this.contains(real)) return { info: this.outside(segs, real), via: '' };
    return { info: typeOf(lstatSync(real)), via: real };
  }

  private openFailure(err: unknown, segs: string[]): PathInfo {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return { kind: 'invalid', reason: 'a loop of symlinks' };
    if (code === 'EACCES' || code === 'EPERM') return { kind: 'invalid', reason: 'permission denied' };
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      // A dangling link is refused, not "missing": writing through it would create its target, wherever that is.
      const escaping = this.escapingLink(segs);
      if (!escaping.link) return { kind: 'missing' };
      const lexical = resolve(dirname(join(this.root, escaping.link)), escaping.target!);
      return this.contains(lexical)
        ? { kind: 'invalid', reason: `${escaping.link} is a symlink to a missing target` }
        : { kind: 'outside', ...escaping };
    }
    throw err;
  }

  private release(held: Held) {
    if (held.fd !== undefined) closeSync(held.fd);
  }

  private with<T>(path: string, use: (held: Held) => T): T {
    const held = this.hold(path);
    try {
      return use(held);
    } finally {
      this.release(held);
    }
  }

  /** What `path` is, links followed only while they stay inside. */
  info(path: string): PathInfo {
    return this.with(path, (h) => h.info);
  }

  /**
   * A regular file's bytes, through the descriptor that was checked. `maxBytes`: a larger file
   * is refused as too-large; `firstBytes`: only the file's first bytes are read (its head).
   */
  read(path: string, options: { maxBytes?: number; firstBytes?: number } = {}): ReadResult {
    return this.with(path, (h) => {
      if (h.info.kind !== 'file') return { ok: false, info: h.info };
      const cap = options.maxBytes ?? Number.MAX_SAFE_INTEGER;
      if (options.firstBytes === undefined && h.info.size > cap)
        return { ok: false, info: { kind: 'too-large', size: h.info.size } };
      // O_NONBLOCK|O_NOCTTY: should the checked file have become something else, never block or take a terminal.
      const fd = openSync(h.via, constants.O_RDONLY | O_NONBLOCK | O_NOCTTY | (this.procFd ? 0 : O_NOFOLLOW));
      try {
        const st = fstatSync(fd);
        if (!st.isFile()) return { ok: false, info: typeOf(st) };
        const chunks: Buffer[] = [];
        let total = 0;
        const head = options.firstBytes;
        const limit = head ?? Math.min(cap, 1 << 30) + 1;
        while (total < limit) {
          const buf = Buffer.allocUnsafe(Math.min(64 * 1024, limit - total));
          const n = readSync(fd, buf, 0, buf.length, null);
          if (n === 0) break;
          chunks.push(buf.subarray(0, n));
          total += n;
          // The file grew past the cap since it was checked.
          if (head === undefined && total >= limit) return { ok: false, info: { kind: 'too-large', size: total } };
        }
        return { ok: true, bytes: Buffer.concat(chunks, total), size: st.size };
      } finally {
        closeSync(fd);
      }
    });
  }

  /** A regular file as UTF-8 text, or undefined when it is anything else (missing, a link out, a FIFO, too large). */
  readText(path: string, options: { maxBytes?: number } = {}): string | undefined {
    const r = this.read(path, options);
    return r.ok ? r.bytes.toString('utf8') : undefined;
  }

  /** The entries of a directory inside the tree (empty when it is anything else). */
  list(path: string): DirEntry[] {
    return this.with(path, (h) => {
      if (h.info.kind !== 'dir') return [];
      return readdirSync(h.via, { withFileTypes: true }).map((d) => ({
        name: d.name,
        type: d.isSymbolicLink() ? 'symlink' : d.isDirectory() ? 'dir' : d.isFile() ? 'file' : 'special',
      }));
    });
  }

  /**
   * Regular files under the root (and links to regular files that stay inside), as '/'-separated
   * paths, sorted (`limit` counts in walk order). Never descends through a directory symlink, wherever it points: the
   * tree is
   * walked as it is, so a link cannot take the walk outside or round in a loop.
   */
  walkFiles(
    options: {
      skipDirs?: Set<string>;
      skipHidden?: boolean;
      maxDepth?: number;
      limit?: number;
      accept?: (path: string) => boolean;
    } = {},
  ): string[] {
    const out: string[] = [];
    const limit = options.limit ?? Number.MAX_SAFE_INTEGER;
    const walk = (rel: string, depth: number) => {
      if (out.length >= limit || (options.maxDepth !== undefined && depth > options.maxDepth)) return;
      for (const e of this.list(rel).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
        if (out.length >= limit) return;
        if ((options.skipHidden && e.name.startsWith('.')) || (depth === 0 && this.exclude.has(e.name.toLowerCase())))
          continue;
        const path = rel ? `${rel}/${e.name}` : e.name;
        if (e.type === 'dir') {
          if (!options.skipDirs?.has(e.name)) walk(path, depth + 1);
        } else if (
          (e.type === 'file' || (e.type === 'symlink' && this.info(path).kind === 'file')) &&
          (options.accept?.(path) ?? true)
        ) {
          out.push(path);
        }
      }
    };
    walk('', 0);
    return out.sort();
  }

  /** The segments of a path to create or write, or a ConfinedPathError saying why not. */
  private writable(path: string): string[] {
    const segs = this.segments(path);
    if (!Array.isArray(segs)) throw new ConfinedPathError(path, { kind: 'invalid', reason: segs.reason }, segs.reason);
    if (segs.length === 0)
      throw new ConfinedPathError(
        path,
        { kind: 'invalid', reason: 'the path names the root' },
        'the path names the root',
      );
    return segs;
  }

  /** Creates a directory and its parents, each inside the tree (`mkdir -p` that follows no link out). */
  mkdirs(path: string): void {
    const segs = this.writable(path);
    for (let i = 1; i <= segs.length; i++) {
      const rel = segs.slice(0, i).join('/');
      const info = this.info(rel);
      if (info.kind === 'dir') continue;
      if (info.kind !== 'missing') throw refusal(rel, info);
      this.with(segs.slice(0, i - 1).join('/'), (parent) => {
        if (parent.info.kind !== 'dir') throw refusal(segs.slice(0, i - 1).join('/') || '.', parent.info);
        try {
          mkdirSync(join(parent.via, segs[i - 1]!));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
      });
    }
  }

  /**
   * Writes a regular file inside the tree. `create`: only a new file (never replaces what
   * appeared since); `replace`: only an existing regular file, reached through links that stay
   * inside; `any`: either. Parents are created when `mkdirs` is set.
   */
  write(
    path: string,
    data: Buffer | string,
    options: { mode?: 'create' | 'replace' | 'any'; mkdirs?: boolean } = {},
  ): 'created' | 'replaced' {
    const segs = this.writable(path);
    const mode = options.mode ?? 'any';
    const target = this.hold(path);
    try {
      if (target.info.kind === 'file') {
        if (mode === 'create') throw new ConfinedPathError(path, target.info, `${path} already exists`);
        // Reopened through the checked descriptor: no O_TRUNC before we know what it is.
        const fd = openSync(target.via, constants.O_WRONLY | O_NONBLOCK | O_NOCTTY | (this.procFd ? 0 : O_NOFOLLOW));
        try {
          const st = fstatSync(fd);
          if (!st.isFile()) throw refusal(path, typeOf(st));
          ftruncateSync(fd, 0);
          writeAll(fd, data);
        } finally {
          closeSync(fd);
        }
        return 'replaced';
      }
      if (target.info.kind !== 'missing') throw refusal(path, target.info);
    } finally {
      this.release(target);
    }
    if (mode === 'replace') throw new ConfinedPathError(path, { kind: 'missing' }, `${path} does not exist`);
    const parentRel = segs.slice(0, -1).join('/');
    if (options.mkdirs && parentRel) this.mkdirs(parentRel);
    return this.with(parentRel, (parent) => {
      if (parent.info.kind !== 'dir') throw refusal(parentRel || '.', parent.info);
      // O_EXCL|O_NOFOLLOW in the checked directory: a file or link that appeared meanwhile is not written through.
      const fd = openSync(
        join(parent.via, segs.at(-1)!),
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
        0o644,
      );
      try {
        writeAll(fd, data);
      } finally {
        closeSync(fd);
      }
      return 'created';
    });
  }

  /** Sets or clears a regular file's executable bits (where it can be read), through the checked descriptor. */
  setExecutable(path: string, executable: boolean): void {
    this.with(path, (held) => {
      if (held.info.kind !== 'file') throw refusal(path, held.info);
      const fd = openSync(held.via, constants.O_RDONLY | O_NONBLOCK | O_NOCTTY | (this.procFd ? 0 : O_NOFOLLOW));
      try {
        const st = fstatSync(fd);
        if (!st.isFile()) throw refusal(path, typeOf(st));
        const mode = st.mode & 0o777;
        fchmodSync(fd, executable ? mode | ((mode & 0o444) >> 2) : mode & ~0o111);
      } finally {
        closeSync(fd);
      }
    });
  }

  /**
   * Moves a file or a symlink (the link itself) to a new path inside the tree, never over
   * something that exists: link() refuses an existing name, so nothing appearing meanwhile is
   * replaced. Parents of the new path are created when `mkdirs` is set.
   */
  rename(from: string, to: string, options: { mkdirs?: boolean } = {}): void {
    const src = this.writable(from);
    const dst = this.writable(to);
    const dstParent = dst.slice(0, -1).join('/');
    if (options.mkdirs && dstParent) this.mkdirs(dstParent);
    const srcParent = src.slice(0, -1).join('/');
    this.with(srcParent, (a) => {
      if (a.info.kind !== 'dir') throw refusal(srcParent || '.', a.info);
      const entry = join(a.via, src.at(-1)!);
      const st = lstatSync(entry, { throwIfNoEntry: false });
      if (!st) throw new ConfinedPathError(from, { kind: 'missing' }, `${from} does not exist`);
      if (st.isDirectory()) throw new ConfinedPathError(from, { kind: 'dir' }, `${from} is a directory`);
      this.with(dstParent, (b) => {
        if (b.info.kind !== 'dir') throw refusal(dstParent || '.', b.info);
        linkSync(entry, join(b.via, dst.at(-1)!));
      });
      unlinkSync(entry);
    });
  }

  /** Removes a file or a symlink (the link itself, never its target) from a directory inside the tree. */
  remove(path: string): void {
    const segs = this.writable(path);
    const parentRel = segs.slice(0, -1).join('/');
    this.with(parentRel, (parent) => {
      if (parent.info.kind !== 'dir') throw refusal(parentRel || '.', parent.info);
      const entry = join(parent.via, segs.at(-1)!);
      const st = lstatSync(entry, { throwIfNoEntry: false });
      if (!st) throw new ConfinedPathError(path, { kind: 'missing' }, `${path} does not exist`);
      if (st.isDirectory()) throw new ConfinedPathError(path, { kind: 'dir' }, `${path} is a directory`);
      unlinkSync(entry);
    });
  }
}

function writeAll(fd: number, data: Buffer | string) {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

/** The refusal for a path that is not a regular file inside the tree, in words for a model or a log. */
export function describePath(path: string, info: PathInfo | { kind: 'too-large'; size: number }): string {
  switch (info.kind) {
    case 'outside':
      if (info.into)
        return (
          `${info.link ? `${info.link} is a symlink -> ${info.target}, which leads` : `${path} is`} ` +
          `into ${info.into}; refused`
        );
      return (
        `${info.link ?? path} is a symlink -> ${info.target}, which leads outside the repository; it is not ` +
        `followed`
      );
    case 'special':
      return `${path} is not a regular file (a ${info.what}); only regular files are read or written`;
    case 'dir':
      return `${path} is a directory, not a regular file`;
    case 'missing':
      return `${path} does not exist`;
    case 'too-large':
      return `${path} is too large (${info.size} bytes)`;
    case 'invalid':
      return `${path}: ${info.reason}`;
    case 'file':
      return `${path} is a regular file`;
  }
}

function refusal(path: string, info: PathInfo): ConfinedPathError {
  return new ConfinedPathError(path, info, describePath(path, info));
}

/** How a file the model asked to see is shown when it cannot be read: `symlink -> target` for a link out. */
export function shownAsLink(info: PathInfo | { kind: 'too-large'; size: number }): string | undefined {
  return info.kind === 'outside' && info.link !== undefined ? `symlink -> ${info.target}` : undefined;
}
