/**
 * HTTP benchmark (not a test: it prints figures and asserts nothing about time).
 *
 * requests/s and latency of GET /v1/tasks/{id} and POST /v1/tasks on the real app, on PGlite
 * and on PostgreSQL, against a bare Fastify app whose routes run the same SQL
 * (bench/bare-app.ts), with the ratio emend ÷ bare. Target: at least 0.8.
 *
 *   npm run bench            BENCH_SECONDS, BENCH_REPEATS, BENCH_CONNECTIONS override the defaults
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { inArray, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { createAccount } from '../src/accounts/accounts.js';
import { buildApp } from '../src/app.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config/config.js';
import { type Database, queryRows, runMigrations } from '../src/db/client.js';
import { accounts, taskLogs } from '../src/db/schema.js';
import type { Deps } from '../src/deps.js';
import type { AuthContext } from '../src/accounts/authenticate.js';
import { createLogger } from '../src/logger.js';
import { type Runtime, createRuntime } from '../src/runtime/runtime.js';
import { createTask } from '../src/tasks/service.js';
import { buildBareApp } from './bare-app.js';
import { type BenchCodeHost, startBenchCodeHost } from './code-host.js';
import { onEachDatabase } from './databases.js';
import { type LoadJob, type LoadResult, LoadGenerator } from './load.js';
import { type Measurement, type RunFigures, printTable } from './report.js';
import { envInt } from './stats.js';

const SECONDS = envInt('BENCH_SECONDS', 5);
const REPEATS = envInt('BENCH_REPEATS', 3);
const CONNECTIONS = envInt('BENCH_CONNECTIONS', 10);
// Long enough for the JIT to settle on a slow machine (a POST costs milliseconds of CPU there).
const WARMUP_SECONDS = 4;
/** Each account gets at most this many POSTs between resets: the scale plan's concurrency cap. */
const POSTS_PER_ACCOUNT = 5;
const CREATE_BODY = JSON.stringify({
  prompt: 'Fix the off-by-one error in the pagination helper',
  repo_url: 'https://github.com/acme/widgets',
});

type AppName = 'emend' | 'bare';
interface Target {
  name: AppName;
  url: string;
}

const log = (line: string) => console.log(line);

const loadAverage = () => os.loadavg()[0]!.toFixed(1);

function describeMachine() {
  const cpus = os.cpus();
  const gb = (os.totalmem() / 1024 ** 3).toFixed(1);
  log(`emend HTTP benchmark, ${new Date().toISOString()}`);
  log(
    `machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${gb} GiB ` +
      `RAM, ${os.type()} ${os.release()}, Node ${process.version}`,
  );
  log(
    `load: autocannon 8 over 127.0.0.1 in a child process, ${CONNECTIONS} connections, pipelining 1; ` +
      (`per measurement a ${WARMUP_SECONDS} s warm-up, then ${REPEATS} runs of ${SECONDS} s, emend and bare ` +
        `interleaved; `) +
      `figures are medians over the runs`,
  );
  log(
    `load average (1 min) at start: ${loadAverage()}; other processes on this machine share its ${cpus.length} ` +
      `cores with the server, the load generator and the database`,
  );
}

/** The app's Deps as the test harness builds them (src/runtime.ts), with the system clock and a silent logger. */
async function runtimeFor(database: Database, dataDir: string, host: BenchCodeHost): Promise<Runtime> {
  const config = loadConfig({
    EMEND_DATA_DIR: dataDir,
    EMEND_SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
    ...host.env,
  });
  return createRuntime(config, database, { clock: systemClock, log: createLogger('silent') });
}

let accountSeq = 0;
async function newAccounts(deps: Deps, host: BenchCodeHost, n: number, parallel = 8) {
  const out: { auth: AuthContext; header: string }[] = [];
  const tag = randomBytes(3).toString('hex');
  for (let done = 0; done < n; ) {
    const batch = Math.min(parallel, n - done);
    const made = await Promise.all(
      Array.from({ length: batch }, () =>
        createAccount(deps, { email: `bench${++accountSeq}-${tag}@example.com`, plan: 'scale', credits: 1000 }),
      ),
    );
    await Promise.all(made.map(({ account }) => host.connect(deps, account.id)));
    // The rows as they are now, connected: createTask is called with them directly.
    const rows = await deps.db
      .select()
      .from(accounts)
      .where(
        inArray(
          accounts.id,
          made.map(({ account }) => account.id),
        ),
      );
    for (const { account, workspace, token } of made) {
      out.push({
        auth: {
          account: rows.find((r) => r.id === account.id)!,
          workspace,
          role: 'owner',
          scopes: null,
          tokenId: token.record.id,
          tokenKind: 'full',
        },
        header: `Bearer ${token.secret}`,
      });
    }
    done += batch;
  }
  return out;
}

