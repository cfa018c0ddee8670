import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/config/error.js';
import { SECRET_VARIABLES } from '../../src/config/secret-files.js';

const dir = mkdtempSync(join(tmpdir(), 'emend-secret-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function secretFile(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('loadConfig accepted it');
}

describe('<NAME>_FILE for the secret settings', () => {
  it('reads each secret from its file, trailing line breaks trimmed', () => {
    const key = randomBytes(32).toString('hex');
    const config = loadConfig({
      EMEND_SECRET_KEY_FILE: secretFile('key', `${key}\n`),
      DATABASE_URL_FILE: secretFile('db', 'postgres://emend:s3cret@db:5432/emend\r\n\n'),
      OPENAI_API_KEY_FILE: secretFile('openai', 'sk-openai-file\n'),
      ANTHROPIC_API_KEY_FILE: secretFile('anthropic', 'sk-ant-file'),
      GOOGLE_GENERATIVE_AI_API_KEY_FILE: secretFile('google', 'g-file\n'),
      EMEND_SCM_OAUTH_CLIENT_ID: 'client-id',
      EMEND_SCM_OAUTH_CLIENT_SECRET_FILE: secretFile('oauth', 'oauth-secret\n'),
    });
    expect(config.secretKey).toEqual(Buffer.from(key, 'hex'));
    expect(config.databaseUrl).toBe('postgres://emend:s3cret@db:5432/emend');
    expect(config.providerKeys).toEqual({ openai: 'sk-openai-file', anthropic: 'sk-ant-file', google: 'g-file' });
    expect(config.scmHosts[0]?.oauth).toEqual({ clientId: 'client-id', clientSecret: 'oauth-secret' });
  });

  it('lists every secret setting the configuration reads', () => {
    expect([...SECRET_VARIABLES].sort()).toEqual(
      [
        'ANTHROPIC_API_KEY',
        'DATABASE_URL',
        'EMEND_OIDC_CLIENT_SECRET',
        'EMEND_SCM_OAUTH_CLIENT_SECRET',
        'EMEND_SECRET_KEY',
        'GOOGLE_GENERATIVE_AI_API_KEY',
        'OPENAI_API_KEY',
      ].sort(),
    );
  });

  it('refuses a secret given both ways, naming both and showing neither value', () => {
    const err = configError({
      OPENAI_API_KEY: 'sk-inline-value',
      OPENAI_API_KEY_FILE: secretFile('o2', 'sk-file-value'),
    });
    expect(err.message).toBe('OPENAI_API_KEY: set this or OPENAI_API_KEY_FILE, not both');
    expect(err.message).not.toContain('sk-inline-value');
    expect(err.message).not.toContain('sk-file-value');
  });

  it('refuses a file it cannot read, naming the variable and the path', () => {
    const missing = join(dir, 'missing');
    expect(configError({ DATABASE_URL_FILE: missing }).message).toBe(
      `DATABASE_URL_FILE: cannot read ${missing}: ENOENT`,
    );
    expect(configError({ EMEND_SECRET_KEY_FILE: dir }).message).toBe(
      `EMEND_SECRET_KEY_FILE: cannot read ${dir}: EISDIR`,
    );
    if (process.getuid?.() !== 0) {
      const locked = secretFile('locked', 'sk-locked-value');
      chmodSync(locked, 0);
      expect(configError({ ANTHROPIC_API_KEY_FILE: locked }).message).toBe(
        `ANTHROPIC_API_KEY_FILE: cannot read ${locked}: EACCES`,
      );
    }
  });

  it("refuses a bad value read from a file without showing the file's content", () => {
    const err = configError({ EMEND_SECRET_KEY_FILE: secretFile('bad-key', 'not-a-key-but-a-secret\n') });
    expect(err.variable).toBe('EMEND_SECRET_KEY');
    expect(err.message).not.toContain('not-a-key-but-a-secret');
    const url = configError({ DATABASE_URL_FILE: secretFile('bad-url', 'mysql://root:hunter2@db/emend') });
    expect(url.message).not.toContain('hunter2');
  });

  it('leaves a _FILE of a setting that is no secret alone, and a blank one unset', () => {
    const config = loadConfig({ PORT_FILE: secretFile('port', '9999'), OPENAI_API_KEY_FILE: '  ' });
    expect(config.port).toBe(3000);
    expect(config.providerKeys.openai).toBeUndefined();
  });
});
