import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerBalance } from '../../src/billing/credits.js';
import { tasks } from '../../src/db/schema.js';
import { requeueLost, requeueOrphans } from '../../src/tasks/lifecycle/requeue.js';
import {
  REQUESTS_REPO,
  createTask,
  insertJoblessTask,
  recordingSteps,
  taskRow,
  waitForStatus,
  workerPerTest,
} from '../support/engine.js';
import { type Harness, forceStatus, newAccount, startHarness } from '../support/harness.js';

// The maintenance operations the worker schedules, run directly. A task row written here has
// no job in the queue: exactly a job that was lost.
let h: Harness;
const workers = workerPerTest(() => h);
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const STALE_MS = 30_000;

const jobless = (accountId: string, ageMs: number) =>
  insertJoblessTask(h, accountId, {
    repoUrl: REQUESTS_REPO,
    repoOwner: 'psf',
    repoName: 'requests',
    baseBranch: 'main',
    createdAt: new Date(h.clock.now().getTime() - ageMs),
  });

async function startTestWorker() {
  const rec = recordingSteps();
  // No maintenance of its own during the test: the operations under test are called directly.
  await workers.start(rec.steps, { concurrency: 2, staleMs: STALE_MS, maintenanceMs: 600_000 });
  return rec;
}

describe('requeueLost', () => {
  it('queues again a pending task and a released running task whose jobs were lost, not a fresh one', async () => {
    const { account } = await newAccount(h, { plan: 'pro', scm: false });
    const lostPending = await jobless(account.id, 5 * 60_000);
    const released = await jobless(account.id, 5 * 60_000);
    await forceStatus(h, eq(tasks.id, released), 'running');
    await h.deps.db
      .update(tasks)
      .set({ workerId: null, heartbeatAt: new Date(h.clock.now().getTime() - 2 * STALE_MS) })
      .where(eq(tasks.id, released));
    const fresh = await jobless(account.id, 1_000);
    const { calls } = await startTestWorker();
    await requeueLost(h.deps, STALE_MS);
    await waitForStatus(h, lostPending, 'done');
    await waitForStatus(h, released, 'done');
    await new Promise((r) => setTimeout(r, 500));
    expect((await taskRow(h, fresh)).status).toBe('pending');
    expect(calls.filter((c) => c.taskId === fresh)).toEqual([]);
  });
});

describe('requeueOrphans', () => {
  it('queues a task whose worker stopped beating; fails one whose workers died twice, credit released', async () => {
    const { auth, account } = await newAccount(h, { plan: 'pro', credits: 1 });
    h.github.createRepo('psf', 'requests');
    const twice = await createTask(h, auth);
    const once = await jobless(account.id, 5 * 60_000); // no job: only the requeue can run it
    await forceStatus(h, eq(tasks.id, once), 'running');
    await forceStatus(h, eq(tasks.id, twice), 'running');
    const stale = new Date(h.clock.now().getTime() - 2 * STALE_MS);
    await h.deps.db.update(tasks).set({ workerId: 'dead', heartbeatAt: stale, attempts: 1 }).where(eq(tasks.id, once));
    await h.deps.db
      .update(tasks)
      .set({ workerId: 'dead', heartbeatAt: stale, attempts: 2, currentStep: 'locator' })
      .where(eq(tasks.id, twice));
    await requeueOrphans(h.deps, STALE_MS);
    const failed = await taskRow(h, twice);
    expect(failed).toMatchObject({ status: 'failed', workerId: null, creditHeld: false });
    expect(failed.error).toMatch(/worker running locator stopped responding 2 times/);
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(1);
    expect((await taskRow(h, once)).status).toBe('running');
    const { calls } = await startTestWorker();
    await waitForStatus(h, once, 'done');
    expect(calls.filter((c) => c.taskId === once && c.step === 'planner')).toHaveLength(1);
    expect(calls.filter((c) => c.taskId === twice)).toEqual([]);
  });
});
