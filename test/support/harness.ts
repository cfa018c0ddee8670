import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq, inArray, type SQL } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { createAccount } from '../../src/accounts/accounts.js';
import type { BillingPlanName } from '../../src/config/billing-plans.js';
import type { ScmKindName } from '../../src/config/scm-hosts.js';
import { buildApp } from '../../src/app.js';
import { manualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/config.js';
import type { Database } from '../../src/db/client.js';
import { tasks } from '../../src/db/schema.js';
import type { Deps } from '../../src/deps.js';
import { createLogger } from '../../src/logger.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { connectScm } from '../../src/workspaces/scm-connection.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github/server.js';
import { logSink } from './log-sink.js';
import { cachedSerializers } from './serializer-cache.js';
import { openTestDatabase } from './test-db.js';

export interface Harness {
  app: FastifyInstance;
  /** The code host's API for this service (EMEND_SCM_API_URL), unless the test gave its own. */
  github: FakeGitHub;
  deps: Deps;
  database: Database;
  clock: ReturnType<typeof manualClock>;
  /** Every log line the app wrote, for checks that no secret reaches a log. */
  logLines: string[];
  close(): Promise<void>;
}

/** A code host beside the fake GitHub, as EMEND_SCM_HOSTS lists it (its web_url, api_url…). */
export interface ExtraHost {
  id: string;
  kind: ScmKindName;
  web_url: string;
  api_url: string;
  oauth?: { client_id: string; client_secret: string };
}

/**
 * The app on a fresh database. The code host's REST API is a fake GitHub (h.github) unless the
 * test sets EMEND_SCM_API_URL; with `scm: 'fake'` its web address (git over HTTP) is too.
 * `hosts` adds code hosts after it (EMEND_SCM_HOSTS: the fake GitHub is `github`, the default);
 * a test that sets EMEND_SCM_HOSTS itself gets exactly its list.
 */
export async function startHarness(
  env: Record<string, string> = {},
  options: {
    fetch?: typeof fetch;
    scm?: 'fake' /** the resolver behind the outbound address policy */;
    lookup?: LookupFunction;
    hosts?: ExtraHost[];
  } = {},
): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'emend-test-'));
  const github = await startFakeGitHub();
  const githubHost: ExtraHost = {
    id: 'github',
    kind: 'github',
    web_url: options.scm === 'fake' ? github.webUrl : 'https://github.com',
    api_url: github.apiUrl,
  };
  const scmEnv: Record<string, string> = env.EMEND_SCM_HOSTS
    ? {}
    : options.hosts
      ? { EMEND_SCM_HOSTS: JSON.stringify([githubHost, ...options.hosts]) }
      : {
          EMEND_SCM_API_URL: github.apiUrl,
          ...(options.scm === 'fake' ? { EMEND_SCM_WEB_URL: github.webUrl } : {}),
        };
  const config = loadConfig({
    EMEND_DATA_DIR: dataDir,
    EMEND_SECRET_KEY: randomBytes(32).toString('hex'),
    ...scmEnv,
    ...withModelKey(env),
  });
  const database = await openTestDatabase();
  const { lines: logLines, stream: sink } = logSink();
  const clock = manualClock(new Date());
  const runtime = await createRuntime(config, database, {
    clock,
    log: createLogger(config.logLevel, sink),
    fetch: options.fetch,
    lookup: options.lookup,
    queue: { pollingIntervalSeconds: 0.5 },
  });
  const deps: Deps = runtime.deps;
  const app = await buildApp(deps, { schemaController: cachedSerializers });
  await app.ready();
  return {
    app,
    github,
    deps,
    database,
    clock,
    logLines,
    close: async () => {
      await app.close();
      await runtime.close();
      await database.close();
      await github.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The managed model key every harness has unless the test names one (or blanks OPENAI_API_KEY to
 * have none): POST /v1/tasks refuses a task no model can run (412 model_not_configured), and most
 * tests create tasks whose steps are doubles. Its provider's address is a closed loopback port
 * unless the test gives one, so a production step that does call it fails at once, offline.
 */
export const HARNESS_MODEL_KEY = 'sk-harness-placeholder';
const MODEL_KEY_VARS = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GOOGLE_GENERATIVE_AI_API_KEY'];

function withModelKey(env: Record<string, string>): Record<string, string> {
  if (MODEL_KEY_VARS.some((name) => name in env)) return env;
  return { OPENAI_API_KEY: HARNESS_MODEL_KEY, OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', ...env };
}

let seq = 0;

/**
 * A new account with a full token. Unless `scm: false`, it is connected to the fake code host
 * as a user of its own (through the service's connect path, over HTTP), as pull-request runs need.
 */
export async function newAccount(
  h: Harness,
  opts: { plan?: BillingPlanName; credits?: number; admin?: boolean; email?: string; scm?: boolean } = {},
) {
  const email = opts.email ?? `user${++seq}-${randomBytes(3).toString('hex')}@example.com`;
  const { account, workspace, token } = await createAccount(h.deps, {
    email,
    plan: opts.plan,
    credits: opts.credits,
    isAdmin: opts.admin,
  });
  let scm: { login: string; token: string } | undefined;
  if (opts.scm !== false) {
    scm = h.github.addUser(`u${seq}-${randomBytes(3).toString('hex')}`);
    await connectScm(h.deps, account.id, scm.token);
  }
  return { account, workspace, token: token.secret, auth: { authorization: `Bearer ${token.secret}` }, scm };
}

/**
 * Turns the workspace's own keys (BYOK) on, with a key of its own saved (a placeholder its tests'
 * steps never send): a BYOK workspace without one is refused tasks (412 model_not_configured).
 */
export async function useOwnKey(h: Harness, auth: Record<string, string>) {
  const saved = await h.app.inject({
    method: 'POST',
    url: '/v1/me/keys',
    headers: auth,
    payload: { provider: 'openai', api_key: 'sk-own-placeholder-0123456789' },
  });
  const on = await h.app.inject({ method: 'POST', url: '/v1/me/byok', headers: auth, payload: { enabled: true } });
  if (saved.statusCode >= 300 || on.statusCode !== 200) throw new Error(`BYOK not set up: ${saved.body} ${on.body}`);
}

/**
 * Walks tasks along legal edges to `to` (the database refuses any other move), as the
 * engine would, so tests of the API can free the concurrency cap without running steps.
 */
export async function forceStatus(h: Harness, where: SQL, to: 'running' | 'done' | 'awaiting_plan') {
  await h.deps.db
    .update(tasks)
    .set({ status: 'running' })
    .where(and(where, inArray(tasks.status, ['pending', 'awaiting_plan', 'awaiting_diff'])));
  if (to !== 'running')
    await h.deps.db
      .update(tasks)
      .set({ status: to })
      .where(and(where, eq(tasks.status, 'running')));
}
