import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Db } from './db/client.js';
import type { Metrics } from './metrics/registry.js';

/** Everything the service's code needs from the outside, built in one place and passed in. */
export interface Deps {
  config: Config;
  db: Db;
  dbKind: 'pglite' | 'postgres';
  clock: Clock;
  log: Logger;
  /** Encrypts provider keys and code-host tokens (AES-256-GCM). */
  secretKey: Buffer;
  metrics: Metrics;
  /** Outbound HTTP (provider key checks); the real fetch in production. */
  fetch: typeof fetch;
}
