import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config/config.js';
import type { Database } from './db/client.js';
import { openClientDatabase, openServerDatabase } from './db/open.js';
import { isDatabaseUnavailable } from './db/unavailable.js';
import { surviveLostDatabase } from './db/survive-lost-database.js';
import type { Deps } from './deps.js';
import { createLogger } from './logger.js';
import { createRuntime } from './runtime/runtime.js';
import { productionSteps } from './runtime/step-registry.js';
import { announceServing } from './runtime/startup-banner.js';
import { resolveSecretKey } from './secrets/key.js';
import { type Worker, startWorker, workerOptions } from './engine/worker.js';

export interface RunningServer {
  app: FastifyInstance;
  database: Database;
  deps: Deps;
  url: string;
  close(): Promise<void>;
}

/**
 * Runs `build` with a stack of undo steps: on failure, or later on close(), they run in
 * reverse order (what started last stops first), each failure logged and the rest still run.
 */
async function withUndo<T>(
  log: Logger,
  build: (push: (undo: () => Promise<void>) => void) => Promise<T>,
): Promise<T & { close(): Promise<void> }> {
  const undo: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const step of undo.splice(0).reverse())
      await step().catch((err: unknown) => log.error({ err }, 'error while shutting down'));
  };
  try {
    return { ...(await build((u) => undo.push(u))), close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Opens the database (migrating it, and with the embedded database locking the data dir and
 * sharing it on its socket), builds the app and listens; close() undoes it in reverse.
 */
export async function startServer(config: Config, options: { worker?: boolean } = {}): Promise<RunningServer> {
  const log = createLogger(config.logLevel);
  // Before the database opens, so a missing or bad key stops start-up at once.
  resolveSecretKey(config);
  return withUndo(log, async (push) => {
    const database = await openServerDatabase(config);
    push(() => database.close());
    const runtime = await createRuntime(config, database, { log });
    push(() => runtime.close());
    let worker: Worker | undefined;
    if (options.worker ?? true) {
      push(surviveLostDatabase(log));
      const started = await startWorker(runtime.deps, productionSteps(), workerOptions(config));
      worker = started;
      push(() => started.stop());
    }
    const app = await buildApp(runtime.deps);
    // On a stop the worker stops taking jobs at once, while the API finishes its requests (the
    // worker's own undo step then waits for the same stop).
    push(async () => {
      await Promise.all([app.close(), worker?.stop()]);
    });
    const url = await app.listen({ port: config.port, host: config.host });
    // Asked once, in the background: Maven's and Gradle's JVMs take seconds to answer.
    void runtime.deps.toolchains.start().then((found) => log.info({ toolchains: found }, 'toolchains in the sandbox'));
    announceServing(config, { url, database: database.kind }, log);
    return { app, database, deps: runtime.deps, url };
  });
}

/** How long `emend worker` waits for a database that cannot be reached at start-up. */
const WORKER_START_WAIT_MS = 120_000;

/**
 * `emend worker`: a worker process with no API, on the server's database (or PostgreSQL).
 * A database that is down or restarting when it starts is waited for (a worker restarted during
 * a database restart would otherwise exit; found by the soak).
 */
export async function startWorkerProcess(config: Config): Promise<{ close(): Promise<void> }> {
  const log = createLogger(config.logLevel);
  resolveSecretKey(config);
  const deadline = Date.now() + WORKER_START_WAIT_MS;
  for (;;) {
    try {
      return await openWorkerProcess(config, log);
    } catch (err) {
      if (!isDatabaseUnavailable(err) || Date.now() > deadline) throw err;
      log.warn({ err }, 'the database cannot be reached; waiting to start the worker');
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}

async function openWorkerProcess(config: Config, log: Logger): Promise<{ close(): Promise<void> }> {
  return withUndo(log, async (push) => {
    push(surviveLostDatabase(log));
    const database = await openClientDatabase(config, { connections: config.worker.concurrency + 4 });
    push(() => database.close());
    const runtime = await createRuntime(config, database, { log });
    push(() => runtime.close());
    const worker = await startWorker(runtime.deps, productionSteps(), workerOptions(config));
    push(() => worker.stop());
    return {};
  });
}
