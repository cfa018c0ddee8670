import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/config/error.js';

/**
 * What loadConfig says about a broad list of environments: for each variable, values it must
 * refuse (and a few it takes), the order in which it reports several bad variables, and the
 * Config it builds from good ones. Written to test/config/messages.expected.txt before the parser
 * was rewritten on zod (issue 29, point 4), so that the messages stay word for word the same.
 */

type Env = Record<string, string>;

const INTEGERS: Record<string, [number, number]> = {
  PORT: [0, 65535],
  EMEND_MERGE_CHECK_S: [10, 86_400],
  EMEND_AGENT_TURNS: [1, 500],
  EMEND_AGENT_WALL_S: [10, 86_400],
  EMEND_AGENT_COMMAND_S: [1, 3_600],
  EMEND_BODY_LIMIT_BYTES: [1024, 64 * 1024 * 1024],
  EMEND_IDEMPOTENCY_WAIT_MS: [0, 60_000],
  EMEND_WORKER_CONCURRENCY: [1, 64],
  EMEND_WORKER_HEARTBEAT_MS: [100, 20_000],
  EMEND_WORKER_STALE_MS: [1_000, 60_000],
  EMEND_SANDBOX_TIMEOUT_S: [1, 86_400],
  EMEND_SANDBOX_CPU_S: [1, 86_400],
  EMEND_SANDBOX_MEMORY_MB: [16, 1024 * 1024],
  EMEND_SANDBOX_PROCESSES: [8, 65_536],
  EMEND_SANDBOX_FILE_SIZE_MB: [1, 1024 * 1024],
  EMEND_SANDBOX_OPEN_FILES: [16, 1024 * 1024],
  EMEND_SANDBOX_OUTPUT_KB: [1, 64 * 1024],
  EMEND_LLM_TIMEOUT_S: [1, 3_600],
  EMEND_LLM_MAX_RETRIES: [0, 10],
  EMEND_LLM_RETRY_BASE_MS: [0, 60_000],
  EMEND_VALIDATOR_TEST_TIMEOUT_S: [1, 86_400],
  EMEND_ENV_CACHE_MB: [0, 16_777_216],
  EMEND_SITE_MAX_KB: [16, 1_048_576],
  EMEND_SITE_MAX_FILES: [1, 10_000],
  EMEND_WEBHOOK_TIMEOUT_MS: [100, 60_000],
  EMEND_WEBHOOK_RETRY_HOURS: [1, 72],
  EMEND_WEBHOOK_RETRY_BASE_MS: [10, 600_000],
  EMEND_WEBHOOK_DISABLE_DAYS: [1, 30],
  EMEND_AUDIT_RETENTION_DAYS: [0, 36_500],
  EMEND_MODEL_CONTEXT_PLANNER: [1_024, 10_000_000],
  EMEND_MODEL_CONTEXT_FIXER: [1_024, 10_000_000],
  EMEND_TASK_BUDGET_TOKENS_FREE: [1_000, 1_000_000_000],
  EMEND_TASK_BUDGET_TOKENS_DEMO: [1_000, 1_000_000_000],
};
const INTEGER_VALUES = ['abc', '-1', '1.5', '+5', '1e3', '0x10', '１２', '99999999999999999999', ' 7 '];

const DECIMALS = [
  'EMEND_TASK_BUDGET_USD_FREE',
  'EMEND_TASK_BUDGET_USD_SCALE',
  'EMEND_MODEL_TEMPERATURE',
  'EMEND_MODEL_TEMPERATURE_PLANNER',
  'EMEND_MODEL_TEMPERATURE_INSPECTOR',
];
const DECIMAL_VALUES = ['abc', '-1', '1.', '.5', '2.5', '2.0', '1e2', '3', '0.25'];

const URLS = [
  'DATABASE_URL',
  'EMEND_BASE_URL',
  'EMEND_SITE_BASE',
  'EMEND_SCM_WEB_URL',
  'EMEND_SCM_API_URL',
  'OPENAI_BASE_URL',
  'ANTHROPIC_BASE_URL',
  'GOOGLE_BASE_URL',
];
const URL_VALUES = [
  'not a url',
  'ftp://example.com',
  'localhost:11434',
  'mysql://admin:hunter2@db/x',
  'http://user:secret@example.com/',
  'https://example.com///',
  'postgres://u:p@db/x',
  'http://',
];

