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

// The embedded database's process model: only `emend serve` opens the data dir; other emend
// processes reach the database through the server's socket, or open the data dir themselves
// when no server runs. These are about PGlite, so they run on the pglite leg only (the file name says so).

interface Created {
  id: string;
  email: string;
  plan: string;
  credits: number;
  token: string;
}

async function serve(dataDir: string, extra: Record<string, string> = {}) {
  const port = await freePort();
  const env = cliEnv({ EMEND_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', ...extra });
  const server = startCli(['serve'], env);
  const baseUrl = `http://127.0.0.1:${port}`;
  const health = await waitForHealth(baseUrl, server);
  return { server, baseUrl, health, env };
}

async function me(baseUrl: string, token: string) {
  const res = await fetch(`${baseUrl}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function stop(server: CliProcess) {
  server.child.kill('SIGTERM');
  return server.exited;
}

// Timeouts are generous: every server start loads the app and opens PGlite (WASM), which
// on a busy two-core machine takes ten seconds and more.
describe('emend CLI on the embedded database', { timeout: 90_000 }, () => {
  let template: string;

  beforeAll(async () => {
    // `emend migrate` on a new data dir: initdb, then the migrations. Later tests copy it.
    template = newDataDir();
    const migrated = await runCli(['migrate'], cliEnv({ EMEND_DATA_DIR: template }), 60_000);
    expect(migrated, migrated.stderr).toMatchObject({ code: 0 });
    expect(migrated.stdout).toContain('migrations applied');
    expect(existsSync(join(template, 'emend.lock'))).toBe(false);
  }, 90_000);

  afterEach(killAll);
  afterAll(async () => {
    await killAll();
    removeDataDirs();
  });

  it('creates an account with no server running, and the token works once the server is up', async () => {
    const dataDir = copyOfDataDir(template);
    const created = jsonLine<Created>(
      await runCli(
        ['accounts', 'create', '--email', 'Ada@Example.com', '--name', 'Ada', '--plan', 'pro', '--credits', '7'],
        cliEnv({ EMEND_DATA_DIR: dataDir }),
      ),
    );
    expect(Object.keys(created).sort()).toEqual(['credits', 'email', 'id', 'plan', 'token']);
    expect(created).toMatchObject({ email: 'ada@example.com', plan: 'pro', credits: 7 });
    expect(created.token).toMatch(/^tk_[A-Za-z0-9_-]{40,}$/);
    // The command closed the data dir behind it.
    expect(existsSync(join(dataDir, 'emend.lock'))).toBe(false);

    const { baseUrl } = await serve(dataDir);
    const profile = await me(baseUrl, created.token);
    expect(profile.status).toBe(200);
    expect(profile.body).toMatchObject({
      id: created.id,
      email: 'ada@example.com',
      name: 'Ada',
      plan: 'pro',
      credits: 7,
    });
  });

  it('reaches the database through the running server: accounts create and set', async () => {
    const dataDir = copyOfDataDir(template);
    const { baseUrl, health } = await serve(dataDir);
    expect(health).toMatchObject({ ok: true, database: 'pglite' });
    const socket = join(dataDir, '.s.PGSQL.5432');
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(socket).mode & 0o777).toBe(0o600);

    const cliEnvWhileServing = cliEnv({ EMEND_DATA_DIR: dataDir });
    const created = jsonLine<Created>(
      await runCli(['accounts', 'create', '--email', 'bob@example.com', '--plan', 'free'], cliEnvWhileServing),
    );
    expect(created).toMatchObject({ email: 'bob@example.com', plan: 'free', credits: 0 });
    let profile = await me(baseUrl, created.token);
    expect(profile.status).toBe(200);
    expect(profile.body).toMatchObject({ email: 'bob@example.com', plan: 'free', credits: 0 });

    const changed = jsonLine(
      await runCli(
        ['accounts', 'set', '--email', 'bob@example.com', '--plan', 'scale', '--credits', '40'],
        cliEnvWhileServing,
      ),
    );
    expect(changed).toEqual({ id: created.id, email: 'bob@example.com', plan: 'scale', credits: 40 });
    profile = await me(baseUrl, created.token);
    expect(profile.body).toMatchObject({ plan: 'scale', credits: 40 });

    // Creating the same email again is a plain error, not a crash; the server keeps serving.
    const again = await runCli(['accounts', 'create', '--email', 'bob@example.com'], cliEnvWhileServing);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists/);
    const unknown = await runCli(
      ['accounts', 'set', '--email', 'nobody@example.com', '--credits', '1'],
      cliEnvWhileServing,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no account with email nobody@example\.com/);
    expect((await fetch(`${baseUrl}/health`)).status).toBe(200);
    // The lock names the server, not a CLI process that came and went.
    expect(readFileSync(join(dataDir, 'emend.lock'), 'utf8')).toContain('"serve"');
  });

  it('refuses a second server on the same data dir; SIGTERM stops the first cleanly; the secret key survives the ' +
    'restart', async () => {
    const dataDir = copyOfDataDir(template);
    const keyPath = join(dataDir, 'secret.key');
    expect(existsSync(keyPath)).toBe(false);
    const first = await serve(dataDir);
    // Without EMEND_SECRET_KEY the server generated one, readable by its owner only.
    expect(statSync(keyPath).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyPath, 'utf8');
    expect(key.trim()).toMatch(/^[0-9a-f]{64}$/);

    const port = await freePort();
    const second = await runCli(
      ['serve', '--port', String(port)],
      cliEnv({ EMEND_DATA_DIR: dataDir, HOST: '127.0.0.1' }),
      30_000,
    );
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(
      `the data dir ${dataDir} is in use by another emend process (pid ${first.server.child.pid})`,
    );
    // The refused server left the first one alone.
    expect((await fetch(`${first.baseUrl}/health`)).status).toBe(200);

    const exit = await stop(first.server);
    expect(exit, exit.stderr).toMatchObject({ code: 0, signal: null });
    expect(existsSync(join(dataDir, 'emend.lock'))).toBe(false);
    expect(existsSync(join(dataDir, '.s.PGSQL.5432'))).toBe(false);

    // With the lock released a new server starts on the same data dir, with the same key.
    const next = await serve(dataDir);
    expect(next.health.ok).toBe(true);
    expect(readFileSync(keyPath, 'utf8')).toBe(key);
    expect(statSync(keyPath).mode & 0o777).toBe(0o600);
    expect((await stop(next.server)).code).toBe(0);
  }, 150_000);

  it('takes over the lock and the socket a killed server left behind', async () => {
    const dataDir = copyOfDataDir(template);
    const first = await serve(dataDir);
    first.server.child.kill('SIGKILL');
    await first.server.exited;
    // A killed server cannot clean up: its lock and socket file stay.
    expect(existsSync(join(dataDir, 'emend.lock'))).toBe(true);
    expect(existsSync(join(dataDir, '.s.PGSQL.5432'))).toBe(true);

    // A CLI command neither waits for the dead server nor talks to its socket.
    const created = jsonLine<Created>(
      await runCli(['accounts', 'create', '--email', 'carol@example.com'], cliEnv({ EMEND_DATA_DIR: dataDir })),
    );
    const next = await serve(dataDir);
    expect((await me(next.baseUrl, created.token)).status).toBe(200);
  });

  it('waits for a server that is still starting instead of opening the data dir beside it', async () => {
    const dataDir = newDataDir(); // a new data dir: the server's start takes seconds (initdb)
    const port = await freePort();
    const server = startCli(['serve'], cliEnv({ EMEND_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' }));
    const lock = join(dataDir, 'emend.lock');
    const deadline = Date.now() + 30_000;
    while (!existsSync(lock) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(lock)).toBe(true);
    const created = jsonLine<Created>(
      await runCli(
        ['accounts', 'create', '--email', 'dave@example.com', '--plan', 'pro'],
        cliEnv({ EMEND_DATA_DIR: dataDir }),
        60_000,
      ),
    );
    await waitForHealth(`http://127.0.0.1:${port}`, server);
    expect((await me(`http://127.0.0.1:${port}`, created.token)).body).toMatchObject({ plan: 'pro' });
    expect((await stop(server)).code).toBe(0);
  });

  it('stops cleanly on a SIGTERM that arrives while it is starting', async () => {
    const dataDir = copyOfDataDir(template);
    const server = startCli(
      ['serve'],
      cliEnv({ EMEND_DATA_DIR: dataDir, PORT: String(await freePort()), HOST: '127.0.0.1' }),
    );
    const lock = join(dataDir, 'emend.lock');
    const deadline = Date.now() + 30_000;
    while (!existsSync(lock) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    server.child.kill('SIGTERM');
    const exit = await server.exited;
    expect(exit, exit.stderr).toMatchObject({ code: 0, signal: null });
    expect(existsSync(lock)).toBe(false);
    expect(existsSync(join(dataDir, '.s.PGSQL.5432'))).toBe(false);
  });

  it('stops with a message naming the variable when the environment is bad', async () => {
    const dataDir = newDataDir();
    const bad = await runCli(['serve'], cliEnv({ EMEND_DATA_DIR: dataDir, PORT: 'abc' }));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/PORT/);
    expect(bad.stderr).toContain('abc');
    // Nothing was opened or written.
    expect(existsSync(join(dataDir, 'emend.lock'))).toBe(false);
    expect(existsSync(join(dataDir, 'pgdata'))).toBe(false);

    const badKey = await runCli(
      ['accounts', 'create', '--email', 'x@example.com'],
      cliEnv({ EMEND_DATA_DIR: dataDir, EMEND_SECRET_KEY: 'short' }),
    );
    expect(badKey.code).not.toBe(0);
    expect(badKey.stderr).toMatch(/EMEND_SECRET_KEY/);
  });
});
