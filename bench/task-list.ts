/**
 * Task-list benchmark (not a test: it prints figures and asserts nothing): GET /v1/tasks pages
 * when an account has BENCH_TASKS (default 100,000) tasks, beside 20,000 of another account.
 * Seeds rows straight into the tables (mixed statuses, task types, repositories, some children),
 * then times, over a real HTTP port, each request shape BENCH_RUNS times (default 30) and prints
 * the median and p95 per shape, and the query plan of the deepest page. On PGlite (in this
 * process) and on PostgreSQL (DATABASE_URL, else a throwaway local cluster when installed).
 *
 *   npm run bench:task-list
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { createAccount } from '../src/accounts/accounts.js';
import { buildApp } from '../src/app.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config/config.js';
import { type Database, queryRows, runMigrations } from '../src/db/client.js';
import { createLogger } from '../src/logger.js';
import { createRuntime } from '../src/runtime/runtime.js';
import { taskPageQuery } from '../src/tasks/task-list.js';
import { insertTasks, taskRow } from '../test/feedback/seed.js';
import { onEachDatabase } from './databases.js';
import { envInt, loadAverage, log, median, percentile, pressure } from './stats.js';

const TASKS = envInt('BENCH_TASKS', 100_000);
const RUNS = envInt('BENCH_RUNS', 30);
const STATUSES = ['done', 'done', 'done', 'failed', 'cancelled'];

/** Rows for one account: a slim progress (the list never reads it), every 7th a scaffold, every 50th a child. */
function rows(accountId: string, n: number, parentId: string) {
  return Array.from({ length: n }, (_, i) =>
    taskRow(accountId, i, {
      progress: {},
      status: STATUSES[i % STATUSES.length],
      ...(i % 7 === 0 ? { taskType: 'scaffold', mode: 'preview', repoUrl: null, repoOwner: null, repoName: null } : {}),
      ...(i % 7 !== 0 && i % 3 === 0 ? { repoOwner: 'acme', repoName: 'gadgets' } : {}),
      ...(i % 50 === 1 ? { parentId } : {}),
    }),
  );
}

async function timeIt(base: string, secret: string, url: string) {
  const times: number[] = [];
  let count = 0;
  let link: string | null = null;
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    const res = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${secret}` } });
    const body = (await res.json()) as unknown[];
    times.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
    count = body.length;
    link = res.headers.get('link');
  }
  return { times, count, link };
}

async function bench(label: string, database: Database) {
  await runMigrations(database);
  const [{ version } = { version: '?' }] = await queryRows<{ version: string }>(database.db, sql`select version()`);
  log(`\ndatabase: ${label}: ${version.split(', compiled')[0]}`);
  const dataDir = mkdtempSync(join(os.tmpdir(), 'emend-bench-list-'));
  const config = loadConfig({ EMEND_DATA_DIR: dataDir, EMEND_SECRET_KEY: randomBytes(32).toString('hex') });
  const runtime = await createRuntime(config, database, { clock: systemClock, log: createLogger('silent') });
  const app = await buildApp(runtime.deps);
  try {
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const mk = (tag: string) =>
      createAccount(runtime.deps, { email: `bench-list-${tag}-${randomBytes(4).toString('hex')}@example.com` });
    const { account, token } = await mk('a');
    const other = await mk('b');
    const seed0 = performance.now();
    const mine = rows(account.id, TASKS, '');
    for (const r of mine) if (r.parentId === '') r.parentId = mine[0]!.id;
    await insertTasks(runtime.deps.db, mine, 1000);
    await insertTasks(runtime.deps.db, rows(other.account.id, 20_000, mine[0]!.id!), 1000);
    await database.db.execute(sql`analyze tasks`);
    log(`seeded ${TASKS} + 20000 tasks in ${((performance.now() - seed0) / 1000).toFixed(1)} s`);

    const parent = mine[0]!.id!;
    const shapes: [string, string][] = [
      ['default (last 100)', '/v1/tasks'],
      ['limit=20', '/v1/tasks?limit=20'],
      ['status=cancelled', '/v1/tasks?status=cancelled'],
      ['task_type=scaffold', '/v1/tasks?task_type=scaffold'],
      ['repo_url=…/acme/gadgets', `/v1/tasks?repo_url=${encodeURIComponent('https://github.com/acme/gadgets')}`],
      ['parent_id (2,000 children)', `/v1/tasks?parent_id=${parent}`],
      [
        'created_before (half way)',
        `/v1/tasks?created_before=${mine[Math.floor(TASKS / 2)]!.createdAt!.toISOString()}`,
      ],
    ];
    for (const [name, url] of shapes) {
      const { times, count } = await timeIt(base, token.secret, url);
      log(
        `  ${name.padEnd(30)} ${String(count).padStart(3)} rows  median ${median(times).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms`,
      );
    }
    // The page after 500 pages of 100: a keyset page costs the same at any depth.
    let url = '/v1/tasks';
    const walk0 = performance.now();
    for (let p = 0; p < 500; p++) {
      const res = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${token.secret}` } });
      await res.arrayBuffer();
      url = /^<([^>]+)>/.exec(res.headers.get('link') ?? '')?.[1] ?? url;
    }
    log(`  walked 500 pages of 100 in ${((performance.now() - walk0) / 1000).toFixed(1)} s`);
    const deep = await timeIt(base, token.secret, url);
    log(
      `  ${'page 501 (50,000 deep)'.padEnd(30)} ${String(deep.count).padStart(3)} rows  median ${median(deep.times).toFixed(1)} ms, p95 ${percentile(deep.times, 95).toFixed(1)} ms`,
    );
    const cursor = new URL(url, base).searchParams.get('cursor')!;
    const query = taskPageQuery(runtime.deps, account.id, { cursor }).toSQL();
    const plan = await queryRows<Record<string, string>>(
      database.db,
      sql.join([
        sql.raw('explain '),
        sql.raw(query.sql.replace(/\$(\d+)/g, (_, n) => `'${query.params[Number(n) - 1]}'`)),
      ]),
    );
    log(`  plan of that page: ${plan.map((r) => Object.values(r)[0]).join(' / ')}`);
  } finally {
    await app.close();
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

log(`emend task-list benchmark, ${new Date().toISOString()}`);
const cpus = os.cpus();
log(
  `machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, ` +
    `${os.type()} ${os.release()}, Node ${process.version}; load ${loadAverage()}${pressure()}`,
);
log(`${TASKS} tasks in the measured account; ${RUNS} requests per shape over a real HTTP port`);
await onEachDatabase(
  { pglite: 'PGlite (in memory, in this process)', postgres: 'PostgreSQL (throwaway local cluster, fsync off)' },
  (label, database) => bench(label, database),
  { useDatabaseUrl: true },
);
