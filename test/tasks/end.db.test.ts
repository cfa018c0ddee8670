import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerBalance } from '../../src/billing/credits.js';
import { workspaces, creditLedger, tasks } from '../../src/db/schema.js';
import { CHANNELS } from '../../src/events/bus.js';
import { endTask } from '../../src/tasks/lifecycle/end.js';
import { createTask, taskRow, waitFor } from '../support/engine.js';
import { type Harness, forceStatus, newAccount, startHarness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.github.createRepo('psf', 'requests');
});
afterAll(() => h.close());

async function runningTask() {
  const { auth, account } = await newAccount(h, { plan: 'pro', credits: 1 });
  const id = await createTask(h, auth);
  await forceStatus(h, eq(tasks.id, id), 'running');
  return { id, account };
}

const finished = async (status: string) =>
  (await h.deps.metrics.tasksFinished.get()).values
    .filter((v) => v.labels.status === status)
    .reduce((n, v) => n + v.value, 0);

const settlements = async (taskId: string) =>
  (await h.deps.db.select({ kind: creditLedger.kind }).from(creditLedger).where(eq(creditLedger.taskId, taskId))).map(
    (r) => r.kind,
  );

describe('endTask, the one way a task ends', () => {
  it('sets status, duration and error, clears worker and step, releases the credit, counts, notifies', async () => {
    const { id, account } = await runningTask();
    await h.deps.db.update(tasks).set({ workerId: 'w1', currentStep: 'locator' }).where(eq(tasks.id, id));
    const notified: string[] = [];
    const unsubscribe = h.deps.events.subscribe(CHANNELS.taskEvents, (taskId) => notified.push(taskId));
    const before = await finished('failed');
    h.clock.advance(1_500);
    const ended = await endTask(h.deps, id, { status: 'failed', error: 'it broke' });
    expect(ended).toMatchObject({ id, status: 'failed', error: 'it broke', workerId: null, currentStep: null });
    expect(ended!.durationMs).toBeGreaterThanOrEqual(1_500);
    expect(ended!.finishedAt).toEqual(h.clock.now());
    expect(await settlements(id)).toEqual(['hold', 'release']);
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(1);
    expect(await finished('failed')).toBe(before + 1);
    await waitFor('the notify', async () => notified.includes(id));
    unsubscribe();
  });

  it('captures the credit of a task that is done, and honours the caller’s guard', async () => {
    const { id, account } = await runningTask();
    await h.deps.db.update(tasks).set({ workerId: 'w1' }).where(eq(tasks.id, id));
    // Another worker's end changes nothing: the guard names the owner.
    expect(await endTask(h.deps, id, { status: 'done', where: eq(tasks.workerId, 'w2') })).toBeUndefined();
    expect((await taskRow(h, id)).status).toBe('running');
    const done = await endTask(h.deps, id, { status: 'done', where: eq(tasks.workerId, 'w1') });
    expect(done).toMatchObject({ status: 'done', error: null });
    expect(await settlements(id)).toEqual(['hold', 'capture']);
    const [row] = await h.deps.db.select().from(workspaces).where(eq(workspaces.id, account.id));
    expect(row!.credits).toBe(0);
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(0);
  });

  it('ends a task once when a kill races a finish: one winner, one settlement, one count', async () => {
    const { id, account } = await runningTask();
    const before = (await finished('done')) + (await finished('cancelled'));
    const results = await Promise.all([
      endTask(h.deps, id, { status: 'done', where: eq(tasks.status, 'running') }),
      endTask(h.deps, id, { status: 'cancelled', error: 'killed by the caller' }),
    ]);
    const winners = results.filter((r) => r !== undefined);
    expect(winners).toHaveLength(1);
    expect((await taskRow(h, id)).status).toBe(winners[0]!.status);
    const kinds = await settlements(id);
    expect(kinds).toHaveLength(2);
    expect(kinds[1]).toBe(winners[0]!.status === 'done' ? 'capture' : 'release');
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(winners[0]!.status === 'done' ? 0 : 1);
    expect((await finished('done')) + (await finished('cancelled'))).toBe(before + 1);
    // An ended task stays ended: a late end is a no-op.
    expect(await endTask(h.deps, id, { status: 'failed', error: 'late' })).toBeUndefined();
    expect(await settlements(id)).toEqual(kinds);
    const [open] = await h.deps.db
      .select({ held: tasks.creditHeld })
      .from(tasks)
      .where(and(eq(tasks.id, id), eq(tasks.creditHeld, true)));
    expect(open).toBeUndefined();
  });
});
