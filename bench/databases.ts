import pg from 'pg';
import { type Database, openPglite, openPostgres } from '../src/db/client.js';
import { findPostgresBin, startCluster } from '../test/support/postgres-cluster.js';
import { log } from './stats.js';

/**
 * Runs a benchmark on each database emend supports: PGlite in this process, then PostgreSQL —
 * DATABASE_URL when `useDatabaseUrl` and it is set, else a throwaway local cluster (fsync off)
 * when the server binaries are installed. `run` gets a label, the database and its URL.
 */
export async function onEachDatabase(
  labels: { pglite: string; postgres: string },
  run: (label: string, database: Database, url?: string) => Promise<void>,
  options: { useDatabaseUrl?: boolean } = {},
): Promise<void> {
  const pglite = await openPglite(undefined);
  try {
    await run(labels.pglite, pglite);
  } finally {
    await pglite.close();
  }

  const given = options.useDatabaseUrl ? process.env.DATABASE_URL : undefined;
  if (given) {
    const postgres = openPostgres(given);
    try {
      await run('PostgreSQL (DATABASE_URL)', postgres, given);
    } finally {
      await postgres.close();
    }
    return;
  }
  const bin = findPostgresBin();
  if (!bin) {
    log('\nPostgreSQL: no server binaries under /usr/lib/postgresql; measured PGlite only.');
    return;
  }
  const cluster = await startCluster(bin);
  try {
    const admin = new pg.Client({ connectionString: cluster.url('postgres') });
    await admin.connect();
    await admin.query('create database emend_bench');
    await admin.end();
    const url = cluster.url('emend_bench');
    const postgres = openPostgres(url);
    try {
      await run(labels.postgres, postgres, url);
    } finally {
      await postgres.close();
    }
  } finally {
    cluster.stop();
  }
}
