import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import type { Db } from '../../src/db/client.js';
import { migrationsFolder } from '../../src/db/client.js';
import * as schema from '../../src/db/schema.js';

/** A database of an older schema, for writing the rows an upgraded deployment would have. */
export interface OlderDatabase {
  /** Raw SQL only: the drizzle schema describes the latest tables, not these. */
  client: PGlite;
  /** Runs the migrations left (the one named and all after it); answers the database as the service reads it. */
  migrateToLatest(): Promise<Db>;
  close(): Promise<void>;
}

/**
 * A PGlite database migrated up to, not including, the migration whose tag starts with
 * `migration` (e.g. '0018'): the migrations before it, applied from a copy of migrations/
 * whose journal stops there.
 */
export async function databaseBefore(migration: string): Promise<OlderDatabase> {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
    entries: { tag: string }[];
  };
  const upTo = journal.entries.findIndex((e) => e.tag.startsWith(`${migration}_`));
  if (upTo < 1) throw new Error(`no migration ${migration} with one before it in migrations/meta/_journal.json`);
  const before = mkdtempSync(join(tmpdir(), 'emend-migrations-'));
  const client = await PGlite.create();
  try {
    cpSync(migrationsFolder, before, { recursive: true });
    writeFileSync(
      join(before, 'meta', '_journal.json'),
      JSON.stringify({ ...journal, entries: journal.entries.slice(0, upTo) }),
    );
    await migrate(drizzle(client), { migrationsFolder: before });
  } catch (err) {
    await client.close();
    throw err;
  } finally {
    rmSync(before, { recursive: true, force: true });
  }
  return {
    client,
    async migrateToLatest() {
      await migrate(drizzle(client), { migrationsFolder });
      return drizzle(client, { schema }) as unknown as Db;
    },
    close: () => client.close(),
  };
}
