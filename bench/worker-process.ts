// A worker in its own process for bench/engine.ts: the same startWorker the CLI runs, with
// no-op steps and the production timings. It reaches the benchmark's database through
// DATABASE_URL (PostgreSQL) or BENCH_SOCKET_DIR (the in-memory PGlite served on a Unix
// socket by src/db/pglite-socket.ts, as `emend serve` serves its data dir).
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config/config.js';
import { openPostgres } from '../src/db/client.js';
import { createLogger } from '../src/logger.js';
import { createRuntime } from '../src/runtime/runtime.js';
import { startWorker } from '../src/engine/worker.js';
import { BENCH_WORKER_OPTIONS, noopSteps } from './noop-steps.js';

const env = process.env;
const database = env.DATABASE_URL
  ? openPostgres(env.DATABASE_URL, { max: 4 })
  : openPostgres(undefined, { socketDir: env.BENCH_SOCKET_DIR!, max: 4 });
const config = loadConfig({
  EMEND_SECRET_KEY: randomBytes(32).toString('hex'),
  DATABASE_URL: env.DATABASE_URL,
  LOG_LEVEL: 'warn',
});
const runtime = await createRuntime(config, database, { log: createLogger('warn') });
const worker = await startWorker(runtime.deps, noopSteps(), {
  ...BENCH_WORKER_OPTIONS,
  concurrency: Number(env.CONCURRENCY ?? BENCH_WORKER_OPTIONS.concurrency),
});
console.log('worker ready');

let stopping = false;
process.on('SIGTERM', async () => {
  if (stopping) return;
  stopping = true;
  await worker.stop().catch(() => {});
  await runtime.close();
  await database.close().catch(() => {});
  process.exit(0);
});