const CHOICES: Record<string, string[]> = {
  EMEND_SANDBOX: ['docker', 'Bubblewrap', 'unsafe-host'],
  EMEND_FIXER: ['agents', 'agent'],
  EMEND_SANDBOX_SETUP_NETWORK: ['yes', 'on', 'host', 'off'],
  EMEND_LOCATOR_RERANK: ['true', 'off'],
  EMEND_WEBHOOK_ALLOW_HTTP: ['yes', 'on'],
  LOG_LEVEL: ['loud', 'WARN', 'silent'],
  EMEND_LLM_PROVIDER: ['mistral', 'anthropic'],
  EMEND_TRUST_PROXY: ['???', 'true,false', 'a,b', ' , ', '10.0.0.1,  fd00::/8', 'false', '3'],
  EMEND_SECRET_KEY: ['short', 'z'.repeat(64), Buffer.alloc(31, 7).toString('base64'), 'hunter2hunter2'],
  EMEND_MODEL_PLANNER: ['openai:', ':x', 'a b', 'openai: x', 'x:y', 'openai:llama3.1:8b', 'llama3.1:8b'],
  EMEND_MODEL_LOCATOR: ['anthropic:claude x'],
  EMEND_MODEL_PRICES: ['{', '[]', 'null', '1', '{"a":[1]}', '{"a":[1,-1]}', '{"a":"x"}', '{"a":[1,2]}'],
  EMEND_OUTBOUND_ALLOW: [
    'x/33',
    '10.0.0.0/33',
    '[::1',
    '[1.2.3.4]:80',
    '::1',
    '1.2.3.4:0',
    '1.2.3.4:99999',
    'a:b:c',
    'bad host!',
    '1.2.3',
    'host:abc',
    '[::1]:abc',
    'ok.example, 10.0.0.0/8 [::1]:11434 127.0.0.1:8080 Ollama.Internal.:11434',
  ],
  EMEND_SETUP_ALLOW: ['127.0.0.1', '10.0.0.0/8', '[::1]', 'bad host!', '[::1]:80', 'npm.internal:4873', '::1'],
  EMEND_SANDBOX_TOOL_ROOTS: ['opt/tools', '/nonexistent/tools', '/', '/usr/lib::/usr'],
  EMEND_SCM_HOSTS: [
    '[{',
    '[]',
    '{}',
    '[{"id":"github","kind":"bitbucket","web_url":"https://github.com","api_url":"https://api.github.com"}]',
    '[{"id":"Git Hub","kind":"github","web_url":"https://github.com","api_url":"https://api.github.com"}]',
    '[{"id":"github","kind":"github","web_url":"https://github.com","api_url":"https://u:p@x.example"}]',
    '[{"id":"github","kind":"github","web_url":"https://github.com?x=1","api_url":"https://api.github.com"}]',
    '[{"id":"github","kind":"github","web_url":"https://github.com","api_url":"https://api.github.com","token":"x"}]',
    '[{"id":"github","kind":"github"}]',
    '[{"id":"a","kind":"github","web_url":"https://github.com","api_url":"https://api.github.com"},{"id":"a","kind":"gitlab","web_url":"https://git.example.com","api_url":"https://git.example.com/api/v4"}]',
    '[{"id":"a","kind":"github","web_url":"https://github.com/","api_url":"https://api.github.com"},{"id":"b","kind":"gitea","web_url":"https://GITHUB.com","api_url":"https://x.example/api/v1"}]',
    '[{"id":"a","kind":"gitea","web_url":"https://x.example","api_url":"https://x.example/api/v1","oauth":{"client_id":""}}]',
    '[{"id":"a","kind":"gitea","web_url":"https://x.example/","api_url":"https://x.example/api/v1/","oauth":{"client_id":"i","client_secret":"s"}}]',
  ],
};

/** One case per line: the environment, then what loadConfig said or built. */
function outcome(env: Env): string {
  try {
    return `ok ${shown(loadConfig(env)).replaceAll(process.cwd(), '<cwd>')}`;
  } catch (err) {
    if (!(err instanceof ConfigError)) return `threw ${String(err)}`;
    return `${err.variable} | ${err.message.replaceAll(process.cwd(), '<cwd>')}`;
  }
}

function shown(value: unknown): string {
  return JSON.stringify(value, (_k, v) => {
    if (v && typeof v === 'object' && v.type === 'Buffer' && Array.isArray(v.data)) return `buffer:${v.data.length}`;
    if (v && typeof v === 'object' && typeof v.kind === 'function') return `${v.kind()}:${v.toString()}`;
    return v;
  });
}

/** Every variable with one bad value each, reported one at a time: shows the order they are read in. */
function allBad(): Env {
  const env: Env = {};
  for (const name of Object.keys(INTEGERS)) env[name] = 'abc';
  for (const name of DECIMALS) env[name] = 'abc';
  for (const name of URLS) env[name] = 'not a url';
  for (const [name, values] of Object.entries(CHOICES)) env[name] = values[0]!;
  env.EMEND_SCM_HOSTS = '[]';
  env.EMEND_SCM_OAUTH_CLIENT_SECRET = 'x';
  return env;
}

