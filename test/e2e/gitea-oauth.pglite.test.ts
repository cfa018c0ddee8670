import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { OAUTH_BASE_URL, useOAuthHost } from '../support/code-hosts.js';
import type { FakeGitea } from '../support/fake-gitea/server.js';
import { type Harness, newAccount } from '../support/harness.js';
import { cookieFrom } from '../support/cookie-jar.js';

/**
 * OAuth on a Gitea host (the Gitea double as the deployment's second host, with an OAuth app):
 * connecting through the web flow, the one-hour access token refreshed before use once it has
 * expired, and signing in to the control panel with Gitea.
 */

const CLIENT_ID = 'gitea-emend-client';
const CLIENT_SECRET = 'gitea-oauth-secret-0123456789';

let h: Harness;
let fake: FakeGitea;

const service = useOAuthHost('gitea', { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET }, { scm: 'fake' });
beforeAll(() => {
  ({ h, fake } = service);
});

const cookiesOf = (res: { headers: Record<string, unknown> }) => {
  const raw = res.headers['set-cookie'] as string | string[] | undefined;
  return Array.isArray(raw) ? raw : raw ? [raw] : [];
};

/** The authorize page the service sent the browser to, approved by the fake as `login`: the callback's query. */
async function approveAt(authorizeUrl: string, login: string) {
  const authorize = new URL(authorizeUrl);
  expect(`${authorize.origin}${authorize.pathname}`).toBe(`${fake.webUrl}/login/oauth/authorize`);
  expect(authorize.searchParams.get('client_id')).toBe(CLIENT_ID);
  expect(authorize.searchParams.get('redirect_uri')).toBe(`${OAUTH_BASE_URL}/v1/auth/scm/callback`);
  expect(authorize.searchParams.get('response_type')).toBe('code');
  fake.oauthAs(login);
  const res = await fetch(authorize, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const back = new URL(res.headers.get('location')!);
  expect(back.searchParams.get('error')).toBeNull();
  return { scope: authorize.searchParams.get('scope'), query: back.searchParams.toString() };
}

const tokenGrants = () =>
  fake.requests.filter((r) => r.kind === 'oauth' && r.path === '/login/oauth/access_token').map((r) => r.status);

describe('OAuth on a Gitea host', { timeout: 60_000 }, () => {
  const login = `gt-${randomBytes(3).toString('hex')}`;
  let owner: Awaited<ReturnType<typeof newAccount>>;

  it('connects through the web flow with Gitea’s connect scope', async () => {
    owner = await newAccount(h, { plan: 'pro', credits: 3, scm: false });
    fake.addUser(login);
    const start = await h.app.inject({ method: 'GET', url: '/v1/auth/scm/start?host=gitea', headers: owner.auth });
    expect(start.statusCode, start.body).toBe(200);
    const { scope, query } = await approveAt(start.json().authorize_url, login);
    expect(scope).toBe('write:repository read:user');
    const done = await h.app.inject({
      method: 'GET',
      url: `/v1/auth/scm/callback?${query}`,
      headers: cookieFrom(start, 'emend_oauth_connect'),
    });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toEqual({ ok: true, scm: login, host: 'gitea' });
    expect(tokenGrants()).toEqual([200]);
    const me = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: owner.auth })).json();
    expect(me.scm_hosts).toContainEqual({ host: 'gitea', kind: 'gitea', web_url: fake.webUrl, login, oauth: true });
  });

  it('refreshes the access token once Gitea has expired it, before asking about a private repository', async () => {
    fake.createRepo('acme', `vault-${login}`, { private: true, collaborators: [login] });
    const repoUrl = `${fake.webUrl}/acme/vault-${login}`;
    h.clock.advance(3600 * 1000);
    fake.expireOAuthTokens();
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: { prompt: 'Fix the crash on empty input', repo_url: repoUrl },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ mode: 'pr', repo_name: `vault-${login}` });
    // the code grant, then one refresh; the repository was read with the new token
    expect(tokenGrants()).toEqual([200, 200]);
    const reads = fake.requests.filter((r) => r.path === `/api/v1/repos/acme/vault-${login}`);
    expect(reads.map((r) => [r.status, r.authenticated])).toEqual([[200, true]]);
  });

  it('signs in to the control panel with Gitea as the account connected to that Gitea user', async () => {
    const start = await h.app.inject({ method: 'GET', url: '/v1/auth/scm/login?host=gitea' });
    expect(start.statusCode, start.body).toBe(302);
    const nonce = cookiesOf(start).find((c) => c.startsWith('emend_oauth_login='))!;
    const { scope, query } = await approveAt(start.headers.location as string, login);
    expect(scope).toBe('read:user');
    const done = await h.app.inject({
      method: 'GET',
      url: `/v1/auth/scm/callback?${query}`,
      headers: { cookie: nonce.split(';')[0]! },
    });
    expect(done.statusCode, done.body).toBe(302);
    expect(done.headers.location).toBe('/app/');
    const session = cookiesOf(done).find((c) => c.startsWith('emend_session='))!;
    const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie: session.split(';')[0]! } });
    expect(me.json().id).toBe(owner.account.id);
  });

  it('keeps the client secret out of the logs', () => {
    expect(h.logLines.length).toBeGreaterThan(0);
    expect(h.logLines.join('\n')).not.toContain(CLIENT_SECRET);
  });
});
