import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { type SQL, sql } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { schema } from './schema.js';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

/**
 * The handle `db.transaction(fn)` passes to `fn`. A Tx is also a Db, so a function that may run
 * inside or outside a transaction takes a Db; one that must run inside one takes a Tx.
 */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

/**
 * A hook an act offers into the transaction that commits its own change, run last in it (with what
 * the act made): the act's audit row goes there, so the row and the change commit or fail together.
 */
export type Within<T = void> = (tx: Tx, result: T) => Promise<void>;

/** An open database: Drizzle on top, and the driver underneath for what Drizzle does not cover. */
export interface Database {
  kind: 'pglite' | 'postgres';
  db: Db;
  /** Present for the embedded database: the socket server and the queue adapter need it. */
  pglite?: PGlite;
  pool?: pg.Pool;
  close(): Promise<void>;
}

export const migrationsFolder = fileURLToPath(new URL('../../migrations', import.meta.url));

// Stable key for the advisory lock that serialises migrations across processes.
const MIGRATION_LOCK_KEY = 7_242_019;

export async function openPglite(
  dataDir: string | undefined,
  options: {
    loadDataDir?: Blob;
    /** PostgreSQL settings (`shared_buffers: '16MB'`), beside PGlite's own start parameters. */
    settings?: Record<string, string>;
  } = {},
): Promise<Database> {
  const settings = Object.entries(options.settings ?? {}).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  const client = await PGlite.create({
    dataDir,
    loadDataDir: options.loadDataDir,
    ...(settings.length > 0 ? { startParams: [...PGlite.defaultStartParams, ...settings] } : {}),
  });
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  return { kind: 'pglite', db, pglite: client, close: () => client.close() };
}

export interface PostgresOptions {
  /** Connect through a Unix socket directory (the embedded server's data dir). */
  socketDir?: string;
  max?: number;
}

export function openPostgres(url: string | undefined, options: PostgresOptions = {}): Database {
  const pool = new pg.Pool(
    options.socketDir
      ? { host: options.socketDir, port: 5432, user: 'postgres', database: 'postgres', max: options.max ?? 4 }
      : { connectionString: url, max: options.max ?? 10 },
  );
  // An idle client losing its connection must not take the process down.
  pool.on('error', () => {});
  // Nor a checked-out one: the pool listens to its clients only while they are idle, and a
  // client whose connection dies between two statements of a transaction emits 'error' to
  // nobody, which Node makes an uncaught exception (a worker exited so when PostgreSQL
  // restarted). Its next statement fails, and that failure is what the holder handles.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  return { kind: 'postgres', db, pool, close: () => pool.end() };
}

export async function runMigrations(database: Database): Promise<void> {
  if (database.pglite) {
    await migratePglite(drizzlePglite(database.pglite), { migrationsFolder });
    return;
  }
  // Several API nodes may start at once: one migrates while the others wait on the lock.
  await withSchemaLock(database, async (client) => {
    await migratePg(drizzlePg(client), { migrationsFolder });
  });
}

/**
 * Runs `fn` holding the cluster-wide lock that serialises schema changes across processes
 * (our migrations, and pg-boss installing its own schema, whose `create schema if not exists`
 * fails with a duplicate key when two processes race on a fresh database). PostgreSQL (or the
 * embedded database over its socket) only; PGlite in-process has a single user already.
 */
export async function withSchemaLock<T>(database: Database, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await database.pool!.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    return await fn(client);
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    client.release();
  }
}

/** Runs a raw statement and returns its rows, whichever driver is underneath. */
export async function queryRows<T>(db: Db, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}

export async function ping(db: Db): Promise<boolean> {
  try {
    await db.execute(sql`select 1`);
    return true;
  } catch {
    return false;
  }
}
