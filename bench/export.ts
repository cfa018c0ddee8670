/**
 * Training export benchmark (not a test: it prints figures and asserts nothing).
 *
 * Seeds BENCH_TASKS (default 10,000) done fix tasks with realistic step outputs (plan, located
 * files, a diff of a few KB, validator result; about 5 KB of JSON each) and feedback on every
 * fifth, for one account, then streams GET /v1/me/training/export.jsonl over a real HTTP port
 * and prints rows/s, bytes, and the process's peak RSS and heap growth during the export
 * (process.memoryUsage() sampled every 50 ms). On PGlite (in memory, in this process) and on
 * PostgreSQL: DATABASE_URL when set, otherwise a throwaway local cluster when the server
 * binaries are there.
 *
 *   npm run bench:export       BENCH_TASKS overrides the task count
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { eq, sql } from 'drizzle-orm';
import { createAccount } from '../src/accounts/accounts.js';
import { buildApp } from '../src/app.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config/config.js';
import { type Database, queryRows, runMigrations } from '../src/db/client.js';
import { accounts, taskFeedback } from '../src/db/schema.js';
import { EXPORT_PAGE } from '../src/feedback/training.js';
import { newId } from '../src/ids.js';
import { createLogger } from '../src/logger.js';
import { createRuntime } from '../src/runtime/runtime.js';
import { insertTasks, sampleProgress, taskRow } from '../test/feedback/seed.js';
import { onEachDatabase } from './databases.js';
import { envInt, loadAverage, log, pressure } from './stats.js';

const TASKS = envInt('BENCH_TASKS', 10_000);
const SAMPLE_MS = 50;
const MB = 1024 * 1024;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function describeMachine() {
  const cpus = os.cpus();
  log(`emend training export benchmark, ${new Date().toISOString()}`);
  log(
    `machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} ` +
      `cores, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, ${os.type()} ${os.release()}, ` +
      `Node ${process.version}`,
  );
  log(`load average (1, 5, 15 min) at start: ${loadAverage()}${pressure()}`);
  log(
    `${TASKS} done tasks for one account, feedback on every fifth; export pages of ${EXPORT_PAGE} tasks; ` +
      `client: fetch in this process, reading and discarding chunks`,
  );
}

async function bench(label: string, database: Database) {
  await runMigrations(database);
  const [{ version } = { version: '?' }] = await queryRows<{ version: string }>(database.db, sql`select version()`);
  log(`\ndatabase: ${label}: ${version.split(', compiled')[0]}`);
  const dataDir = mkdtempSync(join(os.tmpdir(), 'emend-bench-export-'));
  const config = loadConfig({
    EMEND_DATA_DIR: dataDir,
    EMEND_SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
  });
  const runtime = await createRuntime(config, database, { clock: systemClock, log: createLogger('silent') });
  const deps = runtime.deps;
  const app = await buildApp(deps);
  const made: { id: string; secret: string; tasks: number }[] = [];
  try {
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    // The same export at a quarter of the size: bounded memory shows as the same peak at both sizes.
    for (const size of [Math.ceil(TASKS / 4), TASKS]) {
      const { account, token } = await createAccount(deps, {
        email: `bench-export-${randomBytes(4).toString('hex')}@example.com`,
        plan: 'pro',
      });
      made.push({ id: account.id, secret: token.secret, tasks: size });
      const started = performance.now();
      // diffs of 30 to 49 changed lines: 3 to 5 KB of JSON a task
      const rows = Array.from({ length: size }, (_, i) =>
        taskRow(account.id, i, { progress: sampleProgress(i, { diffLines: 30 + (i % 20) }) }),
      );
      await insertTasks(deps.db, rows);
      const feedback = rows
        .filter((_, i) => i % 5 === 0)
        .map((r, n) => ({
          id: newId(),
          taskId: r.id!,
          workspaceId: account.id,
          rating: n % 6,
          correct: n % 3 === 0 ? 'partial' : 'yes',
          note: n % 2 ? 'Reviewed; fine.' : null,
          createdAt: new Date(),
        }));
      for (let i = 0; i < feedback.length; i += 1000)
        await deps.db.insert(taskFeedback).values(feedback.slice(i, i + 1000));
      log(
        `seeded ${size} tasks and ${feedback.length} feedback rows for account ${made.length} ` +
          `in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
    }
    await database.db.execute(sql`analyze`);
    for (const a of made) await exportOnce(address, a.secret, a.tasks);
  } finally {
    await app.close();
    // DATABASE_URL may be a database that outlives the benchmark: leave nothing behind.
    for (const a of made) await deps.db.delete(accounts).where(eq(accounts.id, a.id));
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One export over HTTP, read and discarded chunk by chunk, with memory sampled every 50 ms. */
async function exportOnce(address: string, secret: string, expected: number) {
  gc();
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  }, SAMPLE_MS);
  const started = performance.now();
  const res = await fetch(`${address}/v1/me/training/export.jsonl`, { headers: { authorization: `Bearer ${secret}` } });
  if (res.status !== 200 || !res.body) throw new Error(`export answered ${res.status}`);
  let bytes = 0;
  let lines = 0;
  let firstByteMs = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    if (!firstByteMs) firstByteMs = performance.now() - started;
    bytes += chunk.byteLength;
    for (const b of chunk) if (b === 10) lines++;
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const end = process.memoryUsage();
  peakRss = Math.max(peakRss, end.rss);
  peakHeap = Math.max(peakHeap, end.heapUsed);
  gc();
  const after = process.memoryUsage();
  log(`\n${expected} tasks: ${res.headers.get('content-type')}; ${res.headers.get('content-disposition')}`);
  log(
    `  ${lines} lines (expected ${expected}), ${(bytes / MB).toFixed(1)} MiB (${Math.round(bytes / lines)} B a ` +
      `line), ${seconds.toFixed(2)} s, first byte after ${firstByteMs.toFixed(0)} ms`,
  );
  log(`  throughput: ${Math.round(lines / seconds)} rows/s, ${(bytes / MB / seconds).toFixed(1)} MiB/s`);
  log(
    `  memory (server and client share this process): RSS ${(base.rss / MB).toFixed(0)} MiB before, ` +
      `peak ${(peakRss / MB).toFixed(0)} MiB (+${((peakRss - base.rss) / MB).toFixed(0)} MiB); ` +
      (`heap used ${(base.heapUsed / MB).toFixed(0)} MiB before, peak ${(peakHeap / MB).toFixed(0)} MiB ` +
        `(+${((peakHeap - base.heapUsed) / MB).toFixed(0)} MiB, garbage not yet collected included), `) +
      `${(after.heapUsed / MB).toFixed(0)} MiB after a full GC`,
  );
}

async function main() {
  describeMachine();
  await onEachDatabase(
    { pglite: 'PGlite (in memory, in this process)', postgres: 'PostgreSQL (throwaway local cluster, fsync off)' },
    (label, database) => bench(label, database),
    { useDatabaseUrl: true },
  );
  log(`\nload average at the end: ${loadAverage()}${pressure()}`);
}

await main();