/** Warm-up, then REPEATS runs per app, alternating which app goes first. */
async function measure(
  load: LoadGenerator,
  targets: Target[],
  job: () => Omit<LoadJob, 'url' | 'seconds' | 'connections'>,
  hooks: { beforeRun?: () => Promise<void>; afterWarmup?: (warm: LoadResult[]) => Promise<void> } = {},
): Promise<Record<AppName, RunFigures[]>> {
  const warm: LoadResult[] = [];
  for (const t of targets) {
    await hooks.beforeRun?.();
    warm.push(await load.run({ ...job(), url: t.url, seconds: WARMUP_SECONDS, connections: CONNECTIONS }));
  }
  await hooks.afterWarmup?.(warm);
  const runs: Record<AppName, RunFigures[]> = { emend: [], bare: [] };
  for (let i = 0; i < REPEATS; i++) {
    for (const t of i % 2 === 0 ? targets : [...targets].reverse()) {
      await hooks.beforeRun?.();
      // CPU time of this process (the two apps, and PGlite, which runs in it), not wall time:
      // it is what the app costs per request, even while other processes compete for the cores.
      const before = process.cpuUsage();
      const result = await load.run({ ...job(), url: t.url, seconds: SECONDS, connections: CONNECTIONS });
      const cpu = process.cpuUsage(before);
      const r = { ...result, cpuMsPerRequest: result.total ? (cpu.user + cpu.system) / 1000 / result.total : 0 };
      runs[t.name].push(r);
      const odd =
        r.non2xx + r.errors + r.timeouts > 0 ? `  non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts}` : '';
      log(
        `  · ${t.name.padEnd(5)} run ${i + 1}: ${r.reqPerSec.toFixed(0)} req/s, p99 ${r.p99} ms, ` +
          `server CPU ${r.cpuMsPerRequest.toFixed(2)} ms/request, load average ${loadAverage()}${odd}`,
      );
    }
  }
  return runs;
}

async function sameJson(urls: string[], init: RequestInit): Promise<{ statuses: number[]; equal: boolean }> {
  const replies = await Promise.all(
    urls.map(async (u) => fetch(u, init).then(async (r) => ({ status: r.status, body: await r.json() }))),
  );
  const strip = (b: unknown) => {
    // Created tasks differ in id and time; compare the shape of everything else.
    const t = (b ?? {}) as Record<string, unknown>;
    return 'id' in t ? { ...t, id: '', created_at: '' } : t;
  };
  return {
    statuses: replies.map((r) => r.status),
    equal: isDeepStrictEqual(strip(replies[0]!.body), strip(replies[1]!.body)),
  };
}

