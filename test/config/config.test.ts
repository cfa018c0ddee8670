import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/error.js';
import { loadConfig } from '../../src/config/config.js';
import { parseSecretKey } from '../../src/config/secret-key.js';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('has defaults for everything', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      // Loopback: `npm start` serves this machine only; a container sets HOST=0.0.0.0 (issue 45).
      host: '127.0.0.1',
      dataDir: resolve('./data'),
      databaseUrl: undefined,
      secretKey: undefined,
      baseUrl: 'http://localhost:3000',
      siteBase: 'http://localhost:3000',
      scmHosts: [{ id: 'github', kind: 'github', webUrl: 'https://github.com', apiUrl: 'https://api.github.com' }],
      logLevel: 'info',
      bodyLimitBytes: 1024 * 1024,
      idempotencyWaitMs: 8_000,
      trustProxy: false,
      providerKeys: { openai: undefined, anthropic: undefined, google: undefined },
      providerBaseUrls: {
        openai: 'https://api.openai.com/v1',
        anthropic: 'https://api.anthropic.com/v1',
        google: 'https://generativelanguage.googleapis.com/v1beta',
      },
    });
  });

  it('issues demo tokens unless EMEND_DEMO_TOKENS is off, and refuses other words naming the variable', () => {
    expect(loadConfig({}).demoTokens).toBe(true);
    expect(loadConfig({ EMEND_DEMO_TOKENS: 'on' }).demoTokens).toBe(true);
    expect(loadConfig({ EMEND_DEMO_TOKENS: 'off' }).demoTokens).toBe(false);
    expect(() => loadConfig({ EMEND_DEMO_TOKENS: 'no' })).toThrow('EMEND_DEMO_TOKENS: expected on or off, got "no"');
  });

  it('reads the environment, treating blank values as unset', () => {
    const key = randomBytes(32);
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      EMEND_DATA_DIR: '/var/lib/emend',
      DATABASE_URL: 'postgresql://u:p@db:5432/emend',
      EMEND_SECRET_KEY: key.toString('hex'),
      EMEND_BASE_URL: 'https://api.example.com/',
      EMEND_SITE_BASE: 'https://sites.example.com',
      LOG_LEVEL: 'warn',
      EMEND_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1',
      OPENAI_API_KEY: '  ',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dataDir: '/var/lib/emend',
      databaseUrl: 'postgresql://u:p@db:5432/emend',
      baseUrl: 'https://api.example.com',
      siteBase: 'https://sites.example.com',
      logLevel: 'warn',
      trustProxy: ['10.0.0.0/8', '127.0.0.1'],
    });
    expect(config.secretKey?.equals(key)).toBe(true);
    expect(config.providerKeys.openai).toBeUndefined();
    // The base URL follows PORT when it is not set.
    expect(loadConfig({ PORT: '4100' }).baseUrl).toBe('http://localhost:4100');
    expect(loadConfig({ EMEND_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ EMEND_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ EMEND_IDEMPOTENCY_WAIT_MS: '0' }).idempotencyWaitMs).toBe(0);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'not a url'],
    ['EMEND_SECRET_KEY', 'short'],
    ['EMEND_BASE_URL', 'not a url'],
    ['EMEND_BASE_URL', 'ftp://example.com'],
    ['EMEND_SITE_BASE', 'nope'],
    ['LOG_LEVEL', 'loud'],
    ['EMEND_TRUST_PROXY', '???'],
    ['EMEND_BODY_LIMIT_BYTES', '12'],
    ['EMEND_IDEMPOTENCY_WAIT_MS', '60001'],
    ['OPENAI_BASE_URL', 'localhost:11434'],
  ])('rejects %s=%s naming the variable', (variable, value) => {
    const err = configError({ [variable]: value });
    expect(err.variable).toBe(variable);
    expect(err.message).toContain(variable);
  });

  it("reads the validator's per-test timeout, one minute by default, the caches' sizes (environments 4 GiB, kept baselines 256 MiB) and whether the trees may run at once", () => {
    expect(loadConfig({}).validator).toEqual({
      testTimeoutMs: 60_000,
      envCacheBytes: 4096 * 1024 * 1024,
      baselineCacheBytes: 256 * 1024 * 1024,
      parallel: 'auto',
    });
    expect(
      loadConfig({
        EMEND_VALIDATOR_TEST_TIMEOUT_S: '5',
        EMEND_ENV_CACHE_MB: '0',
        EMEND_BASELINE_CACHE_MB: '0',
        EMEND_VALIDATOR_PARALLEL: 'off',
      }).validator,
    ).toEqual({ testTimeoutMs: 5_000, envCacheBytes: 0, baselineCacheBytes: 0, parallel: 'off' });
    for (const bad of ['0', 'soon', '86401'])
      expect(configError({ EMEND_VALIDATOR_TEST_TIMEOUT_S: bad }).variable).toBe('EMEND_VALIDATOR_TEST_TIMEOUT_S');
    for (const bad of ['-1', 'big'])
      expect(configError({ EMEND_ENV_CACHE_MB: bad }).variable).toBe('EMEND_ENV_CACHE_MB');
    for (const bad of ['-1', '1048577'])
      expect(configError({ EMEND_BASELINE_CACHE_MB: bad }).variable).toBe('EMEND_BASELINE_CACHE_MB');
    expect(configError({ EMEND_VALIDATOR_PARALLEL: 'on' }).variable).toBe('EMEND_VALIDATOR_PARALLEL');
  });

  it('reads model temperatures: 0 by default, one for all steps, one per step that wins over it', () => {
    expect(loadConfig({}).llm.temperatures).toEqual({ planner: 0, locator: 0, inspector: 0, fixer: 0 });
    const set = loadConfig({ EMEND_MODEL_TEMPERATURE: '0.5', EMEND_MODEL_TEMPERATURE_LOCATOR: '1' });
    expect(set.llm.temperatures).toEqual({ planner: 0.5, locator: 1, inspector: 0.5, fixer: 0.5 });
    for (const bad of ['-0.1', '2.5', 'warm'])
      expect(configError({ EMEND_MODEL_TEMPERATURE_FIXER: bad }).variable).toBe('EMEND_MODEL_TEMPERATURE_FIXER');
  });

  it("reads the operator's registry mirrors for setup, absent unless set", () => {
    expect(loadConfig({}).sandbox).not.toHaveProperty('npmRegistry');
    expect(loadConfig({}).sandbox).not.toHaveProperty('pipIndexUrl');
    const set = loadConfig({
      EMEND_NPM_REGISTRY: 'https://npm.internal:4873/',
      EMEND_PIP_INDEX_URL: 'http://pypi.internal/simple',
    });
    expect(set.sandbox).toMatchObject({
      npmRegistry: 'https://npm.internal:4873',
      pipIndexUrl: 'http://pypi.internal/simple',
    });
    for (const bad of ['npm.internal', 'ftp://npm.internal/'])
      expect(configError({ EMEND_NPM_REGISTRY: bad }).variable).toBe('EMEND_NPM_REGISTRY');
    expect(configError({ EMEND_PIP_INDEX_URL: 'simple' }).variable).toBe('EMEND_PIP_INDEX_URL');
  });

  it('does not echo secrets in its messages', () => {
    expect(configError({ DATABASE_URL: 'mysql://admin:hunter2@db/x' }).message).not.toContain('hunter2');
    expect(configError({ EMEND_SECRET_KEY: 'hunter2hunter2' }).message).not.toContain('hunter2');
  });
});

describe('parseSecretKey', () => {
  const key = randomBytes(32);

  it('accepts 64 hex characters', () => {
    expect(parseSecretKey(key.toString('hex')).equals(key)).toBe(true);
    expect(parseSecretKey(`${key.toString('hex').toUpperCase()}\n`).equals(key)).toBe(true);
  });

  it('accepts base64 and base64url of 32 bytes', () => {
    expect(parseSecretKey(key.toString('base64')).equals(key)).toBe(true);
    expect(parseSecretKey(key.toString('base64url')).equals(key)).toBe(true);
  });

  it('rejects other lengths and alphabets, naming the source', () => {
    expect(() => parseSecretKey(randomBytes(16).toString('hex'))).toThrow(ConfigError);
    expect(() => parseSecretKey(randomBytes(31).toString('base64'))).toThrow(/EMEND_SECRET_KEY/);
    expect(() => parseSecretKey('z'.repeat(64), '/data/secret.key')).toThrow(/\/data\/secret\.key/);
  });
});