export function configOutcomes(): string[] {
  const lines: string[] = [];
  const say = (env: Env) => lines.push(`${JSON.stringify(env)} => ${outcome(env)}`);
  say({});
  for (const [name, [min, max]] of Object.entries(INTEGERS)) {
    for (const v of [...INTEGER_VALUES, String(min - 1), String(max + 1), String(min), String(max)]) say({ [name]: v });
  }
  for (const name of DECIMALS) for (const v of DECIMAL_VALUES) say({ [name]: v });
  for (const name of URLS) for (const v of URL_VALUES) say({ [name]: v });
  for (const [name, values] of Object.entries(CHOICES)) for (const v of values) say({ [name]: v });
  for (const v of ['', '   ', '\t']) say({ PORT: v, EMEND_SCM_HOSTS: v, EMEND_MODEL_PRICES: v });
  // The OAuth pair of the single GitHub host, and a list beside the single-host variables.
  say({ EMEND_SCM_OAUTH_CLIENT_ID: 'id' });
  say({ EMEND_SCM_OAUTH_CLIENT_SECRET: 'secret' });
  say({ EMEND_SCM_OAUTH_CLIENT_ID: 'id', EMEND_SCM_OAUTH_CLIENT_SECRET: 'secret' });
  const one = '[{"id":"github","kind":"github","web_url":"https://github.com","api_url":"https://api.github.com"}]';
  for (const old of [
    'EMEND_SCM_WEB_URL',
    'EMEND_SCM_API_URL',
    'EMEND_SCM_OAUTH_CLIENT_ID',
    'EMEND_SCM_OAUTH_CLIENT_SECRET',
  ])
    say({ EMEND_SCM_HOSTS: one, [old]: 'https://github.com' });
  say({ EMEND_SCM_HOSTS: one, EMEND_SCM_HOSTS_FILE: '/x' });
  say({ EMEND_SCM_HOSTS_FILE: '/nonexistent/hosts.json' });
  const dir = mkdtempSync(join(tmpdir(), 'emend-config-cases-'));
  writeFileSync(join(dir, 'hosts.json'), '[{"id":"x"}]');
  lines.push(
    `hosts file [{"id":"x"}] => ${outcome({ EMEND_SCM_HOSTS_FILE: join(dir, 'hosts.json') }).replaceAll(dir, '<dir>')}`,
  );
  // Tool roots around a data dir.
  lines.push(
    `tool root / with a data dir => ${outcome({ EMEND_DATA_DIR: join(dir, 'data'), EMEND_SANDBOX_TOOL_ROOTS: '/' }).replaceAll(dir, '<dir>')}`,
  );
  lines.push(
    `tool root above the data dir => ${outcome({ EMEND_DATA_DIR: join(dir, 'data'), EMEND_SANDBOX_TOOL_ROOTS: dir }).replaceAll(dir, '<dir>')}`,
  );
  lines.push(
    `tool root is the data dir => ${outcome({ EMEND_DATA_DIR: dir, EMEND_SANDBOX_TOOL_ROOTS: dir }).replaceAll(dir, '<dir>')}`,
  );
  // Several bad variables: the order they are reported in.
  const peel = (what: string, env: Env) => {
    for (let i = 0; i < 200; i++) {
      const said = outcome(env);
      lines.push(`${what}, round ${i} => ${said}`);
      if (!said.includes(' | ')) break;
      const variable = said.slice(0, said.indexOf(' | '));
      // A variable reported for another's sake (a missing half of a pair): drop the one it names.
      const named = variable in env ? [variable] : Object.keys(env).filter((k) => said.includes(k));
      if (named.length === 0) break;
      for (const k of named) delete env[k];
    }
  };
  rmSync(dir, { recursive: true, force: true });
  peel('all bad', allBad());
  const { EMEND_SCM_HOSTS: _list, ...single } = allBad();
  peel('all bad, one GitHub host', single);
  // A full good environment.
  say({
    PORT: '8080',
    HOST: '127.0.0.1',
    EMEND_DATA_DIR: '/var/lib/emend',
    DATABASE_URL: 'postgresql://u:p@db:5432/emend',
    EMEND_SECRET_KEY: 'ab'.repeat(32),
    EMEND_BASE_URL: 'https://api.example.com/',
    EMEND_SITE_BASE: 'https://sites.example.com',
    EMEND_COMMIT_NAME: 'bot',
    LOG_LEVEL: 'warn',
    EMEND_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1',
    OPENAI_API_KEY: ' sk-1 ',
    ANTHROPIC_API_KEY: '  ',
    EMEND_LLM_PROVIDER: 'openai',
    EMEND_MODEL_FIXER: 'anthropic:claude-x',
    EMEND_MODEL_CONTEXT_FIXER: '200000',
    EMEND_MODEL_TEMPERATURE: '0.5',
    EMEND_MODEL_TEMPERATURE_LOCATOR: '1',
    EMEND_TASK_BUDGET_USD_PRO: '7.25',
    EMEND_MODEL_PRICES: '{"llama": [0, 0.5]}',
    EMEND_WEBHOOK_ALLOW_HTTP: 'on',
    EMEND_SANDBOX_TOOL_ROOTS: '/usr/lib',
  });
  return lines;
}

if (process.argv[1]?.endsWith('env-cases.ts')) console.log(configOutcomes().join('\n'));
