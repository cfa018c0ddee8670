import { describe, expect, it } from 'vitest';
import { AfterWork } from '../../src/processes/after-work.js';
import { startHarness } from '../support/harness.js';

const later = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('work left after a step', () => {
  it('runs at once, and drain waits for every piece, those added while it waits included', async () => {
    const done: string[] = [];
    const work = new AfterWork();
    work.add(async () => {
      await later(30);
      done.push('first');
      // Left by a piece that is itself running: drain waits for it too.
      work.add(async () => {
        await later(30);
        done.push('second');
      });
    });
    expect(work.size).toBe(1);
    await work.drain();
    expect(done).toEqual(['first', 'second']);
    expect(work.size).toBe(0);
  });

  it('reports a piece that fails and goes on with the rest', async () => {
    const failures: unknown[] = [];
    const work = new AfterWork((err) => failures.push(err));
    let ran = false;
    work.add(async () => {
      throw new Error('copies already gone');
    });
    work.add(async () => {
      ran = true;
    });
    await work.drain();
    expect(ran).toBe(true);
    expect(failures.map((e) => (e as Error).message)).toEqual(['copies already gone']);
  });

  it('the service stops only once the work its steps left has ended', async () => {
    const h = await startHarness();
    let ended = false;
    h.deps.afterWork.add(async () => {
      await later(200);
      ended = true;
    });
    await h.close();
    expect(ended).toBe(true);
  });
});
