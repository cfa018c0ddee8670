import { randomBytes, randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { expect, it } from 'vitest';
import { connectionsOf, scmTokenOn } from '../../src/accounts/scm-connection.js';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/config.js';
import type { Db } from '../../src/db/client.js';
import { migrationsFolder } from '../../src/db/client.js';
import * as schema from '../../src/db/schema.js';
import { encryptSecret } from '../../src/secrets/box.js';
import { defaultHost } from '../../src/scm/hosts.js';

/**
 * A deployment upgraded from one GitHub host (accounts.scm_login / scm_token_enc) keeps its
 * connections: migration 0013 moves them to scm_connections under the host id `github`, which
 * the unchanged EMEND_SCM_* configuration names, and the stored token still decrypts.
 */
it('migration 0013 keeps the connections made before several hosts, usable with the old configuration', async () => {
  const before = mkdtempSync(join(tmpdir(), 'emend-migrations-'));
  const client = await PGlite.create();
  try {
    // the migrations up to 0012: the journal cut before 0013
    cpSync(migrationsFolder, before, { recursive: true });
    const journalPath = join(before, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
    const upTo = journal.entries.findIndex((e) => e.tag.startsWith('0013_'));
    expect(upTo).toBeGreaterThan(0);
    writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, upTo) }));
    await migrate(drizzle(client), { migrationsFolder: before });

    const key = randomBytes(32);
    const connected = randomUUID();
    const never = randomUUID();
    const token = `ghp_${randomBytes(18).toString('hex')}`;
    await client.query(
      `INSERT INTO accounts (id, email, scm_login, scm_token_enc, created_at) VALUES ($1, 'a@example.com', 'octo', $2, now()),
       ($3, 'b@example.com', NULL, NULL, now())`,
      [connected, encryptSecret(key, token, `scm-token:${connected}`), never],
    );

    await migrate(drizzle(client), { migrationsFolder });
    const db = drizzle(client, { schema }) as unknown as Db;
    const deps = {
      db,
      config: loadConfig({
        EMEND_SCM_WEB_URL: 'https://github.example.com',
        EMEND_SCM_API_URL: 'https://github.example.com/api/v3',
      }),
      fetch: globalThis.fetch,
      secretKey: key,
      clock: systemClock,
    };
    const host = defaultHost(deps.config);
    expect(host.id).toBe('github');
    expect(await scmTokenOn(deps, connected, host)).toBe(token);
    expect((await connectionsOf(deps, connected)).map((c) => [c.host.id, c.login])).toEqual([['github', 'octo']]);
    expect(await scmTokenOn(deps, never, host)).toBeUndefined();
    const columns = await client.query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'accounts'",
    );
    expect(columns.rows.map((r) => r.column_name)).not.toContain('scm_token_enc');
  } finally {
    await client.close();
    rmSync(before, { recursive: true, force: true });
  }
});
