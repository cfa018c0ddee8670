import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { systemClock } from './clock.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import { openServerDatabase } from './db/open.js';
import type { Deps } from './deps.js';
import { createLogger } from './logger.js';
import { createMetrics } from './metrics/registry.js';
import { resolveSecretKey } from './secret-key.js';

export interface RunningServer {
  app: FastifyInstance;
  database: Database;
  url: string;
  close(): Promise<void>;
}

export function depsFor(config: Config, database: Database, log = createLogger(config.logLevel), secretKey = resolveSecretKey(config)): Deps {
  return {
    config,
    db: database.db,
    dbKind: database.kind,
    clock: systemClock,
    log,
    secretKey,
    metrics: createMetrics(),
    fetch: globalThis.fetch,
  };
}

/** Opens the database (migrating it), builds the app and listens; close() undoes it in reverse. */
export async function startServer(config: Config): Promise<RunningServer> {
  const log = createLogger(config.logLevel);
  // Before the database opens, so a missing or bad key stops start-up at once.
  const secretKey = resolveSecretKey(config);
  const database = await openServerDatabase(config);
  let app: FastifyInstance | undefined;
  try {
    app = await buildApp(depsFor(config, database, log, secretKey));
    const url = await app.listen({ port: config.port, host: config.host });
    log.info({ url, database: database.kind, dataDir: database.kind === 'pglite' ? config.dataDir : undefined }, 'emend is serving');
    const running = app;
    return {
      app: running,
      database,
      url,
      close: async () => {
        try {
          await running.close();
        } finally {
          await database.close();
        }
      },
    };
  } catch (err) {
    await app?.close().catch(() => {});
    await database.close();
    throw err;
  }
}
