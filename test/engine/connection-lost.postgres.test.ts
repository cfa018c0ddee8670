import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { openTestDatabase, postgresUrlOf } from '../support/test-db.js';

let database: Database | undefined;

afterEach(async () => {
  await database?.close();
  database = undefined;
});

// Found by the soak: a worker exited with code 1 while PostgreSQL restarted. A pool client
// that is checked out (a transaction waiting on the service between two statements) has no
// 'error' listener of the pool's; when its connection dies it emits 'error' to nobody, which
// Node turns into an uncaught exception that ends the process. The transaction must fail
// instead, and the process go on.
describe('a checked-out connection that dies', () => {
  it('fails the transaction holding it, and raises no uncaught error', async () => {
    database = await openTestDatabase();
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    const admin = new pg.Client({ connectionString: postgresUrlOf(database) });
    await admin.connect();
    try {
      let pid = 0;
      let resume: () => void = () => {};
      const paused = new Promise<void>((r) => (resume = r));
      const tx = database.db.transaction(async (t) => {
        const rows = await t.execute(sql`select pg_backend_pid() as pid`);
        pid = Number((rows as unknown as { rows: { pid: number }[] }).rows[0]!.pid);
        resume();
        // the service's own work between statements: the connection is lost meanwhile
        await new Promise((r) => setTimeout(r, 300));
        await t.execute(sql`select 1`);
      });
      await paused;
      await admin.query('select pg_terminate_backend($1)', [pid]);
      await expect(tx).rejects.toThrow();
      await new Promise((r) => setTimeout(r, 100));
      expect(uncaught).toEqual([]);
      // the pool still serves
      const after = await database.db.execute(sql`select 1 as one`);
      expect((after as unknown as { rows: { one: number }[] }).rows[0]!.one).toBe(1);
    } finally {
      process.off('uncaughtException', onUncaught);
      await admin.end();
    }
  });
});
