import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { clockEnv, findFaketime } from '../../src/test-runs/test-clock.js';

// The tests' clock at a commit's date (src/test-runs/test-clock.ts); the eval's CLI test runs it for real.
describe('the tests’ clock', () => {
  const root = mkdtempSync(join(tmpdir(), 'emend-faketime-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('finds libfaketime under its multiarch directory, and says none where it is not installed', () => {
    expect(findFaketime(root)).toBeUndefined();
    expect(findFaketime(join(root, 'absent'))).toBeUndefined();
    mkdirSync(join(root, 'aarch64-linux-gnu', 'faketime'), { recursive: true });
    writeFileSync(join(root, 'aarch64-linux-gnu', 'faketime', 'libfaketime.so.1'), '');
    expect(findFaketime(root)).toBe(join(root, 'aarch64-linux-gnu', 'faketime', 'libfaketime.so.1'));
  });

  it('sets the clock back by the seconds since the commit, and never forward', () => {
    const now = new Date('2026-11-29T06:00:00Z');
    expect(clockEnv('/lib/f.so', new Date('2020-10-23T05:47:25Z'), now)).toEqual({
      LD_PRELOAD: '/lib/f.so',
      FAKETIME: `-${(now.getTime() - Date.parse('2020-10-23T05:47:25Z')) / 1000}`,
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
      FAKETIME_DONT_RESET: '1',
    });
    expect(clockEnv('/lib/f.so', new Date('2027-01-01T00:00:00Z'), now).FAKETIME).toBe('-0');
  });
});
