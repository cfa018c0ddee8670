import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/error.js';
import { loadConfig } from '../../src/config/config.js';

/** EMEND_SCM_HOSTS / EMEND_SCM_HOSTS_FILE: the code hosts of a deployment (docs/code-host.md). */

const gitlab = {
  id: 'gitlab',
  kind: 'gitlab',
  web_url: 'https://git.example.com/',
  api_url: 'https://git.example.com/api/v4',
  oauth: { client_id: 'app', client_secret: 'shh' },
};
const github = { id: 'github', kind: 'github', web_url: 'https://github.com', api_url: 'https://api.github.com' };

const hostsOf = (env: Record<string, string>) => loadConfig(env).scmHosts;
const refusal = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('accepted');
};

describe('the code hosts of a deployment', () => {
  it('without a list: the one GitHub host of EMEND_SCM_WEB_URL, _API_URL and _OAUTH_*, id github', () => {
    expect(
      hostsOf({
        EMEND_SCM_WEB_URL: 'https://ghe.example.com/',
        EMEND_SCM_API_URL: 'https://ghe.example.com/api/v3',
        EMEND_SCM_OAUTH_CLIENT_ID: 'id',
        EMEND_SCM_OAUTH_CLIENT_SECRET: 'secret',
      }),
    ).toEqual([
      {
        id: 'github',
        kind: 'github',
        webUrl: 'https://ghe.example.com',
        apiUrl: 'https://ghe.example.com/api/v3',
        oauth: { clientId: 'id', clientSecret: 'secret' },
      },
    ]);
  });

  it('reads the list from EMEND_SCM_HOSTS or a file, in order (the first is the default)', () => {
    const expected = [
      {
        id: 'gitlab',
        kind: 'gitlab',
        webUrl: 'https://git.example.com',
        apiUrl: 'https://git.example.com/api/v4',
        oauth: { clientId: 'app', clientSecret: 'shh' },
      },
      { id: 'github', kind: 'github', webUrl: 'https://github.com', apiUrl: 'https://api.github.com' },
    ];
    expect(hostsOf({ EMEND_SCM_HOSTS: JSON.stringify([gitlab, github]) })).toEqual(expected);
    const dir = mkdtempSync(join(tmpdir(), 'emend-hosts-'));
    try {
      const file = join(dir, 'hosts.json');
      writeFileSync(file, JSON.stringify([gitlab, github]));
      expect(hostsOf({ EMEND_SCM_HOSTS_FILE: file })).toEqual(expected);
      expect(refusal({ EMEND_SCM_HOSTS_FILE: join(dir, 'missing.json') })).toBe(
        `EMEND_SCM_HOSTS_FILE: cannot read ${join(dir, 'missing.json')}: ENOENT`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['not JSON', '[{', 'EMEND_SCM_HOSTS: expected a JSON array of hosts'],
    ['an empty list', '[]', 'EMEND_SCM_HOSTS: list at least one host'],
    ['an unknown kind', JSON.stringify([{ ...github, kind: 'bitbucket' }]), 'EMEND_SCM_HOSTS: [0].[kind]:'],
    ['a bad id', JSON.stringify([{ ...github, id: 'Git Hub' }]), 'EMEND_SCM_HOSTS: [0].[id]: lower-case'],
    ['an id twice', JSON.stringify([github, { ...gitlab, id: 'github' }]), '[1].[id]: "github" is listed twice'],
    [
      'one web address twice',
      JSON.stringify([gitlab, { ...github, id: 'other', web_url: 'https://GIT.example.com' }]),
      '[1].[web_url]: same web address as "gitlab"',
    ],
    ['a URL with credentials', JSON.stringify([{ ...github, api_url: 'https://u:p@x.example' }]), '[0].[api_url]:'],
    ['an unknown field', JSON.stringify([{ ...github, token: 'x' }]), 'EMEND_SCM_HOSTS: [0]:'],
  ])('refuses %s, saying where', (_what, value, message) => {
    expect(refusal({ EMEND_SCM_HOSTS: value })).toContain(message);
  });

  it('refuses a list together with the single-host variables or both list variables', () => {
    expect(refusal({ EMEND_SCM_HOSTS: JSON.stringify([github]), EMEND_SCM_WEB_URL: 'https://github.com' })).toBe(
      'EMEND_SCM_WEB_URL: EMEND_SCM_HOSTS lists the hosts; set this inside it instead',
    );
    expect(refusal({ EMEND_SCM_HOSTS: JSON.stringify([github]), EMEND_SCM_HOSTS_FILE: '/x' })).toBe(
      'EMEND_SCM_HOSTS: set this or EMEND_SCM_HOSTS_FILE, not both',
    );
  });

  describe('a GitHub App in a host entry', () => {
    const dir = mkdtempSync(join(tmpdir(), 'emend-app-key-'));
    const keyFile = join(dir, 'app.pem');
    writeFileSync(
      keyFile,
      generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }),
    );
    const notKey = join(dir, 'not.pem');
    writeFileSync(notKey, 'hello');
    const app = (over: Record<string, unknown> = {}) => ({
      app_id: 12345,
      slug: 'emend',
      private_key_file: keyFile,
      webhook_secret: 'a-webhook-secret-0123456789',
      client_id: 'Iv23abc',
      client_secret: 'app-client-secret',
      ...over,
    });
    const env = (entry: object) => ({ EMEND_SCM_HOSTS: JSON.stringify([entry]) });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("reads the key from its file, and the app's sign-in is the host's OAuth", () => {
      const [host] = hostsOf(env({ ...github, app: app() }));
      expect(host?.app).toMatchObject({
        appId: '12345',
        slug: 'emend',
        clientId: 'Iv23abc',
        webhookSecret: 'a-webhook-secret-0123456789',
      });
      expect(host?.app?.privateKey).toContain('BEGIN RSA PRIVATE KEY');
    });

    it('refuses a key file that cannot be read or holds no key, naming the entry, never the secrets', () => {
      const missing = refusal(env({ ...github, app: app({ private_key_file: join(dir, 'gone.pem') }) }));
      expect(missing).toContain('[0].[app]: private_key_file: cannot read');
      expect(missing).toContain('ENOENT');
      const garbage = refusal(env({ ...github, app: app({ private_key_file: notKey }) }));
      expect(garbage).toContain('holds no PEM private key');
      for (const m of [missing, garbage]) {
        expect(m).not.toContain('app-client-secret');
        expect(m).not.toContain('a-webhook-secret');
      }
    });

    it('refuses an app on a host that is not GitHub, and a short webhook secret', () => {
      expect(refusal(env({ ...gitlab, app: app() }))).toContain('an app is a GitHub App: only on a github host');
      expect(refusal(env({ ...github, app: app({ webhook_secret: 'short' }) }))).toContain('at least 16 characters');
    });
  });
});
