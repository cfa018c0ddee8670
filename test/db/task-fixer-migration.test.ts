import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { expect, it } from 'vitest';
import * as schema from '../../src/db/schema.js';
import { taskJson } from '../../src/tasks/present.js';
import { databaseBefore } from '../support/database-at.js';

/**
 * A database of the schema before tasks had a fixer (migrations up to 0016): after migration 0017
 * its tasks read as having run the pipeline (the only fixer a task could then choose; the
 * operator's EMEND_FIXER=agent predates the column by a day and never left a main release) and
 * its accounts have no default fixer.
 */
// (120 s: it builds a database at an old migration and runs every later one, a few seconds
// alone and over 30 s on PGlite while other test files load the machine.)
it('migration 0017 reads the tasks made before it as pipeline tasks and gives accounts no default', async () => {
  const old = await databaseBefore('0017');
  const { client } = old;
  try {
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

    const db = await old.migrateToLatest();
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
    await old.close();
  }
}, 120_000);
