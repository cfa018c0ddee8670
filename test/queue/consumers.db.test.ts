import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { type TaskQueue, createTaskQueue } from '../../src/queue/task-queue.js';
import { countFetches } from '../support/queue-fetches.js';
import { openTestDatabase } from '../support/test-db.js';

let opened: { database: Database; queue: TaskQueue; stops: Array<() => Promise<void>> } | undefined;
afterEach(async () => {
  if (!opened) return;
  for (const stop of opened.stops) await stop();
  await opened.queue.stop();
  await opened.database.close();
  opened = undefined;
});

async function open() {
  const database = await openTestDatabase();
  const fetches = countFetches(database);
  const queue = await createTaskQueue(database, { pollingIntervalSeconds: 0.5, supervise: false });
  opened = { database, queue, stops: [] };
  return { queue, fetches, stops: opened.stops };
}

// Each poll is a query (on PGlite, CPU of the service's own process): with four consumers a queue
// polling every half second, an idle worker kept PGlite busy. One consumer a queue polls; it wakes
// the others when it takes a job, so a burst still runs on all of them at once.
describe('queue consumers', () => {
  it('poll once per interval per queue when idle, however many consumers there are', async () => {
    const { queue, fetches, stops } = await open();
    stops.push(await queue.work(4, async () => {}));
    stops.push(await queue.workDeliveries(4, async () => {}));
    stops.push(await queue.workTriggers(4, async () => {}));
    const before = fetches();
    await new Promise((r) => setTimeout(r, 3_000));
    const polled = fetches() - before;
    // Three queues, one look every 0.5 s each: 18 in 3 s, and a few more at the edges. Twelve
    // consumers polling would make 72; a loaded machine only makes fewer.
    expect(polled).toBeGreaterThan(0);
    expect(polled).toBeLessThanOrEqual(27);
  });

  it('run a burst on every consumer at once: the one that takes a job wakes the others', async () => {
    const { queue, stops } = await open();
    let inside = 0;
    let release!: () => void;
    const allIn = new Promise<void>((r) => (release = r));
    const seen: string[] = [];
    stops.push(
      await queue.workDeliveries(4, async (id) => {
        seen.push(id);
        inside += 1;
        if (inside === 4) release();
        // Each job holds its consumer until all four are running: only concurrent consumers finish.
        await allIn;
      }),
    );
    for (const id of ['d1', 'd2', 'd3', 'd4']) await queue.enqueueDelivery(id, new Date(Date.now() + 200));
    // Due in 200 ms and not announced: the polling consumer finds them, the others are woken (they
    // would otherwise sleep their 30 s).
    await Promise.race([
      allIn,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`only ${inside} of 4 ran at once`)), 10_000)),
    ]);
    expect(seen.sort()).toEqual(['d1', 'd2', 'd3', 'd4']);
  });
});
