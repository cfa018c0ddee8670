import { resolve } from 'node:path';
import { z } from 'zod';
import { type Env, type VariableSchema, integer, onOff, oneOf, read, refuse, text, url } from './env.js';
import { type LlmConfig, llmConfig, providerBaseUrls, providerKeys } from './llm.js';
import { type OutboundAllowRule, outboundAllow } from './outbound.js';
import { type SandboxConfig, sandboxConfig } from './sandbox.js';
import { type ScmHostConfig, scmHostsConfig, withStoredApps } from './scm-hosts.js';
import { withSecretFiles } from './secret-files.js';
import { secretKey } from './secret-key.js';
import { type WebhookConfig, webhookConfig } from './webhooks.js';
import { ConfigError } from './error.js';

/** Everything the service reads from its environment, parsed once at start-up. */
/** The fixers there are: the pipeline's one-shot fixer with rework, and the tool-using agent. */
export const FIXER_KINDS = ['pipeline', 'agent'] as const;
export type FixerKind = (typeof FIXER_KINDS)[number];

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** PostgreSQL connection string; when absent the embedded PGlite database under dataDir is used. */
  databaseUrl: string | undefined;
  /** 32-byte key for AES-256-GCM; undefined means "generate one into the data dir". */
  secretKey: Buffer | undefined;
  baseUrl: string;
  siteBase: string;
  /**
   * The code hosts this deployment speaks to, the first being the default (docs/code-host.md):
   * EMEND_SCM_HOSTS / EMEND_SCM_HOSTS_FILE, or the one GitHub host of EMEND_SCM_WEB_URL and friends.
   */
  scmHosts: ScmHostConfig[];
  /** How often open pull requests the service opened are checked for merges and human edits. */
  mergeCheckMs: number;
  /** Author and committer of the commits the service pushes; other authors on its branches are human edits. */
  commitIdentity: { name: string; email: string };
  logLevel: string;
  bodyLimitBytes: number;
  /** How long a request waits for one in flight with the same Idempotency-Key before 409 "in progress". */
  idempotencyWaitMs: number;
  /**
   * Task runs one worker process carries at once, how often it beats, when a silent one is taken over,
   * and how long a stopping worker lets a running step finish before it aborts it.
   */
  worker: { concurrency: number; heartbeatMs: number; staleMs: number; stopGraceMs: number };
  /** Fastify's trustProxy: false, true, a hop count, or a list of trusted addresses. */
  trustProxy: boolean | number | string[];
  /** Managed provider keys (the operator's own), used when an account is not in BYOK mode. */
  providerKeys: { openai?: string; anthropic?: string; google?: string };
  /** Base URLs for the providers' APIs; tests and gateways point these elsewhere. */
  providerBaseUrls: { openai: string; anthropic: string; google: string };
  /** How repository commands are isolated (docs/sandbox.md). */
  sandbox: SandboxConfig;
  /** Which models the thinking steps use, and how calls to them behave (docs/configuration.md). */
  llm: LlmConfig;
  /**
   * The validator: how long one test may run before it is failed and its run stopped
   * (docs/validator.md); how large the cache of environments setup built may grow
   * (EMEND_ENV_CACHE_MB in bytes, 0 = no cache; docs/environments.md, "Cached environments"); how
   * much the kept baselines may hold (EMEND_BASELINE_CACHE_MB in bytes, 0 = none kept) and whether a
   * validation may run its two trees at once (EMEND_VALIDATOR_PARALLEL; docs/validator.md).
   */
  validator: { testTimeoutMs: number; envCacheBytes: number; baselineCacheBytes: number; parallel: 'auto' | 'off' };
  /**
   * The default fixer (EMEND_FIXER) of tasks that name none and whose account has no default: the
   * one-shot pipeline fixer, or the agent that runs commands in the sandbox (docs/agent.md), if the
   * task's plan offers it; and the agent's ceilings over every plan's limits (model turns, the
   * loop's wall time) and one command's time.
   */
  fixer: { kind: FixerKind; agentTurns: number; agentWallMs: number; agentCommandMs: number };
  /** Scaffolded sites: size limits and the browser that checks them. */
  site: { maxBytes: number; maxFiles: number; chromiumPath: string };
  /** Internal addresses the operator lets user-given URLs reach (EMEND_OUTBOUND_ALLOW; docs/security.md). */
  outboundAllow: OutboundAllowRule[];
  /** Webhook delivery (docs/webhooks.md). */
  webhooks: WebhookConfig;
  /**
   * Audit rows older than this many days are folded into a summary row (EMEND_AUDIT_RETENTION_DAYS;
   * 0, the default: kept for ever). docs/security.md, "Audit log".
   */
  auditRetentionDays: number;
  /**
   * Whether POST /v1/demo/token issues demo tokens (EMEND_DEMO_TOKENS, on by default as the spec
   * publishes it): off, it answers 404 and the panel hides "Try a demo".
   */
  demoTokens: boolean;
  /**
   * The server's own OpenID Connect provider for signing in (EMEND_OIDC_ISSUER, _CLIENT_ID,
   * _CLIENT_SECRET; docs/teams.md): an operator's endpoint, fetched directly, not through the
   * outbound policy. A workspace may name its own (PUT /v1/workspaces/{id}/sso).
   */
  oidc?: OidcClientConfig;
}

