import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/config/error.js';

const base = { EMEND_SECRET_KEY: randomBytes(32).toString('hex'), EMEND_DATA_DIR: '/tmp/emend-config-oidc' };

describe('the server’s single sign-on settings (EMEND_OIDC_*)', () => {
  it('takes all three, and none', () => {
    expect(loadConfig(base).oidc).toBeUndefined();
    expect(
      loadConfig({
        ...base,
        EMEND_OIDC_ISSUER: 'https://login.example.com/',
        EMEND_OIDC_CLIENT_ID: 'emend',
        EMEND_OIDC_CLIENT_SECRET: 'idp-secret',
      }).oidc,
    ).toEqual({ issuer: 'https://login.example.com', clientId: 'emend', clientSecret: 'idp-secret' });
  });

  it('refuses a partial setting naming the variable missing, and never shows the secret', () => {
    let err: unknown;
    try {
      loadConfig({ ...base, EMEND_OIDC_ISSUER: 'https://login.example.com', EMEND_OIDC_CLIENT_SECRET: 'idp-secret' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe('EMEND_OIDC_CLIENT_ID');
    expect(String(err)).not.toContain('idp-secret');
    expect(() =>
      loadConfig({ ...base, EMEND_OIDC_ISSUER: 'not a url', EMEND_OIDC_CLIENT_ID: 'x', EMEND_OIDC_CLIENT_SECRET: 'y' }),
    ).toThrow(/EMEND_OIDC_ISSUER/);
  });
});
