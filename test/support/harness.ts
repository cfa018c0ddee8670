import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq, inArray, type SQL } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { createAccount } from '../../src/accounts/accounts.js';
import type { PlanName } from '../../src/accounts/plans.js';
import { buildApp } from '../../src/app.js';
import { manualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/client.js';
import { tasks } from '../../src/db/schema.js';
import type { Deps } from '../../src/deps.js';
import { createLogger } from '../../src/logger.js';
import { createRuntime } from '../../src/runtime.js';
import { logSink } from './log-sink.js';
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
  const { lines: logLines, stream: sink } = logSink();
  const clock = manualClock(new Date());
  const runtime = await createRuntime(config, database, { clock, log: createLogger('info', sink), fetch: options.fetch, queue: { pollingIntervalSeconds: 0.5 } });
  const deps: Deps = runtime.deps;
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
      await runtime.close();
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

/**
 * Walks tasks along legal edges to `to` (the database refuses any other move), as the
 * engine would, so tests of the API can free the concurrency cap without running steps.
 */
export async function forceStatus(h: Harness, where: SQL, to: 'running' | 'done' | 'awaiting_plan') {
  await h.deps.db.update(tasks).set({ status: 'running' }).where(and(where, inArray(tasks.status, ['pending', 'awaiting_plan', 'awaiting_diff'])));
  if (to !== 'running') await h.deps.db.update(tasks).set({ status: to }).where(and(where, eq(tasks.status, 'running')));
}