export interface OidcClientConfig {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** The server's OpenID client: all three variables or none. */
function oidcConfig(env: Env): OidcClientConfig | undefined {
  const issuer = read(env, 'EMEND_OIDC_ISSUER', url('EMEND_OIDC_ISSUER'));
  const clientId = text(env, 'EMEND_OIDC_CLIENT_ID');
  const clientSecret = text(env, 'EMEND_OIDC_CLIENT_SECRET');
  if (!issuer && !clientId && !clientSecret) return undefined;
  for (const [name, value] of [
    ['EMEND_OIDC_ISSUER', issuer],
    ['EMEND_OIDC_CLIENT_ID', clientId],
    ['EMEND_OIDC_CLIENT_SECRET', clientSecret],
  ] as const) {
    if (!value)
      throw new ConfigError(name, 'set it too: single sign-on needs the issuer, the client id and its secret');
  }
  return { issuer: issuer!, clientId: clientId!, clientSecret: clientSecret! };
}

/** EMEND_TRUST_PROXY: true, false, a hop count, or a comma-separated list of addresses. */
const trustProxy: VariableSchema<boolean | number | string[]> = z.string().transform((raw, ctx) => {
  if (raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.every((s) => /^[0-9a-fA-F:./]+$/.test(s))) return list;
  return refuse(ctx, 'expected true, false, a hop count, or a comma-separated list of addresses');
});

/** The listen address when HOST is unset: loopback only. */
export const DEFAULT_HOST = '127.0.0.1';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The environment → Config, read in a fixed order so that of several bad variables the same one
 * is reported first (test/config/messages.expected.txt pins the order and every message).
 */
export function loadConfig(given: Env = process.env): Config {
  const env = withSecretFiles(given);
  const port = read(env, 'PORT', integer(0, 65535), 3000);
  // Loopback unless the operator says otherwise: `npm start` on a laptop must not serve the
  // network (a container image sets HOST=0.0.0.0 on purpose).
  const host = text(env, 'HOST') ?? DEFAULT_HOST;
  const dataDir = resolve(text(env, 'EMEND_DATA_DIR') ?? './data');
  // Checked as a URL, kept as written.
  const databaseUrl = text(env, 'DATABASE_URL');
  read(env, 'DATABASE_URL', url('DATABASE_URL', ['postgres:', 'postgresql:']));
  const key = read(env, 'EMEND_SECRET_KEY', secretKey);
  const baseUrl = read(env, 'EMEND_BASE_URL', url('EMEND_BASE_URL'), `http://localhost:${port}`);
  const siteBase = read(env, 'EMEND_SITE_BASE', url('EMEND_SITE_BASE'), baseUrl);
  const logLevel = read(
    env,
    'LOG_LEVEL',
    oneOf(LOG_LEVELS, () => `expected one of ${LOG_LEVELS.join(', ')}`),
    'info',
  );
  return {
    port,
    host,
    dataDir,
    databaseUrl,
    secretKey: key,
    baseUrl,
    siteBase,
    scmHosts: withStoredApps(scmHostsConfig(env), dataDir),
    mergeCheckMs: read(env, 'EMEND_MERGE_CHECK_S', integer(10, 86_400), 600) * 1000,
    commitIdentity: {
      name: text(env, 'EMEND_COMMIT_NAME') ?? 'emend',
      email: text(env, 'EMEND_COMMIT_EMAIL') ?? `emend@${new URL(baseUrl).hostname}`,
    },
    logLevel,
    bodyLimitBytes: read(env, 'EMEND_BODY_LIMIT_BYTES', integer(1024, 64 * 1024 * 1024), 1024 * 1024),
    idempotencyWaitMs: read(env, 'EMEND_IDEMPOTENCY_WAIT_MS', integer(0, 60_000), 8_000),
    trustProxy: read(env, 'EMEND_TRUST_PROXY', trustProxy, false),
    worker: {
      concurrency: read(env, 'EMEND_WORKER_CONCURRENCY', integer(1, 64), 2),
      heartbeatMs: read(env, 'EMEND_WORKER_HEARTBEAT_MS', integer(100, 20_000), 5_000),
      // The bound: a dead worker's task is resumed within 60 s.
      staleMs: read(env, 'EMEND_WORKER_STALE_MS', integer(1_000, 60_000), 30_000),
      // 25 s fits within Kubernetes' default 30 s termination grace, with time left to hand back.
      stopGraceMs: read(env, 'EMEND_STOP_GRACE_SECONDS', integer(0, 3_600), 25) * 1000,
    },
    providerKeys: providerKeys(env),
    providerBaseUrls: providerBaseUrls(env),
    sandbox: sandboxConfig(env, dataDir),
    llm: llmConfig(env),
    validator: {
      testTimeoutMs: read(env, 'EMEND_VALIDATOR_TEST_TIMEOUT_S', integer(1, 86_400), 60) * 1000,
      envCacheBytes: read(env, 'EMEND_ENV_CACHE_MB', integer(0, 16_777_216), 4096) * 1024 * 1024,
      baselineCacheBytes: read(env, 'EMEND_BASELINE_CACHE_MB', integer(0, 1_048_576), 256) * 1024 * 1024,
      parallel: read(env, 'EMEND_VALIDATOR_PARALLEL', oneOf(['auto', 'off']), 'auto'),
    },
    fixer: {
      kind: read(
        env,
        'EMEND_FIXER',
        oneOf(FIXER_KINDS, () => `expected one of ${FIXER_KINDS.join(', ')}`),
        'pipeline',
      ),
      // Ceilings over every plan's own agent limits (src/billing/billing-plan.ts): above the largest by default.
      agentTurns: read(env, 'EMEND_AGENT_TURNS', integer(1, 500), 100),
      agentWallMs: read(env, 'EMEND_AGENT_WALL_S', integer(10, 86_400), 3_600) * 1000,
      agentCommandMs: read(env, 'EMEND_AGENT_COMMAND_S', integer(1, 3_600), 120) * 1000,
    },
    site: {
      maxBytes: read(env, 'EMEND_SITE_MAX_KB', integer(16, 1_048_576), 2_048) * 1024,
      maxFiles: read(env, 'EMEND_SITE_MAX_FILES', integer(1, 10_000), 60),
      chromiumPath: text(env, 'EMEND_CHROMIUM_PATH') ?? '/usr/bin/chromium',
    },
    outboundAllow: read(env, 'EMEND_OUTBOUND_ALLOW', outboundAllow, []),
    webhooks: webhookConfig(env),
    auditRetentionDays: read(env, 'EMEND_AUDIT_RETENTION_DAYS', integer(0, 36_500), 0),
    demoTokens: read(env, 'EMEND_DEMO_TOKENS', onOff, true),
    oidc: oidcConfig(env),
  };
}