async function benchDatabase(load: LoadGenerator, label: string, database: Database): Promise<Measurement[]> {
  await runMigrations(database);
  const [{ version } = { version: '?' }] = await queryRows<{ version: string }>(database.db, sql`select version()`);
  log(`\ndatabase: ${label}: ${version.split(', compiled')[0]}`);
  const dataDir = mkdtempSync(join(os.tmpdir(), 'emend-bench-'));
  const host = await startBenchCodeHost([['acme', 'widgets']]);
  const runtime = await runtimeFor(database, dataDir, host);
  const deps = runtime.deps;
  const apps: FastifyInstance[] = [];
  try {
    const app = await buildApp(deps);
    apps.push(app);
    const bare = await buildBareApp(deps);
    apps.push(bare);
    const targets: Target[] = [
      { name: 'emend', url: await app.listen({ host: '127.0.0.1', port: 0 }) },
      { name: 'bare', url: await bare.listen({ host: '127.0.0.1', port: 0 }) },
    ];

    // GET: one account's task with five step logs, read over and over with its token.
    const [owner] = await newAccounts(deps, host, 1);
    const task = await createTask(deps, owner!.auth, JSON.parse(CREATE_BODY));
    const steps = ['planner', 'locator', 'inspector', 'fixer', 'validator'];
    await deps.db.insert(taskLogs).values(
      steps.map((step, i) => ({
        taskId: task.id,
        step,
        status: 'done',
        input: { files: ['src/pager.ts'], note: `input of ${step}` },
        output: { summary: `output of ${step}`, lines: [i, i + 1, i + 2] },
        tokens: 1000 + i,
        costUsd: 0.0123,
        durationMs: 1500 + i,
        createdAt: new Date(),
      })),
    );
    const getPath = `/v1/tasks/${task.id}`;
    const getCheck = await sameJson(
      targets.map((t) => t.url + getPath),
      { headers: { authorization: owner!.header } },
    );
    log(
      `GET  /v1/tasks/{id}: statuses ${getCheck.statuses.join('/')}, same JSON from both ` +
        `apps: ${getCheck.equal ? 'yes' : 'NO'}`,
    );
    const getRuns = await measure(load, targets, () => ({
      method: 'GET',
      path: getPath,
      authorizations: [owner!.header],
    }));

    // POST: every request uses the next account of a pool, so no account reaches the rate
    // limit (20 a minute) or the concurrency cap (5 active tasks on scale) within a run;
    // between runs the created tasks are cancelled and the rate-limit window emptied. No
    // worker runs here: queued jobs stay queued.
    const pool = await newAccounts(deps, host, 400);
    const postCheck = await sameJson(
      targets.map((t) => `${t.url}/v1/tasks`),
      {
        method: 'POST',
        headers: { authorization: pool[0]!.header, 'content-type': 'application/json' },
        body: CREATE_BODY,
      },
    );
    log(
      `POST /v1/tasks: statuses ${postCheck.statuses.join('/')}, same JSON from both apps (id and created_at ` +
        `aside): ${postCheck.equal ? 'yes' : 'NO'}`,
    );
    const reset = async () => {
      await deps.db.execute(sql`update tasks set status = 'cancelled', finished_at = now() where status = 'pending'`);
      await deps.db.execute(sql`delete from task_post_attempts`);
      // Steady state of a busy token: last_used_at was written within the minute, so auth only reads.
      await deps.db.execute(sql`update api_tokens set last_used_at = now()`);
      await deps.db.execute(sql`vacuum analyze tasks, task_post_attempts, api_tokens, accounts, credit_ledger`);
    };
    const postRuns = await measure(
      load,
      targets,
      () => ({ method: 'POST', path: '/v1/tasks', body: CREATE_BODY, authorizations: pool.map((a) => a.header) }),
      {
        beforeRun: reset,
        afterWarmup: async (warm) => {
          // Twice the warm-up rate, so the pool outlasts a run.
          const need = Math.ceil((Math.max(...warm.map((w) => w.reqPerSec)) * SECONDS * 2) / POSTS_PER_ACCOUNT);
          if (need > pool.length) pool.push(...(await newAccounts(deps, host, need - pool.length)));
          log(
            `  POST pool: ${pool.length} accounts (≤ ${POSTS_PER_ACCOUNT} POSTs each per run up ` +
              `to ${pool.length * POSTS_PER_ACCOUNT} requests a run)`,
          );
        },
      },
    );

    const kind = database.kind;
    return [
      { endpoint: 'GET /v1/tasks/{id}', database: kind, runs: getRuns },
      { endpoint: 'POST /v1/tasks', database: kind, runs: postRuns },
    ];
  } finally {
    for (const a of apps) await a.close();
    await runtime.close();
    await host.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  const started = Date.now();
  describeMachine();
  const load = new LoadGenerator();
  const results: Measurement[] = [];
  try {
    await onEachDatabase(
      {
        pglite: 'PGlite (in memory, in this process)',
        postgres: 'PostgreSQL (throwaway local cluster, fsync off, pool of 10)',
      },
      async (label, database) => {
        results.push(...(await benchDatabase(load, label, database)));
      },
    );
  } finally {
    await load.close();
  }
  printTable(results, REPEATS);
  log(
    `\ntotal time ${((Date.now() - started) / 1000).toFixed(0)} s; load average (1 min) at the end: ${loadAverage()}`,
  );
}

await main();
