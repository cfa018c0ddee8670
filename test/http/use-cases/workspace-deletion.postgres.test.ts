import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../../src/db/client.js';
import * as schema from '../../../src/db/schema.js';
import { lockWorkspace } from '../../../src/workspaces/workspaces.js';
import { taskRow } from '../../feedback/seed.js';
import { type Harness, newAccount, startHarness } from '../../support/harness.js';

/**
 * A workspace's deletion against a task admitted meanwhile (issue 42, point 6). PostgreSQL only:
 * PGlite has one connection, so there the task's transaction and the deletion cannot interleave.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

type Auth = Record<string, string>;
const call = (auth: Auth, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  h.app.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) });

async function ok(auth: Auth, method: Parameters<typeof call>[1], url: string, payload?: object) {
  const res = await call(auth, method, url, payload);
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res;
}

describe('a task admitted while the deletion waits', () => {
  it('makes the deletion a 409 and keeps the task: the check is repeated under the workspace lock', async () => {
    const owner = await newAccount(h, { scm: false });
    const ws = (await ok(owner.auth, 'POST', '/v1/workspaces', { name: 'Racing' })).json().id as string;
    const auth = {
      authorization: `Bearer ${(await ok(owner.auth, 'POST', '/v1/me/tokens', { workspace_id: ws })).json().token}`,
    };
    // Admission's way: the workspace locked, the task inserted, committed only once the deletion waits.
    const task = taskRow(ws, 1, { status: 'pending', prUrl: null, finishedAt: null, createdBy: owner.account.id });
    let locked!: () => void;
    let release!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const released = new Promise<void>((r) => (release = r));
    const admitting = h.deps.db.transaction(async (tx) => {
      await lockWorkspace(tx, ws);
      await tx.insert(schema.tasks).values(task);
      locked();
      await released;
    });
    await isLocked;
    const deleting = call(auth, 'DELETE', `/v1/workspaces/${ws}`);
    // A row lock is waited for on the holder's transaction id (a lock with no database): the
    // waiting backend is one of this database's.
    const waiting = sql`select count(*)::int as n from pg_locks where not granted
      and pid in (select pid from pg_stat_activity where datname = current_database())`;
    try {
      for (let i = 0; (await queryRows<{ n: number }>(h.deps.db, waiting))[0]!.n === 0; i++) {
        expect(i, 'the deletion never waited for the workspace lock').toBeLessThan(200);
        await new Promise((r) => setTimeout(r, 25));
      }
    } finally {
      release();
      await admitting;
    }
    const res = await deleting;
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().message).toContain(task.id);
    expect(await h.deps.db.select().from(schema.tasks).where(eq(schema.tasks.id, task.id))).toHaveLength(1);
    const [row] = await h.deps.db.select().from(schema.workspaces).where(eq(schema.workspaces.id, ws));
    expect(row!.deletedAt).toBeNull();
  });
});
