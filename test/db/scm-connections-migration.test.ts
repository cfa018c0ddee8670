import { randomBytes, randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { connectionsOf, scmTokenOn } from '../../src/workspaces/scm-connection.js';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/config.js';
import { encryptSecret } from '../../src/secrets/box.js';
import { defaultHost } from '../../src/scm/hosts.js';
import { databaseBefore } from '../support/database-at.js';

/**
 * A deployment upgraded from one GitHub host (accounts.scm_login / scm_token_enc) keeps its
 * connections: migration 0013 moves them to scm_connections under the host id `github`, which
 * the unchanged EMEND_SCM_* configuration names, and the stored token still decrypts.
 */
// (120 s: it builds a database at an old migration and runs every later one, a few seconds
// alone and over 30 s on PGlite while other test files load the machine.)
it('migration 0013 keeps the connections made before several hosts, usable with the old configuration', async () => {
  // the migrations up to 0012
  const old = await databaseBefore('0013');
  const { client } = old;
  try {
    const key = randomBytes(32);
    const connected = randomUUID();
    const never = randomUUID();
    const token = `ghp_${randomBytes(18).toString('hex')}`;
    await client.query(
      `INSERT INTO accounts (id, email, scm_login, scm_token_enc, created_at) VALUES ($1, 'a@example.com', 'octo', $2, now()),
       ($3, 'b@example.com', NULL, NULL, now())`,
      [connected, encryptSecret(key, token, `scm-token:${connected}`), never],
    );

    const db = await old.migrateToLatest();
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
    await old.close();
  }
}, 120_000);
