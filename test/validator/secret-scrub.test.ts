import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeFilesHoldingSecrets } from '../../src/environments/secret-scrub.js';

// The scrub that runs after every setup with setup-only secrets (docs/environments.md): every
// file holding a secret is gone before the tests run or the environment is cached, whatever its
// size or mode.

const SECRET = 'npm_SCRUBSECRET_3b9e61d0c7a2';
const MiB = 1024 * 1024;
const dirs: string[] = [];
const tree = () => {
  const dir = mkdtempSync(join(tmpdir(), 'emend-scrub-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A sparse file of `size` bytes with `text` written at `offset` (zeros elsewhere, no disk taken). */
function sparse(path: string, size: number, text: string, offset: number) {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, Buffer.from(text), 0, text.length, offset);
    if (offset + text.length < size) writeSync(fd, Buffer.alloc(1), 0, 1, size - 1);
  } finally {
    closeSync(fd);
  }
}

describe('removeFilesHoldingSecrets', () => {
  it('reads a file whole whatever its size: a secret at the end of 65 MiB is found, so is one across a read boundary', async () => {
    const dir = tree();
    sparse(join(dir, 'big.tar'), 65 * MiB + 10, SECRET, 65 * MiB);
    sparse(join(dir, 'across.bin'), 3 * MiB, SECRET, MiB - 5);
    sparse(join(dir, 'clean.bin'), 65 * MiB, 'nothing to see', 65 * MiB - 100);
    const scrubbed = await removeFilesHoldingSecrets(dir, [SECRET]);
    expect(scrubbed).toEqual({ holding: ['across.bin', 'big.tar'], unreadable: [] });
    expect(existsSync(join(dir, 'big.tar'))).toBe(false);
    expect(existsSync(join(dir, 'across.bin'))).toBe(false);
    expect(existsSync(join(dir, 'clean.bin'))).toBe(true);
  });

  it('opens what the setup made unreadable (mode 000 files and folders) and removes what holds a secret', async () => {
    const dir = tree();
    mkdirSync(join(dir, 'locked', 'deep'), { recursive: true });
    writeFileSync(join(dir, 'locked', 'deep', 'credentials'), `token=${SECRET}\n`);
    writeFileSync(join(dir, 'locked', 'kept.txt'), 'no secret here\n');
    writeFileSync(join(dir, 'hidden.npmrc'), `//registry/:_authToken=${SECRET}\n`);
    chmodSync(join(dir, 'hidden.npmrc'), 0o000);
    chmodSync(join(dir, 'locked', 'deep'), 0o000);
    chmodSync(join(dir, 'locked'), 0o000);
    const scrubbed = await removeFilesHoldingSecrets(dir, [SECRET]);
    expect(scrubbed.holding).toEqual(['hidden.npmrc', 'locked/deep/credentials']);
    expect(scrubbed.unreadable).toEqual([]);
    expect(existsSync(join(dir, 'hidden.npmrc'))).toBe(false);
    expect(existsSync(join(dir, 'locked', 'deep', 'credentials'))).toBe(false);
    expect(existsSync(join(dir, 'locked', 'kept.txt'))).toBe(true);
  });

  it('does not follow a symbolic link out of the tree, and leaves files without a secret alone', async () => {
    const dir = tree();
    const outside = tree();
    writeFileSync(join(outside, 'other.txt'), SECRET);
    symlinkSync(join(outside, 'other.txt'), join(dir, 'link.txt'));
    symlinkSync(outside, join(dir, 'linked-dir'));
    writeFileSync(join(dir, 'plain.txt'), 'npm_ but not the token');
    const scrubbed = await removeFilesHoldingSecrets(dir, [SECRET, 'ab']);
    expect(scrubbed).toEqual({ holding: [], unreadable: [] });
    expect(existsSync(join(outside, 'other.txt'))).toBe(true);
    expect(existsSync(join(dir, 'plain.txt'))).toBe(true);
  });
});
