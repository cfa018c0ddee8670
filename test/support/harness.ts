import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { createAccount } from '../../src/accounts/accounts.js';
import type { PlanName } from '../../src/accounts/plans.js';
import { buildApp } from '../../src/app.js';
import { manualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/client.js';
import type { Deps } from '../../src/deps.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { openTestDatabase } from './test-db.js';

export interface Harness {
  app: FastifyInstance;
  deps: Deps;
  database: Database;
  clock: ReturnType<typeof manualClock>;
  /** Every log line the app wrote, for checks that no secret reaches a log. */
  logLines: string[];
  close(): Promise<void>;
}

export async function startHarness(env: Record<string, string> = {}, options: { fetch?: typeof fetch } = {}): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'emend-test-'));
  const config = loadConfig({ EMEND_DATA_DIR: dataDir, EMEND_SECRET_KEY: randomBytes(32).toString('hex'), ...env });
  const database = await openTestDatabase();
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const clock = manualClock(new Date());
  const deps: Deps = {
    config,
    db: database.db,
    dbKind: database.kind,
    clock,
    log: createLogger('info', sink),
    secretKey: config.secretKey!,
    metrics: createMetrics(),
    fetch: options.fetch ?? globalThis.fetch,
  };
  const app = await buildApp(deps);
  await app.ready();
  return {
    app,
    deps,
    database,
    clock,
    logLines,
    close: async () => {
      await app.close();
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let seq = 0;

export async function newAccount(h: Harness, opts: { plan?: PlanName; credits?: number; admin?: boolean; email?: string } = {}) {
  const email = opts.email ?? `user${++seq}-${randomBytes(3).toString('hex')}@example.com`;
  const { account, token } = await createAccount(h.deps, { email, plan: opts.plan, credits: opts.credits, isAdmin: opts.admin });
  return { account, token: token.secret, auth: { authorization: `Bearer ${token.secret}` } };
}
