import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import { type Database, openPglite, openPostgres } from '../../src/db/client.js';

/** The migrated template, read once per process: a Blob is immutable, so every open shares it. */
let template: Blob | undefined;

/**
 * A fresh, migrated database of the kind this test project runs on: PGlite loaded into
 * memory from the migrated template, or a PostgreSQL database copied from the template.
 */
export async function openTestDatabase(): Promise<Database> {
  if (inject('dbKind') === 'pglite') {
    template ??= new Blob([readFileSync(inject('pgliteTemplate'))]);
    // PostgreSQL clears its shared buffers at start: 16 MB instead of the default 128 MB makes
    // each test's database open in about 0.38 s instead of 0.53 s, half the pages touched (the
    // suite opens hundreds). A test's database holds kilobytes.
    return openPglite(undefined, {
      loadDataDir: template,
      settings: { shared_buffers: '16MB' },
    });
  }
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${inject('pgTemplate')}`);
  } finally {
    await admin.end();
  }
  return openPostgres(inject('pgAdminUrl').replace(/\/postgres$/, `/${name}`), { max: 20 });
}

/** A connection string for the test database, for child processes (postgres leg only). */
export function postgresUrlOf(database: Database): string | undefined {
  const pool = database.pool as (pg.Pool & { options: { connectionString?: string } }) | undefined;
  return pool?.options.connectionString;
}
