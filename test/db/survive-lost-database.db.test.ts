import { describe, expect, it } from 'vitest';
import { spawnEmend } from '../support/emend-process.js';

/** Runs the guarded process; its exit code and what it wrote. */
function run(kind: 'lost' | 'bug'): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawnEmend([kind], { ...process.env }, 'test/support/unawaited-rejection.ts');
  let out = '';
  let err = '';
  child.stdout!.on('data', (b: Buffer) => {
    out += String(b);
  });
  child.stderr!.on('data', (b: Buffer) => {
    err += String(b);
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out, err })));
}

describe('a worker process and a promise no one awaited', () => {
  it('goes on after a lost database connection, saying so in its log', async () => {
    const { code, out } = await run('lost');
    expect(code).toBe(0);
    expect(out).toContain('alive');
    expect(out).toContain('the database connection was lost under a query no one awaited');
  });

  it('still ends on any other unhandled rejection, as Node would', async () => {
    const { code, out, err } = await run('bug');
    expect(code).not.toBe(0);
    expect(out).not.toContain('alive');
    expect(err).toContain('a bug in the code');
  });
});
