/**
 * Task engine benchmark (not a test: it prints figures and asserts nothing about time).
 *
 * - Latency: for tasks run one at a time, the time from sending POST /v1/tasks to the arrival
 *   of the first `log` event on the task's live stream (GET /v1/tasks/{id}/logs/stream, opened
 *   as soon as the POST has answered with the id), p50 and p99; with a worker in the server's
 *   process and with worker processes of their own. The issue's bounds: a worker picks a new
 *   task up within 100 ms in the same process and within 1 s across processes.
 * - Throughput: tasks per second through the engine with no-op steps, N tasks POSTed as fast
 *   as possible until the last one is done.
 *
 * On PGlite (in memory) and on PostgreSQL (a throwaway cluster; skipped when there is none).
 *
 *   npm run bench:engine      BENCH_TASKS, BENCH_FLOOD, BENCH_POSTERS override the defaults
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { inArray, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { createAccount } from '../src/accounts/accounts.js';
import { buildApp } from '../src/app.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config/config.js';
import { type Database, queryRows, runMigrations } from '../src/db/client.js';
import { servePgliteOnSocket } from '../src/db/pglite-socket.js';
import { taskLogs, tasks } from '../src/db/schema.js';
import type { Deps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import { type Runtime, createRuntime } from '../src/runtime/runtime.js';
import { TERMINAL_STATUSES } from '../src/tasks/states.js';
import { type Worker, startWorker } from '../src/engine/worker.js';
import { type SseEvent, mustOpen, openSse } from '../test/support/sse-client.js';
import { type BenchCodeHost, startBenchCodeHost } from './code-host.js';
import { onEachDatabase } from './databases.js';
import { BENCH_WORKER_OPTIONS, noopSteps } from './noop-steps.js';
import { envInt, loadAverage, log, percentile } from './stats.js';

/** Tasks timed one at a time per latency measurement. */
const TASKS = envInt('BENCH_TASKS', 200);
/** Tasks per throughput measurement. */
const FLOOD = envInt('BENCH_FLOOD', 200);
/** Clients POSTing at once in a throughput measurement. */
const POSTERS = envInt('BENCH_POSTERS', 8);
/** Untimed tasks before each latency measurement (JIT, caches, pools). */
const WARMUP_TASKS = 10;
/** Worker processes in the cross-process measurements, each with the default concurrency (2). */
const WORKER_PROCESSES = 2;
/** A scale account may have 5 active tasks and 20 POSTs a minute: this many accounts share the POSTs. */
const ACCOUNTS = Math.max(50, Math.ceil(FLOOD / 4));
const BOUND_IN_PROCESS_MS = 100;
const BOUND_ACROSS_MS = 1000;
const CREATE_BODY = JSON.stringify({
  prompt: 'Fix the off-by-one error in the pagination helper',
  repo_url: 'https://github.com/acme/widgets',
});
const STEP_LABEL = { return: 'no-op', yield: 'no-op + 1 tick' } as const;
const root = fileURLToPath(new URL('..', import.meta.url));

