import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createClient } from '@emend/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { type Database, openPostgres, runMigrations } from '../../src/db/client.js';
import { createLogger } from '../../src/logger.js';
import { type Runtime, createRuntime } from '../../src/runtime/runtime.js';
import { sql } from 'drizzle-orm';
import { startWorker } from '../../src/engine/worker.js';
import { recordingSteps } from '../support/engine.js';
import { cliEnv, killAll, startCli } from '../cli/cli-process.js';
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
    const config = loadConfig({
      EMEND_DATA_DIR: dataDir,
      EMEND_SECRET_KEY: randomBytes(32).toString('hex'),
      DATABASE_URL: cluster.url('down_test'),
      LOG_LEVEL: 'warn',
      // Never called (the steps are doubles); task creation refuses a task no model could run.
      OPENAI_API_KEY: 'sk-unused',
      OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
    });
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

  it('@emend/client waits out the 503 Retry-After and gets its answer once the database is back', async () => {
    const statuses: number[] = [];
    const counting: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      statuses.push(res.status);
      return res;
    };
    const client = createClient({ baseUrl: base, token, fetch: counting });
    cluster.halt();
    // Back well before the 5 s the server asks callers to wait.
    setTimeout(() => cluster.resume(), 1_000);
    const started = Date.now();
    expect((await client.GET('/v1/me')).email).toBe('down@example.com');
    expect(statuses).toEqual([503, 200]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
    // A POST without an Idempotency-Key is not repeated on a 503: it may have been applied.
    cluster.halt();
    try {
      const err = await client.POST('/v1/me/byok', { body: { enabled: true } }).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 503, code: 'unavailable', retryAfter: 5 });
      expect(statuses.slice(2)).toEqual([503]);
    } finally {
      cluster.resume();
    }
  });

  it('a run whose database goes away is handed back and resumed, not failed, and the attempt is not counted', async () => {
    let plannerCalls = 0;
    const { steps } = recordingSteps({
      planner: async (_payload, helpers) => {
        if (++plannerCalls === 1) {
          // PostgreSQL crashes in the middle of the step and is back 1.5 s later.
          cluster.halt();
          setTimeout(() => cluster.resume(), 1_500);
          await helpers.deps.db.execute(sql`select 1`);
        }
        return { output: { summary: 'a page', steps: ['write it'], likely_files: [] }, tokens: 1 };
      },
    });
    const worker = await startWorker(runtime.deps, steps, {
      concurrency: 1,
      heartbeatMs: 200,
      staleMs: 10_000,
      maintenanceMs: 500,
    });
    try {
      const created = await call('POST', '/v1/tasks', {
        task_type: 'scaffold',
        prompt: 'a one-page site for a bakery',
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      let task: { status: string; error: string | null } | undefined;
      for (const deadline = Date.now() + 40_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
        const res = await call('GET', `/v1/tasks/${id}`).catch(() => undefined);
        if (res?.status !== 200) continue;
        task = ((await res.json()) as { task: { status: string; error: string | null } }).task;
        if (['done', 'failed', 'cancelled'].includes(task.status)) break;
      }
      expect(task).toMatchObject({ status: 'done', error: null });
      expect(plannerCalls).toBe(2);
      const { rows } = await database.pool!.query('select attempts from tasks where id = $1', [id]);
      expect(rows[0].attempts).toBe(1); // handed back (not counted), then one claim
      const failed = await database.pool!.query(`select step from task_logs where task_id = $1 and status = 'failed'`, [
        id,
      ]);
      expect(failed.rows).toEqual([]);
    } finally {
      await worker.stop();
    }
  });

  it('emend worker started while PostgreSQL is down waits for it instead of exiting', async () => {
    cluster.halt();
    try {
      const worker = startCli(
        ['worker'],
        cliEnv({
          DATABASE_URL: cluster.url('down_test'),
          EMEND_SECRET_KEY: randomBytes(32).toString('hex'),
          EMEND_DATA_DIR: dataDir,
          LOG_LEVEL: 'info',
        }),
      );
      let exited = false;
      void worker.exited.then(() => (exited = true));
      for (
        const deadline = Date.now() + 30_000;
        !worker.stdout.includes('waiting to start the worker') && Date.now() < deadline;
      )
        await new Promise((r) => setTimeout(r, 200));
      expect(worker.stdout).toContain('waiting to start the worker');
      expect(exited).toBe(false);
      cluster.resume();
      for (
        const deadline = Date.now() + 45_000;
        !worker.stdout.includes('worker started') && !exited && Date.now() < deadline;
      )
        await new Promise((r) => setTimeout(r, 200));
      expect(worker.stdout, worker.stderr).toContain('worker started');
      worker.child.kill('SIGTERM');
      expect((await worker.exited).code).toBe(0);
    } finally {
      await killAll();
    }
  });
});
