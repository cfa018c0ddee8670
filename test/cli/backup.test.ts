import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type CliProcess,
  cliEnv,
  copyOfDataDir,
  freePort,
  jsonLine,
  killAll,
  newDataDir,
  removeDataDirs,
  runCli,
  startCli,
  waitForHealth,
} from './cli-process.js';

// `emend backup` / `emend restore` of the embedded database: a backup taken while a real server
// runs and keeps writing, restored into a new data dir, served again. PGlite only (the file name says so).

async function serve(dataDir: string) {
  const port = await freePort();
  const env = cliEnv({ EMEND_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
  const server = startCli(['serve'], env);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHealth(baseUrl, server);
  return { server, baseUrl, env };
}

async function stop(server: CliProcess) {
  server.child.kill('SIGTERM');
  return server.exited;
}

async function newToken(baseUrl: string, token: string, name: string): Promise<{ status: number; secret?: string }> {
  const res = await fetch(`${baseUrl}/v1/me/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  const body = (await res.json()) as { token?: string };
  return { status: res.status, secret: body.token };
}

const meStatus = async (baseUrl: string, token: string) =>
  (await fetch(`${baseUrl}/v1/me`, { headers: { authorization: `Bearer ${token}` } })).status;

describe('emend backup and restore on the embedded database', { timeout: 180_000 }, () => {
  let template: string;
  beforeAll(async () => {
    // initdb in WASM takes seconds: once, then copies.
    template = newDataDir();
    expect((await runCli(['migrate'], cliEnv({ EMEND_DATA_DIR: template }), 120_000)).code).toBe(0);
  }, 120_000);
  afterEach(killAll);
  afterAll(async () => {
    await killAll();
    removeDataDirs();
  });

  it('backs up while the server runs and writes, and the restored data dir serves what was there', async () => {
    const dataDir = copyOfDataDir(template);
    const { server, baseUrl, env } = await serve(dataDir);
    const created = jsonLine<{ token: string; email: string }>(
      await runCli(['accounts', 'create', '--email', 'ada@example.com', '--credits', '5'], env),
    );
    // Written through HTTP and answered 2xx before the backup begins: these must be in it.
    const before: string[] = [];
    for (let i = 0; i < 5; i++) {
      const t = await newToken(baseUrl, created.token, `before-${i}`);
      expect(t.status).toBe(201);
      before.push(t.secret!);
    }
    const keyRes = await fetch(`${baseUrl}/v1/me/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${created.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'openai', api_key: 'sk-backup-test-1234' }),
    });
    expect(keyRes.status).toBeLessThan(300);

    // Writes go on while the backup runs; none of them may fail.
    let writing = true;
    const during: number[] = [];
    const writer = (async () => {
      for (let i = 0; writing; i++) during.push((await newToken(baseUrl, created.token, `during-${i}`)).status);
    })();
    const file = join(newDataDir(), 'emend.backup.tar.gz');
    const backup = await runCli(['backup', file], env, 120_000);
    writing = false;
    await writer;
    expect(backup, backup.stderr).toMatchObject({ code: 0 });
    expect(backup.stderr).toContain("through the running server's socket");
    expect(backup.stderr).toContain('secret.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(during.length).toBeGreaterThan(0);
    expect(during.every((s) => s === 201)).toBe(true);
    // A restore into the data dir a server holds is refused; into a non-empty one without --force too.
    const refused = await runCli(['restore', file], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/emend server \(pid \d+\) is using .*; stop it before restoring/);
    expect((await stop(server)).code).toBe(0);
    const notEmpty = await runCli(['restore', file], env);
    expect(notEmpty.code).toBe(1);
    expect(notEmpty.stderr).toContain('is not empty');
    expect(notEmpty.stderr).toContain('--force');

    const fresh = newDataDir();
    const restored = await runCli(['restore', file], cliEnv({ EMEND_DATA_DIR: fresh }), 120_000);
    expect(restored, restored.stderr).toMatchObject({ code: 0 });
    expect(readFileSync(join(fresh, 'secret.key'))).toEqual(readFileSync(join(dataDir, 'secret.key')));
    expect(existsSync(join(fresh, 'emend.lock'))).toBe(false);

    const again = await serve(fresh);
    expect(await meStatus(again.baseUrl, created.token)).toBe(200);
    for (const secret of before) expect(await meStatus(again.baseUrl, secret)).toBe(200);
    const keys = await fetch(`${again.baseUrl}/v1/me/keys`, { headers: { authorization: `Bearer ${created.token}` } });
    expect(JSON.stringify(await keys.json())).toContain('1234');
    await stop(again.server);

    // --force replaces the database of a non-empty, stopped data dir.
    const forced = await runCli(['restore', file, '--force'], env, 120_000);
    expect(forced, forced.stderr).toMatchObject({ code: 0 });
  });

  it('backs up a data dir no server runs on, opening it itself', async () => {
    const dataDir = copyOfDataDir(template);
    const env = cliEnv({ EMEND_DATA_DIR: dataDir });
    const created = jsonLine<{ id: string }>(await runCli(['accounts', 'create', '--email', 'bo@example.com'], env));
    const file = join(newDataDir(), 'b.tar.gz');
    const backup = await runCli(['backup', file], env, 120_000);
    expect(backup, backup.stderr).toMatchObject({ code: 0 });
    expect(backup.stderr).toContain('opened directly');
    expect((await runCli(['backup', file], env)).stderr).toContain('exists already');
    const fresh = newDataDir();
    expect((await runCli(['restore', file], cliEnv({ EMEND_DATA_DIR: fresh }), 120_000)).code).toBe(0);
    // The account is in the restored database (a local command opens it directly).
    const token = await runCli(['accounts', 'token', '--email', 'bo@example.com'], cliEnv({ EMEND_DATA_DIR: fresh }));
    expect(token, token.stderr).toMatchObject({ code: 0 });
    expect(jsonLine<{ id: string }>(token).id).toBe(created.id);
  });

  it('sends PostgreSQL to pg_dump, and prints its usage', async () => {
    const pg = cliEnv({ DATABASE_URL: 'postgres://u@127.0.0.1:1/emend', EMEND_SECRET_KEY: 'a'.repeat(64) });
    const backup = await runCli(['backup', '/tmp/never-written'], pg);
    expect(backup.code).toBe(2);
    expect(backup.stderr).toContain('pg_dump');
    expect(existsSync('/tmp/never-written')).toBe(false);
    const restore = await runCli(['restore', '/tmp/never-read'], pg);
    expect(restore.code).toBe(2);
    expect(restore.stderr).toContain('pg_restore');
    for (const command of ['backup', 'restore']) {
      const help = await runCli([command, '--help'], cliEnv({}));
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`emend ${command} FILE`);
      expect(help.stdout).toContain('--data-dir');
    }
    expect((await runCli(['backup'], cliEnv({}))).code).toBe(2);
  });
});