function describeMachine() {
  const cpus = os.cpus();
  const gb = (os.totalmem() / 1024 ** 3).toFixed(1);
  const version = (pkg: string) =>
    (JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
  log(`emend engine benchmark, ${new Date().toISOString()}`);
  log(
    `machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${gb} GiB ` +
      `RAM, ${os.type()} ${os.release()}, Node ${process.version}`,
  );
  log(`pg-boss ${version('pg-boss')}, PGlite ${version('@electric-sql/pglite')}, fastify ${version('fastify')}`);
  log(
    `worker options: concurrency ${BENCH_WORKER_OPTIONS.concurrency}, ` +
      `heartbeat ${BENCH_WORKER_OPTIONS.heartbeatMs} ms, stale ${BENCH_WORKER_OPTIONS.staleMs} ms, ` +
      (`maintenance ${BENCH_WORKER_OPTIONS.maintenanceMs} ms; queue polling 0.5 s (cut short by wake-ups); ` +
        `steps are no-ops (6 steps, 12 logs a task): `) +
      (`"no-op" returns at once, "no-op + 1 tick" first waits one turn of the event loop (setImmediate), as a ` +
        `step doing I/O does`),
  );
  log(
    `latency: ${TASKS} tasks one after another (each waits for the previous one's \`end\`), ` +
      `after ${WARMUP_TASKS} untimed; ` +
      `throughput: ${FLOOD} tasks POSTed by ${POSTERS} clients at once, timed until the last is done`,
  );
  log(
    `load average (1, 5, 15 min) at start: ${loadAverage()}; the client, the server, the workers and the ` +
      `database share the ${cpus.length} cores`,
  );
}

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
async function newAccounts(deps: Deps, host: BenchCodeHost, n: number): Promise<string[]> {
  const headers: string[] = [];
  const tag = randomBytes(3).toString('hex');
  while (headers.length < n) {
    const batch = Math.min(8, n - headers.length);
    const made = await Promise.all(
      Array.from({ length: batch }, () =>
        createAccount(deps, { email: `engine${++accountSeq}-${tag}@example.com`, plan: 'scale', credits: 1000 }),
      ),
    );
    await Promise.all(made.map(({ account }) => host.connect(deps, account.id)));
    headers.push(...made.map(({ token }) => `Bearer ${token.secret}`));
  }
  return headers;
}

// ---------------------------------------------------------------------------------------------
// figures

const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(x < 10 ? 1 : 0) : '–');

interface Sample {
  taskId: string;
  /** From sending the POST: its 201, the stream's headers, the first `log` event, the `end` event. */
  posted: number;
  opened: number;
  firstLog: number;
  ended: number;
  endStatus: string;
}

/** What the database recorded for a task, relative to its created_at (the POST's insert). */
interface Timeline {
  startedAfter: number;
  firstLogAfter: number;
  finishedAfter: number;
}

interface LatencyResult {
  database: string;
  workers: string;
  steps: string;
  bound: number;
  samples: Sample[];
  timelines: Timeline[];
}

interface ThroughputResult {
  database: string;
  workers: string;
  tasks: number;
  done: number;
  rejected: number;
  postSeconds: number;
  totalSeconds: number;
  engineSeconds: number;
}

// ---------------------------------------------------------------------------------------------
// one database

class Client {
  private next = 0;
  constructor(
    readonly url: string,
    readonly accounts: string[],
  ) {}

