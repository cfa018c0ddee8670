import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { othersCanReach, tempDirForOtherUsers } from './other-users.js';

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** Whether the nobody user can read `path`, asked of the kernel rather than worked out from modes. */
function nobodyReads(path: string): boolean {
  return spawnSync('/bin/cat', [path], { cwd: '/', uid: 65534, gid: 65534, stdio: 'ignore' }).status === 0;
}

/** A directory with `mode` holding a file `name` with `fileMode`, under a fresh 0755 directory in /tmp. */
function tree(mode: number, fileMode: number): string {
  const top = mkdtempSync('/tmp/emend-other-users-');
  made.push(top);
  chmodSync(top, 0o755);
  const file = join(top, 'dir', 'file');
  mkdirSync(dirname(file));
  chmodSync(dirname(file), mode);
  writeFileSync(file, 'x');
  chmodSync(file, fileMode);
  return file;
}

describe('files the tests hand to another user (postgres, nobody)', () => {
  it('othersCanReach says what the kernel does: a 0700 directory above stops them whatever the mode', () => {
    for (const [dirMode, fileMode, reachable] of [
      [0o755, 0o644, true],
      [0o700, 0o644, false], // a checkout under `mktemp -d` or /root
      [0o711, 0o644, true], // searchable without being listable is enough
      [0o755, 0o600, false],
    ] as const) {
      const file = tree(dirMode, fileMode);
      expect({ dirMode, fileMode, reachable: othersCanReach(file, 0o004) }).toEqual({ dirMode, fileMode, reachable });
      expect({ dirMode, fileMode, reachable: nobodyReads(file) }).toEqual({ dirMode, fileMode, reachable });
    }
    expect(othersCanReach('/tmp/emend-no-such-file', 0o004)).toBe(false);
  });

  it('makes its directories where they can get in, even when TMPDIR is private', () => {
    // like ~/tmp under /root: open itself, but under a 0700 directory
    const privateTmp = join(dirname(tree(0o700, 0o644)), 'tmp');
    mkdirSync(privateTmp);
    chmodSync(privateTmp, 0o1777);
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = privateTmp;
    let dir: string;
    try {
      expect(tmpdir()).toBe(privateTmp);
      dir = tempDirForOtherUsers('emend-other-users-', 0o755);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    made.push(dir);
    expect(dirname(dir)).toBe('/tmp');
    expect(statSync(dir).mode & 0o7777).toBe(0o755);
    writeFileSync(join(dir, 'file'), 'x');
    chmodSync(join(dir, 'file'), 0o644);
    expect(nobodyReads(join(dir, 'file'))).toBe(true);
    // TMPDIR itself when they can get in there, with the mode asked for
    const own = tempDirForOtherUsers('emend-other-users-', 0o700);
    made.push(own);
    expect(dirname(own)).toBe(othersCanReach(tmpdir(), 0o001) ? tmpdir() : '/tmp');
    expect(statSync(own).mode & 0o7777).toBe(0o700);
  });
});
