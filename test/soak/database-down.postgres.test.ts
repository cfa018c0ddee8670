import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { type Database, openPostgres, runMigrations } from '../../src/db/client.js';
import { createLogger } from '../../src/logger.js';
import { type Runtime, createRuntime } from '../../src/runtime.js';
import { logSink } from '../support/log-sink.js';
import { type Cluster, findPostgresBin, startCluster } from '../support/postgres-cluster.js';

// The database going away is not the request's fault: the API answers 503 `unavailable` with
// Retry-After while PostgreSQL is down, never 500, and serves again once it is back.
// PostgreSQL only: PGlite runs inside the server process and cannot go down without it.
describe('the API while PostgreSQL is down', { timeout: 60_000 }, () => {
  let cluster: Cluster;
  let database: Database;
  let runtime: Runtime;
  let app: FastifyInstance;
  let base: string;
  let token: string;
  let dataDir: string;
  const sink = logSink();

  beforeAll(async () => {
    cluster = await startCluster(findPostgresBin()!, { crashSafe: true });
    const admin = new pg.Client({ connectionString: cluster.url('postgres') });
    await admin.connect();
    await admin.query('create database down_test');
    await admin.end();
    dataDir = mkdtempSync(join(tmpdir(), 'emend-down-'));
    const config = loadConfig({ EMEND_DATA_DIR: dataDir, EMEND_SECRET_KEY: randomBytes(32).toString('hex'), DATABASE_URL: cluster.url('down_test'), LOG_LEVEL: 'warn' });
    database = openPostgres(config.databaseUrl);
    await runMigrations(database);
    runtime = await createRuntime(config, database, { log: createLogger('warn', sink.stream) });
    app = await buildApp(runtime.deps);
    base = await app.listen({ host: '127.0.0.1', port: 0 });
    token = (await createAccount(runtime.deps, { email: 'down@example.com', plan: 'pro', credits: 5 })).token.secret;
  });
  afterAll(async () => {
    await app?.close();
    await runtime?.close();
    await database?.close().catch(() => {});
    cluster?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });

  it('answers 503 unavailable with Retry-After while the database is down, and 200 again after', async () => {
    expect((await call('GET', '/v1/me')).status).toBe(200);

    cluster.halt();
    const errorsBefore = sink.lines.filter((l) => JSON.parse(l).level >= 50).length;
    for (const [method, path, body] of [
      ['GET', '/v1/me', undefined],
      ['GET', '/v1/tasks', undefined],
      ['POST', '/v1/tasks', { prompt: 'fix the bug in add', repo_url: 'https://github.com/acme/calc' }],
      ['GET', '/v1/tasks/0190e4a4-0000-7000-8000-000000000000', undefined],
    ] as const) {
      const res = await call(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(await res.json()).toMatchObject({ error: 'unavailable', message: expect.stringMatching(/database/) });
    }
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(503);
    // A database that is down is an expected condition: warned about, not logged as a fault.
    expect(sink.lines.filter((l) => JSON.parse(l).level >= 50).length).toBe(errorsBefore);

    cluster.resume();
    // The pool makes new connections on demand: the first request after the restart succeeds.
    expect((await call('GET', '/v1/me')).status).toBe(200);
    expect((await fetch(`${base}/health`)).status).toBe(200);
  });
});