  /** POSTs a task with the next account of the pool; the task id, or the error answer. */
  async post(): Promise<{ id: string; auth: string } | { status: number; body: string }> {
    const auth = this.accounts[this.next++ % this.accounts.length]!;
    const res = await fetch(`${this.url}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: CREATE_BODY,
    });
    if (res.status !== 201) return { status: res.status, body: await res.text() };
    return { id: ((await res.json()) as { id: string }).id, auth };
  }
}

async function timeOneTask(client: Client): Promise<Sample> {
  const t0 = performance.now();
  const created = await client.post();
  const posted = performance.now() - t0;
  if (!('id' in created)) throw new Error(`POST /v1/tasks answered ${created.status}: ${created.body}`);
  // No Last-Event-ID: the stream replays the task's logs from the first.
  const stream = mustOpen(
    await openSse(`${client.url}/v1/tasks/${created.id}/logs/stream`, { headers: { authorization: created.auth } }),
  );
  const opened = performance.now() - t0;
  try {
    await stream.waitFor((i) => i.kind === 'event' && i.event === 'log', 30_000);
    const firstLog = performance.now() - t0;
    const end = (await stream.waitFor((i) => i.kind === 'event' && i.event === 'end', 30_000)) as SseEvent;
    const ended = performance.now() - t0;
    return {
      taskId: created.id,
      posted,
      opened,
      firstLog,
      ended,
      endStatus: (JSON.parse(end.data) as { status: string }).status,
    };
  } finally {
    stream.close();
  }
}

async function timelinesOf(deps: Deps, ids: string[]): Promise<Timeline[]> {
  const rows = await queryRows<{
    created: Date | string;
    started: Date | string | null;
    finished: Date | string | null;
    first_log: Date | string | null;
  }>(
    deps.db,
    sql`select ${tasks.createdAt} as created, ${tasks.startedAt} as started, ${tasks.finishedAt} as finished,
               (select min(${taskLogs.createdAt}) from ${taskLogs} where ${taskLogs.taskId} = ${tasks.id}) as first_log
        from ${tasks} where ${inArray(tasks.id, ids)}`,
  );
  const at = (v: Date | string | null) => (v === null ? NaN : new Date(v).getTime());
  return rows.map((r) => ({
    startedAfter: at(r.started) - at(r.created),
    firstLogAfter: at(r.first_log) - at(r.created),
    finishedAfter: at(r.finished) - at(r.created),
  }));
}

/** Empties the POST rate-limit window between measurements (every earlier task has finished). */
async function resetWindow(deps: Deps) {
  await deps.db.execute(sql`delete from task_post_attempts`);
}

async function measureLatency(
  deps: Deps,
  client: Client,
  database: string,
  workers: string,
  steps: string,
  bound: number,
): Promise<LatencyResult> {
  await resetWindow(deps);
  for (let i = 0; i < WARMUP_TASKS; i++) await timeOneTask(client);
  const samples: Sample[] = [];
  const started = performance.now();
  for (let i = 0; i < TASKS; i++) samples.push(await timeOneTask(client));
  const seconds = (performance.now() - started) / 1000;
  const timelines = await timelinesOf(
    deps,
    samples.map((s) => s.taskId),
  );
  const first = samples.map((s) => s.firstLog);
  const notDone = samples.filter((s) => s.endStatus !== 'done').length;
  log(
    `  latency, ${workers}, ${steps} steps: POST→first log p50 ${ms(percentile(first, 50))} ms, ` +
      `p99 ${ms(percentile(first, 99))} ms, ` +
      (`max ${ms(Math.max(...first))} ms; ${TASKS} tasks in ${seconds.toFixed(1)} ` +
        `s${notDone ? `, ${notDone} NOT done` : ''}; load average ${loadAverage()}`),
  );
  return { database, workers, steps, bound, samples, timelines };
}

async function measureThroughput(
  deps: Deps,
  client: Client,
  database: string,
  workers: string,
): Promise<ThroughputResult> {
  await resetWindow(deps);
  const ids: string[] = [];
  let rejected = 0;
  let left = FLOOD;
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: POSTERS }, async () => {
      while (left > 0) {
        left--;
        const created = await client.post();
        if ('id' in created) ids.push(created.id);
        else rejected++;
      }
    }),
  );
  const postSeconds = (Date.now() - t0) / 1000;
  const terminal = [...TERMINAL_STATUSES] as string[];
  const deadline = Date.now() + 120_000;
  let finished: { done: number; over: number; first: Date | string | null; last: Date | string | null };
  for (;;) {
    // Polled coarsely; the end time is the last finished_at the workers wrote, not when the poll saw it.
    [finished] = (await queryRows<typeof finished>(
      deps.db,
      sql`select count(*) filter (where status = 'done')::int as done,
                 count(*) filter (where ${inArray(tasks.status, terminal)})::int as over,
                 min(started_at) as first, max(finished_at) as last
          from ${tasks} where ${inArray(tasks.id, ids)}`,
    )) as [typeof finished];
    if (finished.over === ids.length || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const last = finished.last === null ? Date.now() : new Date(finished.last).getTime();
  const first = finished.first === null ? t0 : new Date(finished.first).getTime();
  const result: ThroughputResult = {
    database,
    workers,
    tasks: ids.length,
    done: finished.done,
    rejected,
    postSeconds,
    totalSeconds: (last - t0) / 1000,
    engineSeconds: (last - first) / 1000,
  };
  log(
    `  throughput, ${workers}: ${result.done}/${ids.length} done in ${result.totalSeconds.toFixed(1)} s (POSTs ` +
      `took ${postSeconds.toFixed(1)} s) = ` +
      (`${(result.done / result.totalSeconds).toFixed(1)} ` +
        `tasks/s${rejected ? `, ${rejected} POSTs rejected` : ''}${
          finished.over < ids.length ? `, ${ids.length - finished.over} UNFINISHED after 120 s` : ''
        }; ` +
        `load average ${loadAverage()}`),
  );
  return result;
}

/** Worker processes on this database: PostgreSQL by URL, PGlite served on a Unix socket. */
async function workerProcesses(database: Database, url: string | undefined) {
  const dir = mkdtempSync(join(os.tmpdir(), 'emend-bench-workers-'));
  const socket = database.pglite ? await servePgliteOnSocket(database.pglite, join(dir, '.s.PGSQL.5432')) : undefined;
  const dbEnv: Record<string, string> = socket ? { BENCH_SOCKET_DIR: dir } : { DATABASE_URL: url! };
  const children: ChildProcess[] = [];
  const start = async (): Promise<void> => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/worker-process.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...dbEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (b) => (stderr += String(b)));
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (b) => {
        if (String(b).includes('worker ready')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`worker process exited (${code}) before it was ready: ${stderr}`)));
    });
  };
  const stop = async (child: ChildProcess) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  return {
    start,
    async close() {
      await Promise.all(children.map(stop));
      await socket?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function benchDatabase(
  label: string,
  database: Database,
  url?: string,
): Promise<{ latency: LatencyResult[]; throughput: ThroughputResult[] }> {
  await runMigrations(database);
  const [{ version } = { version: '?' }] = await queryRows<{ version: string }>(database.db, sql`select version()`);
  log(`\ndatabase: ${label}: ${version.split(', compiled')[0]}`);
  const kind = database.kind;
  const dataDir = mkdtempSync(join(os.tmpdir(), 'emend-bench-'));
  const host = await startBenchCodeHost([['acme', 'widgets']]);
  const runtime = await runtimeFor(database, dataDir, host);
  const deps = runtime.deps;
  let app: FastifyInstance | undefined;
  let worker: Worker | undefined;
  const latency: LatencyResult[] = [];
  const throughput: ThroughputResult[] = [];
  try {
    app = await buildApp(deps);
    const client = new Client(
      await app.listen({ host: '127.0.0.1', port: 0 }),
      await newAccounts(deps, host, ACCOUNTS),
    );

    // A worker in the server's process: the queue wakes it directly on insert.
    const inProcess = async (
      concurrency: number,
      steps: 'return' | 'yield',
      what: { latency?: boolean; throughput?: boolean },
    ) => {
      worker = await startWorker(deps, noopSteps(steps), { ...BENCH_WORKER_OPTIONS, concurrency });
      const workers = `in-process, concurrency ${concurrency}`;
      if (what.latency)
        latency.push(await measureLatency(deps, client, kind, workers, STEP_LABEL[steps], BOUND_IN_PROCESS_MS));
      if (what.throughput) throughput.push(await measureThroughput(deps, client, kind, workers));
      await worker.stop();
      worker = undefined;
    };
    await inProcess(2, 'return', { latency: true, throughput: true });
    // PGlite runs on this thread: steps that never wait hold the event loop for a whole run.
    if (database.pglite) await inProcess(2, 'yield', { latency: true });
    await inProcess(4, 'return', { throughput: true });

    // Worker processes of their own: woken by NOTIFY (relayed by the socket server on PGlite).
    const procs = await workerProcesses(database, url);
    try {
      for (let i = 0; i < WORKER_PROCESSES; i++) await procs.start();
      const workers = `${WORKER_PROCESSES} processes × concurrency ${BENCH_WORKER_OPTIONS.concurrency}`;
      latency.push(await measureLatency(deps, client, kind, workers, STEP_LABEL.return, BOUND_ACROSS_MS));
      throughput.push(await measureThroughput(deps, client, kind, workers));
    } finally {
      await procs.close();
    }
  } finally {
    await worker?.stop().catch(() => {});
    await app?.close();
    await runtime.close();
    await host.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return { latency, throughput };
}

// ---------------------------------------------------------------------------------------------
// report

function table(rows: string[][], rightFrom: number) {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  rows.splice(
    1,
    0,
    widths.map((w) => '-'.repeat(w)),
  );
  for (const r of rows)
    log(
      r
        .map((cell, c) => (c >= rightFrom ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
        .join('  ')
        .trimEnd(),
    );
}

function printLatency(results: LatencyResult[]) {
  log(
    `\nlatency (ms, ${TASKS} tasks one at a time; p50 / p99 / max). POST→first log: from sending the POST to ` +
      `the first \`log\` event on the stream, ` +
      'as a client sees it; the other columns split it up. POST: until its 201; stream: until the stream answered; ' +
      'pick-up: created_at → started_at in the database (the task row inserted → a worker claimed it); ' +
      'first log row: created_at → the first task_logs row (claim, plan lookup, first step log)',
  );
  const three = (xs: number[]) => `${ms(percentile(xs, 50))} / ${ms(percentile(xs, 99))} / ${ms(Math.max(...xs))}`;
  const rows = [
    ['database', 'workers', 'steps', 'POST→first log', 'POST', 'stream', 'pick-up', 'first log row', 'bound'],
  ];
  for (const r of results) {
    rows.push([
      r.database,
      r.workers,
      r.steps,
      three(r.samples.map((s) => s.firstLog)),
      three(r.samples.map((s) => s.posted)),
      three(r.samples.map((s) => s.opened)),
      three(r.timelines.map((t) => t.startedAfter)),
      three(r.timelines.map((t) => t.firstLogAfter)),
      `${r.bound}`,
    ]);
  }
  table(rows, 3);
  log('');
  for (const r of results) {
    const first = r.samples.map((s) => s.firstLog);
    const pick = r.timelines.map((t) => t.startedAfter);
    const verdict = (x: number) => (x <= r.bound ? 'within' : 'OVER');
    log(
      `${r.database.padEnd(8)} ${r.workers.padEnd(28)} ${r.steps.padEnd(14)} bound ${r.bound} ms: POST→first ` +
        `log p50 ${ms(percentile(first, 50))} ms ${verdict(percentile(first, 50))}, ` +
        (`p99 ${ms(percentile(first, 99))} ms ${verdict(percentile(first, 99))}; pick-up ` +
          `p50 ${ms(percentile(pick, 50))} ms ${verdict(percentile(pick, 50))}, `) +
        `p99 ${ms(percentile(pick, 99))} ms ${verdict(percentile(pick, 99))}`,
    );
  }
}

function printThroughput(results: ThroughputResult[]) {
  log(
    `\nthroughput (${FLOOD} tasks POSTed by ${POSTERS} clients at once; tasks/s = tasks done ÷ time from the ` +
      `first POST to the last finished_at; ` +
      'engine tasks/s = tasks done ÷ time from the first started_at to the last finished_at)',
  );
  const rows = [['database', 'workers', 'done', 'rejected', 'POSTs s', 'total s', 'tasks/s', 'engine tasks/s']];
  for (const r of results) {
    rows.push([
      r.database,
      r.workers,
      `${r.done}/${r.tasks}`,
      `${r.rejected}`,
      r.postSeconds.toFixed(1),
      r.totalSeconds.toFixed(1),
      (r.done / r.totalSeconds).toFixed(1),
      (r.done / r.engineSeconds).toFixed(1),
    ]);
  }
  table(rows, 2);
}

async function main() {
  const started = Date.now();
  describeMachine();
  const latency: LatencyResult[] = [];
  const throughput: ThroughputResult[] = [];
  const add = (r: { latency: LatencyResult[]; throughput: ThroughputResult[] }) => {
    latency.push(...r.latency);
    throughput.push(...r.throughput);
  };

  await onEachDatabase(
    {
      pglite: 'PGlite (in memory, in this process; worker processes reach it over its Unix socket)',
      postgres: 'PostgreSQL (throwaway local cluster, fsync off, pool of 10)',
    },
    async (label, database, url) => add(await benchDatabase(label, database, url)),
  );

  printLatency(latency);
  printThroughput(throughput);
  log(
    `\ntotal time ${((Date.now() - started) / 1000).toFixed(0)} s; load average (1, 5, 15 min) at the ` +
      `end: ${loadAverage()}`,
  );
}

await main();
