import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { openTestDatabase, postgresUrlOf } from '../support/test-db.js';
import {
  cliEnv,
  freePort,
  jsonLine,
  killAll,
  newDataDir,
  removeDataDirs,
  runCli,
  startCli,
  waitForHealth,
} from './cli-process.js';

// With DATABASE_URL the CLI and the server talk to PostgreSQL directly; no data-dir lock.
describe('emend CLI on PostgreSQL', { timeout: 60_000 }, () => {
  let database: Database;
  let url: string;

  beforeAll(async () => {
    database = await openTestDatabase();
    url = postgresUrlOf(database)!;
    expect(url).toMatch(/^postgres:\/\//);
  });
  afterEach(killAll);
  afterAll(async () => {
    await killAll();
    await database.close();
    removeDataDirs();
  });

  it('creates and changes accounts, and serves them with the database it was given', async () => {
    const dataDir = newDataDir();
    const env = cliEnv({ DATABASE_URL: url, EMEND_DATA_DIR: dataDir });
    expect(await runCli(['migrate'], env)).toMatchObject({ code: 0, stdout: 'migrations applied\n' });

    const created = jsonLine<{ id: string; email: string; plan: string; credits: number; token: string }>(
      await runCli(
        ['accounts', 'create', '--email', 'erin@example.com', '--plan', 'pro', '--credits', '3', '--admin'],
        env,
      ),
    );
    expect(created).toMatchObject({ email: 'erin@example.com', plan: 'pro', credits: 3 });
    expect(created.token).toMatch(/^tk_[A-Za-z0-9_-]{40,}$/);
    expect(
      jsonLine(await runCli(['accounts', 'set', '--email', 'erin@example.com', '--credits', '12'], env)),
    ).toMatchObject({ plan: 'pro', credits: 12 });
    // The data dir is not PGlite's here: nothing opened, nothing locked.
    expect(existsSync(join(dataDir, 'pgdata'))).toBe(false);
    expect(existsSync(join(dataDir, 'emend.lock'))).toBe(false);

    const port = await freePort();
    const secret = randomBytes(32).toString('hex');
    const server = startCli(['serve', '--port', String(port), '--host', '127.0.0.1'], {
      ...env,
      EMEND_SECRET_KEY: secret,
    });
    const baseUrl = `http://127.0.0.1:${port}`;
    expect(await waitForHealth(baseUrl, server)).toMatchObject({ ok: true, database: 'postgres' });

    // Commands while it serves reach the same database; the server sees their changes.
    expect(
      jsonLine(await runCli(['accounts', 'set', '--email', 'erin@example.com', '--plan', 'scale'], env)),
    ).toMatchObject({ plan: 'scale' });
    const me = await fetch(`${baseUrl}/v1/me`, { headers: { authorization: `Bearer ${created.token}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ email: 'erin@example.com', plan: 'scale', credits: 12 });
    const row = await database.pool!.query('select is_admin from accounts where email = $1', ['erin@example.com']);
    expect(row.rows).toEqual([{ is_admin: true }]);

    server.child.kill('SIGTERM');
    expect(await server.exited).toMatchObject({ code: 0, signal: null });
  });

  it('will not serve without EMEND_SECRET_KEY: a generated per-machine key would not do for several nodes', async () => {
    const exit = await runCli(
      ['serve'],
      cliEnv({ DATABASE_URL: url, EMEND_DATA_DIR: newDataDir(), PORT: String(await freePort()) }),
    );
    expect(exit.code).not.toBe(0);
    expect(exit.stderr).toMatch(/EMEND_SECRET_KEY: must be set when DATABASE_URL is/);
  });

  it('fails with a plain message when PostgreSQL cannot be reached', async () => {
    const port = await freePort();
    const exit = await runCli(
      ['accounts', 'create', '--email', 'x@example.com'],
      cliEnv({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/nothing` }),
    );
    expect(exit.code).toBe(1);
    expect(exit.stderr).toMatch(/^emend: .*ECONNREFUSED/m);
  });
});
