import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { type Database, migrationsFolder, openPostgres, runMigrations } from '../../src/db/client.js';

// Kubernetes starts every API and worker replica of a rollout at once, and each migrates at
// start-up (docs/operations.md, "Deploy on Kubernetes"): the advisory lock must make them
// apply each migration exactly once, the others waiting and then finding nothing to do.
const MIGRATORS = 5;

async function freshDatabase(): Promise<string> {
  const name = `migrate_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  return inject('pgAdminUrl').replace(/\/postgres$/, `/${name}`);
}

describe('N replicas migrating one new PostgreSQL database together', { timeout: 60_000 }, () => {
  const opened: Database[] = [];
  afterAll(async () => {
    for (const d of opened) await d.close().catch(() => {});
  });

  it('apply each migration once: the others wait on the lock, then find the schema current', async () => {
    const url = await freshDatabase();
    const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
      entries: { tag: string }[];
    };
    // An outside session holds the lock first, so all N are provably waiting together when it is let go.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    await holder.query('select pg_advisory_lock(7242019)');
    for (let i = 0; i < MIGRATORS; i++) opened.push(openPostgres(url, { max: 2 }));
    const runs = Promise.allSettled(opened.map((d) => runMigrations(d)));
    const waiting = async () =>
      (
        await holder.query<{ n: number }>(
          // This database's waiters only: the other test files on the same server migrate their own
          // databases under the same lock number at the same time (seen as 7 waiting, not 5).
          "select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and objid = 7242019 " +
            'and database = (select oid from pg_database where datname = current_database())',
        )
      ).rows[0]!.n;
    try {
      const deadline = Date.now() + 20_000;
      while ((await waiting()) < MIGRATORS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(await waiting()).toBe(MIGRATORS);
      // Nothing was applied while the lock was held elsewhere.
      const before = await holder.query("select to_regclass('drizzle.__drizzle_migrations') as t");
      expect(before.rows[0].t).toBeNull();
    } finally {
      // Let go whatever happened above: the migrators (and the databases' close) would wait on it for ever.
      await holder.query('select pg_advisory_unlock(7242019)');
    }

    const results = await runs;
    expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))).toEqual(
      Array(MIGRATORS).fill('ok'),
    );
    const applied = await holder.query<{ hash: string; n: number }>(
      'select hash, count(*)::int as n from drizzle.__drizzle_migrations group by hash',
    );
    await holder.end();
    expect(applied.rows).toHaveLength(journal.entries.length);
    expect(applied.rows.filter((r) => r.n !== 1)).toEqual([]);
  });
});
