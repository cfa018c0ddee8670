import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { expect, it } from 'vitest';
import type { Db } from '../../src/db/client.js';
import { migrationsFolder } from '../../src/db/client.js';
import * as schema from '../../src/db/schema.js';
import { taskJson } from '../../src/tasks/present.js';

/**
 * A database of the schema before tasks had a fixer (migrations up to 0016): after migration 0017
 * its tasks read as having run the pipeline (the only fixer a task could then choose; the
 * operator's EMEND_FIXER=agent predates the column by a day and never left a main release) and
 * its accounts have no default fixer.
 */
it('migration 0017 reads the tasks made before it as pipeline tasks and gives accounts no default', async () => {
  const before = mkdtempSync(join(tmpdir(), 'emend-migrations-'));
  const client = await PGlite.create();
  try {
    cpSync(migrationsFolder, before, { recursive: true });
    const journalPath = join(before, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
    const upTo = journal.entries.findIndex((e) => e.tag.startsWith('0017_'));
    expect(upTo).toBeGreaterThan(0);
    writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, upTo) }));
    await migrate(drizzle(client), { migrationsFolder: before });

    const account = randomUUID();
    const fix = randomUUID();
    const scaffold = randomUUID();
    await client.query(
      `INSERT INTO accounts (id, email, plan, created_at) VALUES ($1, 'a@example.com', 'pro', now())`,
      [account],
    );
    await client.query(
      `INSERT INTO tasks (id, account_id, task_type, mode, status, prompt, repo_url, created_at)
       VALUES ($1, $3, 'fix', 'pr', 'done', 'Fix the crash', 'https://github.com/psf/requests', now()),
              ($2, $3, 'scaffold', 'preview', 'done', 'A bakery site', NULL, now())`,
      [fix, scaffold, account],
    );

    await migrate(drizzle(client), { migrationsFolder });
    const db = drizzle(client, { schema }) as unknown as Db;
    const rows = await db.select().from(schema.tasks).where(eq(schema.tasks.workspaceId, account));
    // Both orders of the two random ids sorted alike.
    expect(rows.map((t) => [t.id, t.fixer]).sort()).toEqual(
      [
        [fix, 'pipeline'],
        [scaffold, 'pipeline'],
      ].sort(),
    );
    expect(taskJson(rows.find((t) => t.id === fix)!).fixer).toBe('pipeline');
    // Since 0018 the default fixer is the (personal) workspace's, carried over from the account.
    const [saved] = await db.select().from(schema.workspaces).where(eq(schema.workspaces.id, account));
    expect(saved!.fixer).toBeNull();
  } finally {
    await client.close();
    rmSync(before, { recursive: true, force: true });
  }
});
