import { describe, expect, it } from 'vitest';
import { manualClock } from '../../src/clock.js';
import { type Polling, waitFor } from './engine.js';

// The engine tests' wait helper keeps time with the clock it is given: with a manual clock whose
// pause moves it, a wait ends at its deadline after a known number of probes, sleeping not at all.

function manualPolling(): Polling & { pauses: number } {
  const clock = manualClock();
  const polling = {
    clock,
    pauses: 0,
    async pause(ms: number) {
      polling.pauses += 1;
      clock.advance(ms);
    },
  };
  return polling;
}

describe('waitFor', () => {
  it('times out by its clock: 1 s of 20 ms pauses ends at the probe after the deadline (52), and the error names what it waited for', async () => {
    const polling = manualPolling();
    let probes = 0;
    await expect(
      waitFor(
        'the thing',
        async () => {
          probes += 1;
          return false;
        },
        1_000,
        polling,
      ),
    ).rejects.toThrow('timed out waiting for the thing');
    expect(probes).toBe(52);
    expect(polling.pauses).toBe(51);
  });

  it('returns the first truthy answer without pausing after it', async () => {
    const polling = manualPolling();
    let probes = 0;
    const value = await waitFor('the third', async () => (++probes === 3 ? { n: probes } : undefined), 1_000, polling);
    expect(value).toEqual({ n: 3 });
    expect(polling.pauses).toBe(2);
  });
});
