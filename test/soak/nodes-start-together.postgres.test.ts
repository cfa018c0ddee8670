import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { type Database, openPostgres, runMigrations } from '../../src/db/client.js';
import { createTaskQueue } from '../../src/queue/task-queue.js';

// Found by the soak: two API nodes started at once on a new database, one exited with
// "duplicate key value violates unique constraint pg_namespace_nspname_index" (pg-boss's
// `create schema if not exists` racing). Installing the queue now waits on the schema lock.
describe('processes starting together on a new PostgreSQL database', { timeout: 60_000 }, () => {
  const opened: Database[] = [];
  afterAll(async () => {
    for (const d of opened) await d.close().catch(() => {});
  });

  it('all migrate and install the queue; none fails', async () => {
    const name = `fresh_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = inject('pgAdminUrl').replace(/\/postgres$/, `/${name}`);
    for (let i = 0; i < 3; i++) opened.push(openPostgres(url, { max: 3 }));
    const started = await Promise.allSettled(
      opened.map(async (d) => {
        await runMigrations(d);
        return createTaskQueue(d, { supervise: false });
      }),
    );
    expect(started.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))).toEqual(['ok', 'ok', 'ok']);
    const queues = started.map((r) => (r as PromiseFulfilledResult<Awaited<ReturnType<typeof createTaskQueue>>>).value);
    await queues[0]!.enqueue('0190e4a4-0000-7000-8000-000000000001');
    expect(await queues[2]!.depth()).toBe(1);
    for (const q of queues) await q.stop();
  });
});
