// A real worker in its own process, for crash-resume and multi-worker tests: the same
// startWorker the CLI runs, with step functions chosen by STEPS. It reaches the test's
// database through DATABASE_URL (PostgreSQL) or the socket dir of a served PGlite.
import { appendFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config/config.js';
import { openPostgres } from '../../src/db/client.js';
import { createLogger } from '../../src/logger.js';
import type { RegistryStep } from '../../src/steps/step.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startWorker } from '../../src/engine/worker.js';
import { recordingSteps } from './engine.js';

const env = process.env;
const database = env.DATABASE_URL
  ? openPostgres(env.DATABASE_URL, { max: 4 })
  : openPostgres(undefined, { socketDir: env.EMEND_TEST_SOCKET_DIR!, max: 4 });
// The test's key when it gives one (a worker then decrypts what the test's app encrypted: webhook
// secrets), and the settings the test passes for outbound calls.
const passed = Object.fromEntries(
  Object.entries(env).filter(([k]) => k.startsWith('EMEND_WEBHOOK_') || k === 'EMEND_OUTBOUND_ALLOW'),
);
const config = loadConfig({
  EMEND_SECRET_KEY: env.EMEND_SECRET_KEY ?? randomBytes(32).toString('hex'),
  DATABASE_URL: env.DATABASE_URL,
  LOG_LEVEL: 'warn',
  ...passed,
});
const runtime = await createRuntime(config, database, { log: createLogger('warn') });
const trace = env.STEP_TRACE!;

// Every step call is appended to a file the test reads: "<pid> <task> <step>".
const traced =
  (step: string, inner?: RegistryStep): RegistryStep =>
  async (payload, helpers) => {
    appendFileSync(trace, `${process.pid} ${payload.task.id} ${step}\n`);
    if (inner) return inner(payload, helpers);
    return { output: { step, by: process.pid }, tokens: 10 };
  };
// Blocks until the process is killed.
const hang: RegistryStep = () => new Promise(() => {});
const slow: RegistryStep = async () => {
  await new Promise((r) => setTimeout(r, 20));
  return { output: {}, tokens: 1 };
};

// Starts a process tree and records its pids, then waits for it (a kill ends it).
const spawnTree: RegistryStep = async (payload, helpers) => {
  const child = helpers.spawn('sh', ['-c', 'sleep 300 & echo $!; sleep 300 & echo $!; wait'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const pids: number[] = [child.pid!];
  child.stdout!.on('data', (b: Buffer) => {
    pids.push(...String(b).split('\n').filter(Boolean).map(Number));
    if (pids.length === 3) appendFileSync(trace, `${process.pid} ${payload.task.id} pids ${pids.join(',')}\n`);
  });
  await new Promise((resolve) => child.once('exit', resolve));
  return { output: {} };
};

const { steps } = recordingSteps();
const mode = env.STEPS ?? 'quick';
for (const name of Object.keys(steps) as (keyof typeof steps)[]) {
  const inner =
    mode === 'hang-at-locator' && name === 'locator'
      ? hang
      : mode === 'spawn-at-inspector' && name === 'inspector'
        ? spawnTree
        : mode === 'slow'
          ? slow
          : steps[name];
  steps[name] = traced(name, inner);
}

const worker = await startWorker(runtime.deps, steps, {
  concurrency: Number(env.CONCURRENCY ?? 2),
  heartbeatMs: 200,
  staleMs: Number(env.STALE_MS ?? 1500),
  maintenanceMs: 250,
});
console.log('worker ready');
process.on('SIGTERM', async () => {
  await worker.stop();
  await runtime.close();
  await database.close();
  process.exit(0);
});
