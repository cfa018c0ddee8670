import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { isAbsolute, relative, resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import { ConfigError } from './error.js';
import { type ScmHostConfig, scmHostsFrom } from './scm-hosts.js';
import { MODEL_STEPS, type ModelStep } from '../step-contract/names.js';

export { ConfigError } from './error.js';
export { SCM_KINDS, type ScmHostConfig, type ScmKindName } from './scm-hosts.js';

/** Everything the service reads from its environment, parsed once at start-up. */
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
  /** Task runs one worker process carries at once, how often it beats, when a silent one is taken over. */
  worker: { concurrency: number; heartbeatMs: number; staleMs: number };
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
   * (EMEND_ENV_CACHE_MB in bytes, 0 = no cache; docs/environments.md, "Cached environments").
   */
  validator: { testTimeoutMs: number; envCacheBytes: number };
  /** Scaffolded sites: size limits and the browser that checks them. */
  site: { maxBytes: number; maxFiles: number; chromiumPath: string };
  /** Internal addresses the operator lets user-given URLs reach (EMEND_OUTBOUND_ALLOW; docs/security.md). */
  outboundAllow: OutboundAllowRule[];
  /** Webhook delivery (docs/webhooks.md). */
  webhooks: WebhookConfig;
}

export interface WebhookConfig {
  /** Whether endpoint URLs may be plain http (EMEND_WEBHOOK_ALLOW_HTTP=on); https otherwise. */
  allowHttp: boolean;
  /** One attempt's limit, connection to last byte of the answer. */
  timeoutMs: number;
  /** How long a delivery is retried after its first attempt. */
  retryForMs: number;
  /** The first retry's wait; each later one waits four times longer (at most 6 h), with ±20 % jitter. */
  retryBaseMs: number;
  /** An endpoint failing every attempt for this long is disabled. */
  disableAfterMs: number;
  /** How long a delivery's payload is kept for redelivery. */
  keepPayloadMs: number;
}

/**
 * One EMEND_OUTBOUND_ALLOW entry: an address range (a single address is a /32 or /128), or a
 * host name as written in the URL, each optionally for one port only.
 */
export type OutboundAllowRule =
  | { kind: 'range'; text: string; range: [ipaddr.IPv4 | ipaddr.IPv6, number]; port?: number }
  | { kind: 'host'; text: string; host: string; port?: number };

export const LLM_PROVIDERS = ['openai', 'anthropic', 'google'] as const;
export type LlmProvider = (typeof LLM_PROVIDERS)[number];

/**
 * The billing plan names, once. They live here, in the base layer, because the config sets each
 * plan's budget and cannot import the accounts domain; the plans' limits are in
 * src/accounts/billing-plan.ts.
 * The assignable ones are those an operator can put an account on; demo accounts are made by
 * POST /v1/demo/token.
 */
export const ASSIGNABLE_BILLING_PLANS = ['free', 'pro', 'scale'] as const;
export const BILLING_PLAN_NAMES = [...ASSIGNABLE_BILLING_PLANS, 'demo'] as const;
export type BillingPlanName = (typeof BILLING_PLAN_NAMES)[number];

/** A context window setting's bounds (EMEND_MODEL_CONTEXT_<STEP>, a key's context_window), in tokens. */
export const CONTEXT_WINDOW_MIN = 1_024;
export const CONTEXT_WINDOW_MAX = 10_000_000;

export interface LlmConfig {
  /** The provider managed calls use when a step names none; default: the first with a managed key. */
  provider: LlmProvider | undefined;
  /** Per-step model, as `provider:model` or `model` (EMEND_MODEL_PLANNER …). */
  models: Partial<Record<ModelStep, { provider?: LlmProvider; model: string }>>;
  /** Per-step context window in tokens, input and output together (EMEND_MODEL_CONTEXT_PLANNER …). */
  contextWindows: Partial<Record<ModelStep, number>>;
  /** One call, from request to last byte. */
  timeoutMs: number;
  /** Retries after a 429, a 5xx or a dropped connection. */
  maxRetries: number;
  /** First back-off; doubles each retry unless the provider says when to come back. */
  retryBaseMs: number;
  /** Whether the locator asks the model to re-rank its deterministic shortlist. */
  rerank: boolean;
  /** Per-task spending limits by plan. */
  budgets: Record<BillingPlanName, { tokens: number; usd: number }>;
  /** Extra or overriding prices, USD per million tokens: {"model-prefix": [input, output]}. */
  prices: Record<string, [number, number]>;
  /**
   * Sampling temperature of each step's calls: EMEND_MODEL_TEMPERATURE_<STEP>, else
   * EMEND_MODEL_TEMPERATURE, else 0 (providers default to 1.0, which varies edits run to run).
   */
  temperatures: Record<ModelStep, number>;
}

