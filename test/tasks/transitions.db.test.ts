import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tasks } from '../../src/db/schema.js';
import { TASK_STATUSES, TRANSITIONS, type TaskStatus } from '../../src/tasks/states.js';
import { moveTask } from '../../src/tasks/transitions.js';
import { taskRow } from '../support/engine.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

let h: Harness;
let auth: Record<string, string>;
beforeAll(async () => {
  h = await startHarness();
  // the public repositories these tests name, on the code host the service asks
  h.github.createRepo('a', 'b');
  ({ auth } = await newAccount(h, { plan: 'scale', credits: 1000 }));
});
afterAll(() => h.close());

// A legal path from pending to each state, walked one update at a time.
const PATH: Record<TaskStatus, TaskStatus[]> = {
  pending: [],
  running: ['running'],
  awaiting_plan: ['running', 'awaiting_plan'],
  awaiting_diff: ['running', 'awaiting_diff'],
  done: ['running', 'done'],
  failed: ['failed'],
  cancelled: ['cancelled'],
};

async function taskIn(status: TaskStatus): Promise<string> {
  h.clock.advance(61_000); // stay clear of the task-creation rate limit
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/tasks',
    headers: auth,
    payload: { prompt: 'state machine', repo_url: 'https://github.com/a/b' },
  });
  const id = res.json().id as string;
  for (const step of PATH[status]) await h.deps.db.update(tasks).set({ status: step }).where(eq(tasks.id, id));
  return id;
}

describe('the task state machine', () => {
  it('the database allows exactly the edges of the transition table, whatever code issues the update', async () => {
    const observed: string[] = [];
    for (const from of TASK_STATUSES) {
      for (const to of TASK_STATUSES) {
        if (from === to) continue;
        const id = await taskIn(from);
        const ok = await h.deps.db
          .update(tasks)
          .set({ status: to })
          .where(eq(tasks.id, id))
          .then(() => true)
          .catch((err: Error & { cause?: Error }) => {
            // Drizzle wraps the driver's error; the trigger's words are in the cause.
            expect(String(err.cause?.message ?? err.message)).toMatch(/illegal task transition/);
            return false;
          });
        expect((await taskRow(h, id)).status).toBe(ok ? to : from);
        if (ok) observed.push(`${from}->${to}`);
        // tidy up: finish whatever is still active so the concurrency cap never bites
        const now = (await taskRow(h, id)).status;
        if (now === 'pending' || now === 'awaiting_plan' || now === 'awaiting_diff' || now === 'running') {
          await h.deps.db.update(tasks).set({ status: 'cancelled' }).where(eq(tasks.id, id));
        }
      }
    }
    const table = TASK_STATUSES.flatMap((from) => TRANSITIONS[from].map((to) => `${from}->${to}`));
    expect(observed.sort()).toEqual(table.sort());
  });

  it('rejects unknown statuses', async () => {
    const id = await taskIn('pending');
    await expect(h.deps.db.update(tasks).set({ status: 'paused' }).where(eq(tasks.id, id))).rejects.toThrow();
    await h.deps.db.update(tasks).set({ status: 'cancelled' }).where(eq(tasks.id, id));
  });

  it('moveTask is a no-op, not an error, when the task is not in a source state', async () => {
    const id = await taskIn('done');
    expect(await moveTask(h.deps.db, id, 'running')).toBeUndefined();
    expect(await moveTask(h.deps.db, id, 'cancelled')).toBeUndefined();
    expect((await taskRow(h, id)).status).toBe('done');
    const pending = await taskIn('pending');
    expect((await moveTask(h.deps.db, pending, 'running'))?.status).toBe('running');
    expect(await moveTask(h.deps.db, pending, 'running')).toBeUndefined();
    expect((await moveTask(h.deps.db, pending, 'running', {}, undefined, true))?.status).toBe('running');
    await moveTask(h.deps.db, pending, 'cancelled');
  });
});
