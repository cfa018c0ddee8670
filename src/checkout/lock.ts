import { spawn } from 'node:child_process';
import { type FileHandle, open } from 'node:fs/promises';

export class LockTimeoutError extends Error {
  constructor(
    readonly path: string,
    waitedMs: number,
  ) {
    super(`gave up waiting ${Math.round(waitedMs / 1000)} s for the lock ${path}`);
    this.name = 'LockTimeoutError';
  }
}

export class LockAbortedError extends Error {
  constructor(readonly path: string) {
    super(`stopped waiting for the lock ${path}: aborted`);
    this.name = 'LockAbortedError';
  }
}

export interface LockOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

/** The last waiter on each lock path in this process: tasks here queue in order without spawning anything. */
const tails = new Map<string, Promise<void>>();

/**
 * Runs `fn` while holding an exclusive lock on `path`, against other tasks in this process
 * (a promise chain) and against other processes on this machine (flock(2) on the file).
 *
 * Node has no flock, so flock(1) takes it on a descriptor we opened and passed as fd 3: the
 * lock belongs to the open file description, which outlives flock(1), and the kernel drops it
 * when we close the file or our process dies, even by SIGKILL. No stale lock files to judge.
 */
export async function withFileLock<T>(path: string, options: LockOptions, fn: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const previous = tails.get(path) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tail = previous.then(() => mine);
  tails.set(path, tail);
  const cleanup = () => {
    if (tails.get(path) === tail) tails.delete(path);
  };

  try {
    await waitFor(previous, path, options, started);
  } catch (err) {
    // Our place in the queue is given up once those ahead of us are done.
    void previous.then(() => {
      release();
      cleanup();
    });
    throw err;
  }
  try {
    const handle = await flock(path, options.timeoutMs - (Date.now() - started), options.signal);
    try {
      return await fn();
    } finally {
      await handle.close();
    }
  } finally {
    release();
    cleanup();
  }
}

function waitFor(previous: Promise<void>, path: string, options: LockOptions, started: number): Promise<void> {
  if (options.signal?.aborted) return Promise.reject(new LockAbortedError(path));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new LockTimeoutError(path, Date.now() - started)), options.timeoutMs);
    const onAbort = () => finish(new LockAbortedError(path));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    function finish(err?: Error) {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve();
    }
    void previous.then(() => finish());
  });
}

async function flock(path: string, timeoutMs: number, signal?: AbortSignal): Promise<FileHandle> {
  const handle = await open(path, 'a', 0o600);
  try {
    await new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(new LockAbortedError(path));
      const seconds = Math.max(timeoutMs, 0) / 1000;
      const child = spawn('flock', ['--exclusive', '--wait', seconds.toFixed(3), '3'], {
        stdio: ['ignore', 'ignore', 'pipe', handle.fd],
      });
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      const onAbort = () => child.kill('SIGKILL');
      signal?.addEventListener('abort', onAbort, { once: true });
      child.once('error', (err) => {
        signal?.removeEventListener('abort', onAbort);
        const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
        reject(
          new Error(
            missing ? 'flock(1) is not installed (util-linux); the checkout lock needs it' : `flock: ${err.message}`,
          ),
        );
      });
      child.once('close', (code) => {
        signal?.removeEventListener('abort', onAbort);
        if (code === 0) resolve();
        else if (signal?.aborted) reject(new LockAbortedError(path));
        else if (code === 1) reject(new LockTimeoutError(path, timeoutMs));
        else reject(new Error(`flock on ${path} failed (exit ${code}): ${stderr.trim()}`));
      });
    });
  } catch (err) {
    await handle.close();
    throw err;
  }
  return handle;
}
