import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `the data dir ${dataDir} is in use by another emend process (pid ${pid}); ` +
        'stop it first, or point EMEND_DATA_DIR elsewhere',
    );
    this.name = 'DataDirLockedError';
  }
}

/** serve: a server that shares the database over its socket; cli: a short command that opened it directly. */
export type LockRole = 'serve' | 'cli';

export interface LockHolder {
  pid: number;
  role: LockRole;
}

interface LockContent extends LockHolder {
  /** Tells a live process from a later one that reuses its pid (containers restart as pid 1). */
  identity?: string;
}

export const lockPath = (dataDir: string) => join(dataDir, 'emend.lock');
const takeoverPath = (dataDir: string) => join(dataDir, 'emend.lock.takeover');

/** Boot id and start time of a process, where /proc offers them (Linux). */
function processIdentity(pid: number): string | undefined {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces; starttime is field 22.
    const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return startTime ? `${boot}:${startTime}` : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` is a live process (a data dir's lock holder, a cached environment's builder). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readLock(dataDir: string): LockContent | undefined {
  let raw: string;
  try {
    raw = readFileSync(lockPath(dataDir), 'utf8').trim();
  } catch {
    return undefined;
  }
  try {
    const parsed = JSON.parse(raw) as Partial<LockContent> | number;
    if (typeof parsed === 'number') return { pid: parsed, role: 'serve' };
    if (typeof parsed.pid === 'number')
      return { pid: parsed.pid, role: parsed.role === 'cli' ? 'cli' : 'serve', identity: parsed.identity };
  } catch {
    // A lock being written, or garbage: treated as held by nobody alive only once it is old.
  }
  return { pid: 0, role: 'serve' };
}

function holderOf(content: LockContent | undefined): LockHolder | undefined {
  if (!content || !Number.isInteger(content.pid) || content.pid <= 0 || !processAlive(content.pid)) return undefined;
  if (content.identity !== undefined) {
    const now = processIdentity(content.pid);
    if (now !== undefined && now !== content.identity) return undefined;
  }
  return { pid: content.pid, role: content.role };
}

/** The live process holding the data dir, or undefined when nobody (alive) does. */
export function lockHolder(dataDir: string): LockHolder | undefined {
  return holderOf(readLock(dataDir));
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function createLock(path: string, role: LockRole): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, JSON.stringify({ pid: process.pid, role, identity: processIdentity(process.pid) }));
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * PGlite lets two processes open one data dir and corrupt it, so we take the lock ourselves:
 * a file created exclusively, naming our process. A lock left by a dead process is taken
 * over; the takeover itself is serialised by a second exclusive file, so two processes
 * finding the same stale lock cannot both win.
 */
export function acquireDataDirLock(dataDir: string, role: LockRole = 'serve'): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = lockPath(dataDir);
  const takeover = takeoverPath(dataDir);
  const deadline = Date.now() + 5_000;
  for (;;) {
    if (createLock(path, role)) break;
    const content = readLock(dataDir);
    const holder = holderOf(content);
    // A lock file with unreadable content may be one being written this instant.
    const unreadable = content?.pid === 0 && ageMs(path) < 2_000;
    if (holder !== undefined) throw new DataDirLockedError(dataDir, holder.pid);
    if (!unreadable && createLock(takeover, role)) {
      try {
        // Still the same stale lock? (Another process may have taken over meanwhile.)
        const again = readLock(dataDir);
        if (again === undefined || (again.pid === content?.pid && holderOf(again) === undefined)) {
          rmSync(path, { force: true });
          if (createLock(path, role)) break;
        }
      } finally {
        rmSync(takeover, { force: true });
      }
    } else if (ageMs(takeover) > 10_000) {
      // A takeover takes microseconds; one this old was abandoned by a process that died.
      rmSync(takeover, { force: true });
    }
    if (Date.now() > deadline) throw new Error(`could not take the lock ${path}`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    // Remove the lock only while it is still ours.
    const content = readLock(dataDir);
    if (content?.pid === process.pid) rmSync(path, { force: true });
  };
}
