import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareCheckout } from '../../src/checkout/checkout.js';
import { LockAbortedError, LockTimeoutError, withFileLock } from '../../src/checkout/lock.js';
import { emendNodeArgs } from '../support/emend-process.js';
import { useCheckoutTestbed } from './fixture.js';

/** Another process of ours on this machine (see checkout-process.ts); `lines` yields what it prints. */
function otherProcess(env: Record<string, string>) {
  const child = spawn(process.execPath, emendNodeArgs('test/checkout/checkout-process.ts'), {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  child.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
    for (const w of waiters.splice(0)) w();
  });
  child.stderr!.on('data', (b: Buffer) => {
    err += b.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.once('exit', () => {
    for (const w of waiters.splice(0)) w();
  });
  /** Resolves with the n-th line printed (1-based), or '' if the process ended first. */
  const line = async (n: number): Promise<string> => {
    for (;;) {
      const lines = out.split('\n');
      if (lines.length > n) return lines[n - 1]!;
      if (child.exitCode !== null || child.signalCode !== null) return '';
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { child, line, stderr: () => err, exited };
}

/** Whether a process other than ours could take the lock now. */
const freeForOthers = (path: string) => spawnSync('flock', ['--exclusive', '--nonblock', path, 'true']).status === 0;

describe('checkouts: the per-repository lock', () => {
  const bed = useCheckoutTestbed();

  it('is held against other processes while the function runs, and only then', async () => {
    const path = join(bed.fx.dataDir, 'a.lock');
    const seen = await withFileLock(path, { timeoutMs: 5_000 }, async () => freeForOthers(path));
    expect(seen).toBe(false);
    expect(freeForOthers(path)).toBe(true);
    // Released when the function throws, too.
    await expect(
      withFileLock(path, { timeoutMs: 5_000 }, async () => Promise.reject(new Error('boom'))),
    ).rejects.toThrow('boom');
    expect(freeForOthers(path)).toBe(true);
  });

  it('queues tasks in this process one at a time, in order', async () => {
    const path = join(bed.fx.dataDir, 'b.lock');
    const events: string[] = [];
    let inside = 0;
    const task = (name: string) =>
      withFileLock(path, { timeoutMs: 5_000 }, async () => {
        inside += 1;
        events.push(`${name}:${inside}`);
        await new Promise((r) => setImmediate(r));
        inside -= 1;
      });
    await Promise.all(['a', 'b', 'c', 'd'].map(task));
    expect(events).toEqual(['a:1', 'b:1', 'c:1', 'd:1']);
  });

  it('waits for another process, gives up after its timeout or on abort, and is free once that process dies', async () => {
    const path = join(bed.fx.dataDir, 'c.lock');
    const holder = otherProcess({ MODE: 'hold', LOCK_PATH: path });
    expect(await holder.line(1)).toBe('held');
    await expect(withFileLock(path, { timeoutMs: 150 }, async () => 'got it')).rejects.toBeInstanceOf(LockTimeoutError);
    const abort = new AbortController();
    const aborted = withFileLock(path, { timeoutMs: 30_000, signal: abort.signal }, async () => 'got it');
    abort.abort();
    await expect(aborted).rejects.toBeInstanceOf(LockAbortedError);
    // Waiting while the holder is alive; SIGKILL leaves no stale lock behind.
    const waiting = withFileLock(path, { timeoutMs: 30_000 }, async () => 'got it');
    holder.child.kill('SIGKILL');
    await holder.exited;
    expect(await waiting).toBe('got it');
  });

  it('lets workers in several processes prepare the same repository at once; the mirror is made once', async () => {
    const commit = bed.server.createRepo('acme', 'shared', { files: { 'a.txt': 'shared\n' } });
    const url = bed.server.repoUrl('acme', 'shared');
    const others = [1, 2, 3, 4].map((n) =>
      otherProcess({ MODE: 'prepare', DATA_DIR: bed.fx.dataDir, REPO_URL: url, TASK_ID: `proc-${n}` }),
    );
    for (const o of others) expect(await o.line(1)).toBe('ready');
    for (const o of others) o.child.stdin!.write('go\n');
    const mine = await prepareCheckout(bed.fx.deps, { taskId: 'here', repoUrl: url, baseBranch: 'main' });
    const results: Array<{ dir: string; baseCommit: string }> = [mine];
    for (const o of others) {
      const printed = await o.line(2);
      expect(await o.exited, o.stderr()).toBe(0);
      results.push(JSON.parse(printed));
    }
    for (const r of results) {
      expect(r.baseCommit).toBe(commit);
      expect(readFileSync(join(r.dir, 'a.txt'), 'utf8')).toBe('shared\n');
    }
    const lines = [...others.flatMap((o) => o.stderr().split('\n')), ...bed.fx.logLines]
      .filter(Boolean)
      .map((l) => JSON.parse(l).msg);
    expect(lines.filter((m) => m === 'mirror created')).toHaveLength(1);
    expect(lines.filter((m) => m === 'mirror fetched')).toHaveLength(4);
  });
});
