import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { Config } from '../config.js';
import { type Database, openPglite, openPostgres, runMigrations } from './client.js';
import { acquireDataDirLock, lockHolder } from './data-dir-lock.js';

export const pgliteDir = (dataDir: string) => join(dataDir, 'pgdata');
// node-postgres looks for "<host>/.s.PGSQL.<port>" when host is a directory.
export const socketPath = (dataDir: string) => join(dataDir, '.s.PGSQL.5432');

/**
 * Opens the database the server owns: PostgreSQL when DATABASE_URL is set; otherwise the
 * embedded PGlite data dir, locked to this process and shared with other local emend
 * processes (CLI, extra workers) over a Unix socket in the data dir.
 */
export async function openServerDatabase(config: Config): Promise<Database> {
  if (config.databaseUrl) {
    const database = openPostgres(config.databaseUrl);
    await runMigrations(database);
    return database;
  }
  const release = acquireDataDirLock(config.dataDir);
  try {
    const database = await openPglite(pgliteDir(config.dataDir));
    await runMigrations(database);
    const server = new PGLiteSocketServer({ db: database.pglite!, path: socketPath(config.dataDir), maxConnections: 16 });
    await server.start();
    return {
      ...database,
      close: async () => {
        await server.stop().catch(() => {});
        await database.close();
        release();
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}

/** True when a live server holds the data dir and serves its socket (waiting while it starts up). */
async function serverSocketReady(dataDir: string, waitMs = 60_000): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  while (lockHolder(dataDir) !== undefined) {
    if (existsSync(socketPath(dataDir))) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/**
 * Opens the database for a CLI command: through the running server's socket when the
 * embedded server holds the data dir, directly (and locked) when nobody does.
 */
export async function openClientDatabase(config: Config): Promise<Database> {
  if (config.databaseUrl) {
    const database = openPostgres(config.databaseUrl, { max: 2 });
    await runMigrations(database);
    return database;
  }
  if (await serverSocketReady(config.dataDir)) {
    // The server migrated on start; we only talk to it.
    return openPostgres(undefined, { socketDir: config.dataDir, max: 1 });
  }
  const release = acquireDataDirLock(config.dataDir);
  try {
    const database = await openPglite(pgliteDir(config.dataDir));
    await runMigrations(database);
    return {
      ...database,
      close: async () => {
        await database.close();
        release();
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}
