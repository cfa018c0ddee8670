import type { PGlite } from '@electric-sql/pglite';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Config } from '../config/config.js';
import { type Database, type PostgresOptions, openPglite, openPostgres, runMigrations } from './client.js';
import { DataDirLockedError, acquireDataDirLock, lockHolder } from './data-dir-lock.js';
import { servePgliteOnSocket } from './pglite-socket.js';

export const pgliteDir = (dataDir: string) => join(dataDir, 'pgdata');
// node-postgres looks for "<host>/.s.PGSQL.<port>" when host is a directory.
export const socketPath = (dataDir: string) => join(dataDir, '.s.PGSQL.5432');

/**
 * Opens the database the server owns: PostgreSQL when DATABASE_URL is set; otherwise the
 * embedded PGlite data dir, locked to this process and shared with other local emend
 * processes (CLI, extra workers) over a Unix socket in the data dir.
 */
export async function openServerDatabase(config: Config): Promise<Database> {
  if (config.databaseUrl) return migratedPostgres(config.databaseUrl);
  // The server also shares the data dir with other local emend processes on its socket.
  return openLockedPglite(config, 'serve', async (pglite) => {
    const socket = await servePgliteOnSocket(pglite, socketPath(config.dataDir));
    return () => socket.close();
  });
}

/** PostgreSQL at `url`, migrated; closed again when the migrations fail. */
async function migratedPostgres(url: string, options: PostgresOptions = {}): Promise<Database> {
  const database = openPostgres(url, options);
  try {
    await runMigrations(database);
  } catch (err) {
    await database.close().catch(() => {});
    throw err;
  }
  return database;
}

/** True when something accepts connections on the Unix socket at path. */
function socketAccepts(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/**
 * Opens the database for a CLI command: PostgreSQL when DATABASE_URL is set; otherwise
 * through the running server's socket when an emend server holds the data dir (waiting
 * while it starts up), or directly, under the lock, when nobody does (waiting while
 * another CLI command holds the data dir).
 */
export async function openClientDatabase(
  config: Config,
  options: { waitMs?: number; connections?: number } = {},
): Promise<Database> {
  // A CLI command needs one connection; a worker one per task it runs, plus its LISTEN and the queue's.
  const max = options.connections ?? 2;
  if (config.databaseUrl) return migratedPostgres(config.databaseUrl, { max });
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  for (;;) {
    const holder = lockHolder(config.dataDir);
    if (holder === undefined) {
      try {
        return await openLockedPglite(config, 'cli');
      } catch (err) {
        if (!(err instanceof DataDirLockedError)) throw err;
        // Someone took the lock between our look and our try: look again.
      }
    } else if (holder.role === 'serve' && (await socketAccepts(socketPath(config.dataDir)))) {
      // The server migrated when it started; we only talk to it.
      return openPostgres(undefined, { socketDir: config.dataDir, max });
    }
    if (Date.now() > deadline) {
      throw holder
        ? new DataDirLockedError(config.dataDir, holder.pid)
        : new Error(`could not open the data dir ${config.dataDir}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Opens the embedded data dir under the lock and migrates it; `share` may attach more to it
 * (the server's socket), undone before the database closes. The lock is released last.
 */
async function openLockedPglite(
  config: Config,
  role: 'serve' | 'cli',
  share?: (pglite: PGlite) => Promise<() => Promise<void>>,
): Promise<Database> {
  const release = acquireDataDirLock(config.dataDir, role);
  let database: Database | undefined;
  try {
    database = await openPglite(pgliteDir(config.dataDir));
    await runMigrations(database);
    const unshare = share ? await share(database.pglite!) : async () => {};
    const opened = database;
    return {
      ...opened,
      close: async () => {
        try {
          await unshare();
          await opened.close();
        } finally {
          release();
        }
      },
    };
  } catch (err) {
    await database?.close().catch(() => {});
    release();
    throw err;
  }
}
