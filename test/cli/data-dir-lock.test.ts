import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataDirLockedError, acquireDataDirLock, lockHolder, lockPath } from '../../src/db/data-dir-lock.js';

// The lock that keeps a PGlite data dir to one process. No database here: one project runs it.
describe('the data-dir lock', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'emend-lock-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  /** The pid of a process that has exited. */
  function deadPid(): number {
    const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    return Number(r.stdout);
  }

  it('is exclusive, names its holder, and is gone once released', () => {
    const release = acquireDataDirLock(dataDir, 'serve');
    expect(lockHolder(dataDir)).toEqual({ pid: process.pid, role: 'serve' });
    expect(() => acquireDataDirLock(dataDir, 'cli')).toThrow(DataDirLockedError);
    expect(() => acquireDataDirLock(dataDir)).toThrow(
      `the data dir ${dataDir} is in use by another emend process (pid ${process.pid})`,
    );
    release();
    expect(existsSync(lockPath(dataDir))).toBe(false);
    expect(lockHolder(dataDir)).toBeUndefined();
    acquireDataDirLock(dataDir)();
  });

  it('creates the data dir, and the lock file readable by its owner only', () => {
    const nested = join(dataDir, 'a', 'b');
    const release = acquireDataDirLock(nested);
    expect(existsSync(lockPath(nested))).toBe(true);
    release();
  });

  it('takes over a lock left by a dead process', () => {
    writeFileSync(lockPath(dataDir), JSON.stringify({ pid: deadPid(), role: 'serve' }));
    expect(lockHolder(dataDir)).toBeUndefined();
    const release = acquireDataDirLock(dataDir);
    expect(JSON.parse(readFileSync(lockPath(dataDir), 'utf8'))).toMatchObject({ pid: process.pid });
    release();
  });

  it('takes over a lock whose pid now belongs to a later process', () => {
    // A container restarts its server as the same pid: the lock's start time tells them apart.
    writeFileSync(
      lockPath(dataDir),
      JSON.stringify({ pid: process.pid, role: 'serve', identity: 'another-boot:12345' }),
    );
    const release = acquireDataDirLock(dataDir);
    release();
  });

  it('respects a live holder in the old plain-pid format', () => {
    writeFileSync(lockPath(dataDir), String(process.ppid));
    expect(lockHolder(dataDir)).toEqual({ pid: process.ppid, role: 'serve' });
    expect(() => acquireDataDirLock(dataDir)).toThrow(DataDirLockedError);
  });

  it('takes over an old unreadable lock, and a takeover abandoned half-way', () => {
    writeFileSync(lockPath(dataDir), 'garbage');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockPath(dataDir), old, old);
    writeFileSync(join(dataDir, 'emend.lock.takeover'), '{}');
    utimesSync(join(dataDir, 'emend.lock.takeover'), old, old);
    const release = acquireDataDirLock(dataDir);
    expect(lockHolder(dataDir)?.pid).toBe(process.pid);
    expect(existsSync(join(dataDir, 'emend.lock.takeover'))).toBe(false);
    release();
  });

  it('lets exactly one of many processes racing for a stale lock win', async () => {
    writeFileSync(lockPath(dataDir), JSON.stringify({ pid: deadPid(), role: 'serve' }));
    const script = `
      import { acquireDataDirLock } from './src/db/data-dir-lock.ts';
      try { acquireDataDirLock(process.argv[1]); console.log('won'); setTimeout(() => {}, 1500); }
      catch (err) { console.log(err.name); }`;
    const { spawn } = await import('node:child_process');
    const runs = Array.from(
      { length: 4 },
      () =>
        new Promise<string>((resolve) => {
          const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dataDir], {
            cwd: join(import.meta.dirname, '../..'),
          });
          let out = '';
          child.stdout.on('data', (d) => (out += d));
          child.on('close', () => resolve(out.trim()));
        }),
    );
    const results = await Promise.all(runs);
    expect(results.filter((r) => r === 'won')).toHaveLength(1);
    expect(results.filter((r) => r === 'DataDirLockedError')).toHaveLength(3);
  }, 60_000);
});