/** Limits of one sandboxed command (src/sandbox applies them); here because the config sets the defaults. */
export interface SandboxLimits {
  /** Wall-clock limit; the whole process tree is killed when it passes. */
  timeoutMs: number;
  /** RLIMIT_CPU, seconds of CPU time. */
  cpuSeconds: number;
  /** RLIMIT_FSIZE, largest file a process may write, bytes. */
  fileSizeBytes: number;
  /** RLIMIT_NOFILE. */
  openFiles: number;
  /** Memory cap through the memory cgroup where the host offers one, bytes. */
  memoryBytes: number;
  /** Process-count cap through the pids cgroup where the host offers one. */
  maxProcesses: number;
  /** Output kept per stream; beyond it the tail is kept. */
  outputBytes: number;
}

/**
 * How the dependency-install phase reaches the network (docs/environments.md): through the
 * service's egress proxy, which lets it reach the package registries only; not at all; or with
 * the host's whole network (unsafe: loopback, private addresses, the cloud metadata address).
 */
export const SETUP_NETWORK_MODES = ['proxy', 'off', 'host'] as const;
export type SetupNetworkMode = (typeof SETUP_NETWORK_MODES)[number];

export interface SandboxConfig {
  /** bubblewrap in production; unsafe-host runs commands on the host, for development only. */
  mode: 'bubblewrap' | 'unsafe-host';
  /** How the dependency-install phase reaches the network (EMEND_SANDBOX_SETUP_NETWORK). */
  setupNetwork: SetupNetworkMode;
  /** EMEND_SANDBOX_SETUP_NETWORK=on was given: it means `host`, and start-up says it is deprecated. */
  setupNetworkDeprecatedOn: boolean;
  /** Hosts the setup phase may reach besides the public registries (EMEND_SETUP_ALLOW). */
  setupAllow: OutboundAllowRule[];
  /** Extra host directories bound read-only at the same path (e.g. a pyenv root). */
  toolRoots: string[];
  /** Limits of a command that does not ask for others. */
  limits: SandboxLimits;
}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `expected an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** A URL as it may appear in an error message: without its password. */
function shown(name: string, raw: string, parsed?: URL): string {
  if (!parsed) return name === 'DATABASE_URL' ? 'a value that does not parse' : `"${raw}"`;
  if (!parsed.password) return `"${raw}"`;
  const copy = new URL(parsed.href);
  copy.password = '***';
  return `"${copy.href}"`;
}

function url(env: Env, name: string, fallback: string, protocols = ['http:', 'https:']): string {
  const raw = text(env, name) ?? fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `expected a URL, got ${shown(name, raw)}`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `expected a ${protocols.join(' or ')} URL, got ${shown(name, raw, parsed)}`);
  }
  return raw.replace(/\/+$/, '');
}

function trustProxy(env: Env): boolean | number | string[] {
  const raw = text(env, 'EMEND_TRUST_PROXY');
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.every((s) => /^[0-9a-fA-F:./]+$/.test(s))) return list;
  throw new ConfigError(
    'EMEND_TRUST_PROXY',
    'expected true, false, a hop count, or a comma-separated list of addresses',
  );
}

/** Accepts 64 hex characters or base64 of exactly 32 bytes. */
export function parseSecretKey(raw: string, variable = 'EMEND_SECRET_KEY'): Buffer {
  const value = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  const b = Buffer.from(value, 'base64');
  if (b.length === 32 && /^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return b;
  throw new ConfigError(variable, 'expected 32 bytes as 64 hex characters or base64');
}

function choice<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!(choices as readonly string[]).includes(raw))
    throw new ConfigError(name, `expected ${choices.join(' or ')}, got "${raw}"`);
  return raw as T;
}

function toolRoots(env: Env, dataDir: string): string[] {
  const name = 'EMEND_SANDBOX_TOOL_ROOTS';
  const raw = text(env, name);
  if (raw === undefined) return [];
  return raw
    .split(':')
    .filter((p) => p.trim() !== '')
    .map((p) => {
      const root = p.trim();
      if (!isAbsolute(root)) throw new ConfigError(name, `expected absolute paths, got "${root}"`);
      const path = resolve(root);
      // A root holding the data dir would show the database and the secret key to repository code.
      const fromRoot = relative(path, dataDir);
      if (path === '/' || fromRoot === '' || !fromRoot.startsWith('..')) {
        throw new ConfigError(name, `${path} contains the data dir ${dataDir}; bind a narrower directory`);
      }
      if (!existsSync(path)) throw new ConfigError(name, `${path} does not exist`);
      return path;
    });
}

function sandbox(env: Env, dataDir: string): SandboxConfig {
  const mb = 1024 * 1024;
  return {
    mode: choice(env, 'EMEND_SANDBOX', ['bubblewrap', 'unsafe-host'] as const, 'bubblewrap'),
    ...setupNetwork(env),
    toolRoots: toolRoots(env, dataDir),
    limits: {
      timeoutMs: integer(env, 'EMEND_SANDBOX_TIMEOUT_S', 600, 1, 86_400) * 1000,
      cpuSeconds: integer(env, 'EMEND_SANDBOX_CPU_S', 600, 1, 86_400),
      memoryBytes: integer(env, 'EMEND_SANDBOX_MEMORY_MB', 2048, 16, 1024 * 1024) * mb,
      maxProcesses: integer(env, 'EMEND_SANDBOX_PROCESSES', 512, 8, 65_536),
      fileSizeBytes: integer(env, 'EMEND_SANDBOX_FILE_SIZE_MB', 1024, 1, 1024 * 1024) * mb,
      openFiles: integer(env, 'EMEND_SANDBOX_OPEN_FILES', 4096, 16, 1024 * 1024),
      outputBytes: integer(env, 'EMEND_SANDBOX_OUTPUT_KB', 256, 1, 64 * 1024) * 1024,
    },
  };
}

function stepModel(env: Env, name: string): { provider?: LlmProvider; model: string } | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  // A colon after one of the providers names it; any other colon is part of the model (llama3.1:8b).
  const colon = raw.indexOf(':');
  const head = colon > 0 ? raw.slice(0, colon) : '';
  const provider = (LLM_PROVIDERS as readonly string[]).includes(head) ? (head as LlmProvider) : undefined;
  const model = provider ? raw.slice(colon + 1) : raw;
  if (!/^[^\s:][^\s]*$/.test(model)) throw new ConfigError(name, `expected "provider:model" or "model", got "${raw}"`);
  return { provider, model };
}

function decimal(env: Env, name: string, fallback: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(name, `expected a non-negative number, got "${raw}"`);
  return Number(raw);
}

function prices(env: Env): Record<string, [number, number]> {
  const name = 'EMEND_MODEL_PRICES';
  const raw = text(env, name);
  if (raw === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(name, 'expected JSON like {"llama3.1": [0, 0]}');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigError(name, 'expected a JSON object of model → [input, output] USD per million tokens');
  const out: Record<string, [number, number]> = {};
  for (const [model, pair] of Object.entries(parsed)) {
    if (!Array.isArray(pair) || pair.length !== 2 || !pair.every((n) => typeof n === 'number' && n >= 0)) {
      throw new ConfigError(name, `${model}: expected [input, output] USD per million tokens`);
    }
    out[model] = [pair[0], pair[1]];
  }
  return out;
}

/** A temperature between 0 and 2 (the widest range the providers accept; Anthropic stops at 1). */
function temperature(env: Env, name: string, fallback: number): number {
  const value = decimal(env, name, fallback);
  if (value > 2) throw new ConfigError(name, `expected a number from 0 to 2, got "${text(env, name)}"`);
  return value;
}

function temperatures(env: Env): Record<ModelStep, number> {
  const all = temperature(env, 'EMEND_MODEL_TEMPERATURE', 0);
  return Object.fromEntries(
    MODEL_STEPS.map((step) => [step, temperature(env, `EMEND_MODEL_TEMPERATURE_${step.toUpperCase()}`, all)]),
  ) as Record<ModelStep, number>;
}

/** Per-task budgets; generous enough for a fix with retries, small enough to stop a runaway loop. */
const BUDGET_DEFAULTS: Record<BillingPlanName, { tokens: number; usd: number }> = {
  free: { tokens: 300_000, usd: 1.5 },
  pro: { tokens: 1_000_000, usd: 5 },
  scale: { tokens: 2_000_000, usd: 10 },
  demo: { tokens: 150_000, usd: 0.5 },
};

function llm(env: Env): LlmConfig {
  const provider = text(env, 'EMEND_LLM_PROVIDER');
  if (provider !== undefined && !(LLM_PROVIDERS as readonly string[]).includes(provider)) {
    throw new ConfigError('EMEND_LLM_PROVIDER', `expected ${LLM_PROVIDERS.join(', ')}, got "${provider}"`);
  }
  const models: LlmConfig['models'] = {};
  const contextWindows: LlmConfig['contextWindows'] = {};
  for (const step of MODEL_STEPS) {
    const m = stepModel(env, `EMEND_MODEL_${step.toUpperCase()}`);
    if (m) models[step] = m;
    const name = `EMEND_MODEL_CONTEXT_${step.toUpperCase()}`;
    if (text(env, name) !== undefined)
      contextWindows[step] = integer(env, name, 0, CONTEXT_WINDOW_MIN, CONTEXT_WINDOW_MAX);
  }
  const budgets = Object.fromEntries(
    BILLING_PLAN_NAMES.map((plan) => [
      plan,
      {
        tokens: integer(
          env,
          `EMEND_TASK_BUDGET_TOKENS_${plan.toUpperCase()}`,
          BUDGET_DEFAULTS[plan].tokens,
          1_000,
          1_000_000_000,
        ),
        usd: decimal(env, `EMEND_TASK_BUDGET_USD_${plan.toUpperCase()}`, BUDGET_DEFAULTS[plan].usd),
      },
    ]),
  ) as LlmConfig['budgets'];
  return {
    provider: provider as LlmProvider | undefined,
    models,
    contextWindows,
    timeoutMs: integer(env, 'EMEND_LLM_TIMEOUT_S', 180, 1, 3_600) * 1000,
    maxRetries: integer(env, 'EMEND_LLM_MAX_RETRIES', 3, 0, 10),
    retryBaseMs: integer(env, 'EMEND_LLM_RETRY_BASE_MS', 1_000, 0, 60_000),
    rerank: choice(env, 'EMEND_LOCATOR_RERANK', ['on', 'off'] as const, 'on') === 'on',
    budgets,
    prices: prices(env),
    temperatures: temperatures(env),
  };
}

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * EMEND_OUTBOUND_ALLOW: entries separated by commas or spaces, each one of
 * `10.0.0.0/8` or `fd00::/8` (a range, any port), `127.0.0.1` or `::1` (one address),
 * `127.0.0.1:11434` or `[::1]:11434` (one address, one port), `ollama.internal` or
 * `ollama.internal:11434` (a host name as written in the URL, whatever it resolves to).
 */
function outboundAllow(env: Env, name = 'EMEND_OUTBOUND_ALLOW'): OutboundAllowRule[] {
  const raw = text(env, name);
  if (raw === undefined) return [];
  const bad = (entry: string, why: string) =>
    new ConfigError(
      name,
      `"${entry}": ${why}; expected entries like 10.0.0.0/8, 127.0.0.1:11434, [::1]:11434 or ` +
        `ollama.internal:11434, separated by commas`,
    );
  const portOf = (entry: string, p: string) => {
    const n = Number(p);
    if (!/^\d{1,5}$/.test(p) || n < 1 || n > 65_535) throw bad(entry, `port ${p} is not 1-65535`);
    return n;
  };
  return raw
    .split(/[\s,]+/)
    .filter((e) => e !== '')
    .map((entry): OutboundAllowRule => {
      if (entry.includes('/')) {
        try {
          return { kind: 'range', text: entry, range: ipaddr.parseCIDR(entry) };
        } catch {
          throw bad(entry, 'not an address range');
        }
      }
      const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(entry);
      if (bracketed) {
        if (isIP(bracketed[1]!) !== 6) throw bad(entry, 'not an IPv6 address');
        const addr = ipaddr.IPv6.parse(bracketed[1]!);
        return {
          kind: 'range',
          text: entry,
          range: [addr, 128],
          port: bracketed[2] === undefined ? undefined : portOf(entry, bracketed[2]),
        };
      }
      if (isIP(entry) === 6) return { kind: 'range', text: entry, range: [ipaddr.IPv6.parse(entry), 128] };
      const [host = '', port, ...more] = entry.split(':');
      if (more.length > 0) throw bad(entry, 'an IPv6 address with a port goes in brackets');
      const p = port === undefined ? undefined : portOf(entry, port);
      if (isIP(host) === 4) return { kind: 'range', text: entry, range: [ipaddr.IPv4.parse(host), 32], port: p };
      const lower = host.toLowerCase().replace(/\.$/, '');
      if (!HOST_NAME.test(lower) || /^[\d.]+$/.test(lower)) throw bad(entry, 'not an address, range or host name');
      return { kind: 'host', text: entry, host: lower, port: p };
    });
}

/** EMEND_SANDBOX_SETUP_NETWORK (`on`, its old spelling, means host) and EMEND_SETUP_ALLOW. */
function setupNetwork(env: Env): Pick<SandboxConfig, 'setupNetwork' | 'setupNetworkDeprecatedOn' | 'setupAllow'> {
  const given = choice(env, 'EMEND_SANDBOX_SETUP_NETWORK', [...SETUP_NETWORK_MODES, 'on'] as const, 'proxy');
  return {
    setupNetwork: given === 'on' ? 'host' : given,
    setupNetworkDeprecatedOn: given === 'on',
    setupAllow: setupAllow(env),
  };
}

/**
 * EMEND_SETUP_ALLOW: hosts the setup phase may reach besides the public registries, as
 * EMEND_OUTBOUND_ALLOW writes them. A host name alone is reached on its public addresses only;
 * a private or loopback destination (a private registry, a test's local index) must be named
 * with its port, `npm.internal:4873` or `127.0.0.1:8080`, and then only that port is reached.
 * Ranges are not taken: a setup reaches named places, not networks.
 */
function setupAllow(env: Env): OutboundAllowRule[] {
  const name = 'EMEND_SETUP_ALLOW';
  return outboundAllow(env, name).map((rule) => {
    if (
      rule.kind === 'range' &&
      (rule.port === undefined ||
        !['ipv4', 'ipv6'].includes(rule.range[0].kind()) ||
        rule.range[1] < (rule.range[0].kind() === 'ipv4' ? 32 : 128))
    )
      throw new ConfigError(
        name,
        `"${rule.text}": an address must be given with its port (127.0.0.1:8080, [::1]:8080), and ranges are not taken`,
      );
    return rule;
  });
}

function legacyOAuth(env: Env): ScmHostConfig['oauth'] {
  const clientId = text(env, 'EMEND_SCM_OAUTH_CLIENT_ID');
  const clientSecret = text(env, 'EMEND_SCM_OAUTH_CLIENT_SECRET');
  if (!clientId && !clientSecret) return undefined;
  if (!clientId)
    throw new ConfigError('EMEND_SCM_OAUTH_CLIENT_ID', 'required when EMEND_SCM_OAUTH_CLIENT_SECRET is set');
  if (!clientSecret)
    throw new ConfigError('EMEND_SCM_OAUTH_CLIENT_SECRET', 'required when EMEND_SCM_OAUTH_CLIENT_ID is set');
  return { clientId, clientSecret };
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = text(env, 'HOST') ?? '0.0.0.0';
  const dataDir = resolve(text(env, 'EMEND_DATA_DIR') ?? './data');
  const databaseUrl = text(env, 'DATABASE_URL');
  if (databaseUrl !== undefined) url(env, 'DATABASE_URL', databaseUrl, ['postgres:', 'postgresql:']);
  const rawKey = text(env, 'EMEND_SECRET_KEY');
  const secretKey = rawKey === undefined ? undefined : parseSecretKey(rawKey);
  const baseUrl = url(env, 'EMEND_BASE_URL', `http://localhost:${port}`);
  const siteBase = url(env, 'EMEND_SITE_BASE', baseUrl);
  const logLevel = text(env, 'LOG_LEVEL') ?? 'info';
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (!levels.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `expected one of ${levels.join(', ')}`);
  return {
    port,
    host,
    dataDir,
    databaseUrl,
    secretKey,
    baseUrl,
    siteBase,
    scmHosts: scmHostsFrom(env, {
      webUrl: () => url(env, 'EMEND_SCM_WEB_URL', 'https://github.com'),
      apiUrl: () => url(env, 'EMEND_SCM_API_URL', 'https://api.github.com'),
      oauth: () => legacyOAuth(env),
    }),
    mergeCheckMs: integer(env, 'EMEND_MERGE_CHECK_S', 600, 10, 86_400) * 1000,
    commitIdentity: {
      name: text(env, 'EMEND_COMMIT_NAME') ?? 'emend',
      email: text(env, 'EMEND_COMMIT_EMAIL') ?? `emend@${new URL(baseUrl).hostname}`,
    },
    logLevel,
    bodyLimitBytes: integer(env, 'EMEND_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    idempotencyWaitMs: integer(env, 'EMEND_IDEMPOTENCY_WAIT_MS', 8_000, 0, 60_000),
    trustProxy: trustProxy(env),
    worker: {
      concurrency: integer(env, 'EMEND_WORKER_CONCURRENCY', 2, 1, 64),
      heartbeatMs: integer(env, 'EMEND_WORKER_HEARTBEAT_MS', 5_000, 100, 20_000),
      // The bound: a dead worker's task is resumed within 60 s.
      staleMs: integer(env, 'EMEND_WORKER_STALE_MS', 30_000, 1_000, 60_000),
    },
    providerKeys: {
      openai: text(env, 'OPENAI_API_KEY'),
      anthropic: text(env, 'ANTHROPIC_API_KEY'),
      google: text(env, 'GOOGLE_GENERATIVE_AI_API_KEY'),
    },
    providerBaseUrls: {
      openai: url(env, 'OPENAI_BASE_URL', 'https://api.openai.com/v1'),
      anthropic: url(env, 'ANTHROPIC_BASE_URL', 'https://api.anthropic.com/v1'),
      google: url(env, 'GOOGLE_BASE_URL', 'https://generativelanguage.googleapis.com/v1beta'),
    },
    sandbox: sandbox(env, dataDir),
    llm: llm(env),
    validator: {
      testTimeoutMs: integer(env, 'EMEND_VALIDATOR_TEST_TIMEOUT_S', 60, 1, 86_400) * 1000,
      envCacheBytes: integer(env, 'EMEND_ENV_CACHE_MB', 4096, 0, 16_777_216) * 1024 * 1024,
    },
    site: {
      maxBytes: integer(env, 'EMEND_SITE_MAX_KB', 2_048, 16, 1_048_576) * 1024,
      maxFiles: integer(env, 'EMEND_SITE_MAX_FILES', 60, 1, 10_000),
      chromiumPath: text(env, 'EMEND_CHROMIUM_PATH') ?? '/usr/bin/chromium',
    },
    outboundAllow: outboundAllow(env),
    webhooks: {
      allowHttp: choice(env, 'EMEND_WEBHOOK_ALLOW_HTTP', ['on', 'off'] as const, 'off') === 'on',
      timeoutMs: integer(env, 'EMEND_WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
      retryForMs: integer(env, 'EMEND_WEBHOOK_RETRY_HOURS', 24, 1, 72) * 3_600_000,
      retryBaseMs: integer(env, 'EMEND_WEBHOOK_RETRY_BASE_MS', 5_000, 10, 600_000),
      disableAfterMs: integer(env, 'EMEND_WEBHOOK_DISABLE_DAYS', 3, 1, 30) * 86_400_000,
      keepPayloadMs: 7 * 86_400_000,
    },
  };
}
