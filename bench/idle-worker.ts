/**
 * What an idle worker costs (not a test: it prints figures and asserts nothing about time).
 *
 * A worker with no task to run still polls its queues (tasks, webhook deliveries, code-host
 * triggers). On PGlite every poll is a query run in this process, so an idle embedded service
 * spends CPU on them; on PostgreSQL the server does. Measured per database: the process's CPU
 * (user + system) per second of wall time and the queue's fetch queries per second, over
 * BENCH_IDLE_SECONDS (20 by default) after a 3 s settle, with the production worker options
 * (bench/noop-steps.ts) and the production polling interval.
 *
 *   npx tsx bench/idle-worker.ts
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config/config.js';
import { type Database, runMigrations } from '../src/db/client.js';
import { startWorker } from '../src/engine/worker.js';
import { createLogger } from '../src/logger.js';
import { createRuntime } from '../src/runtime/runtime.js';
import { countFetches } from '../test/support/queue-fetches.js';
import { onEachDatabase } from './databases.js';
import { BENCH_WORKER_OPTIONS, noopSteps } from './noop-steps.js';
import { envInt, loadAverage, log } from './stats.js';

const SECONDS = envInt('BENCH_IDLE_SECONDS', 20);

const cpuMs = () => {
  const r = process.resourceUsage();
  return (r.userCPUTime + r.systemCPUTime) / 1000;
};

async function measure(label: string, database: Database) {
  await runMigrations(database);
  const dataDir = mkdtempSync(join(os.tmpdir(), 'emend-bench-idle-'));
  const fetches = countFetches(database);
  const config = loadConfig({
    EMEND_DATA_DIR: dataDir,
    EMEND_SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
  });
  const runtime = await createRuntime(config, database, { clock: systemClock, log: createLogger('silent') });
  const worker = await startWorker(runtime.deps, noopSteps(), BENCH_WORKER_OPTIONS);
  try {
    await new Promise((r) => setTimeout(r, 3_000));
    const [cpu0, f0, t0] = [cpuMs(), fetches(), performance.now()];
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const wall = (performance.now() - t0) / 1000;
    const cpu = (cpuMs() - cpu0) / wall;
    log(
      `${label}: idle worker ${cpu.toFixed(1)} ms of CPU per second (${(cpu / 10).toFixed(1)} % of a core), ` +
        `${((fetches() - f0) / wall).toFixed(1)} queue fetches per second, over ${wall.toFixed(1)} s`,
    );
  } finally {
    await worker.stop();
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const cpus = os.cpus();
log(`emend idle worker benchmark, ${new Date().toISOString()}`);
log(
  `machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ` +
    `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, Node ${process.version}; load average at start: ${loadAverage()}`,
);
log(
  `worker: concurrency ${BENCH_WORKER_OPTIONS.concurrency}, webhook concurrency ${BENCH_WORKER_OPTIONS.webhookConcurrency}, ` +
    `heartbeat ${BENCH_WORKER_OPTIONS.heartbeatMs} ms, maintenance ${BENCH_WORKER_OPTIONS.maintenanceMs} ms; queue polling 0.5 s`,
);
await onEachDatabase({ pglite: 'PGlite (in this process)', postgres: 'PostgreSQL (local cluster)' }, measure);
