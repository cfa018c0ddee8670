import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { OAUTH_BASE_URL, useOAuthHost } from '../support/code-hosts.js';
import { cookieFrom } from '../support/cookie-jar.js';
import type { FakeGitea } from '../support/fake-gitea/server.js';
import type { FakeGitLab } from '../support/fake-gitlab/server.js';
import { CALC_REPO } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';

/**
 * OAuth on each code host beside GitHub (its double as the deployment's second host, with an
 * OAuth app): connecting through the web flow with the host kind's connect scope, the expiring
 * access token refreshed before use once the host has expired it, signing in to the control
 * panel with the host, and the client secret kept out of the logs. One suite, run once per host.
 */

interface OAuthCase {
  kind: 'gitlab' | 'gitea';
  /** The host's OAuth paths under its web URL and the scopes the service must ask for. */
  oauth: { authorizePath: string; tokenPath: string; connectScope: string; loginScope: string };
  clientId: string;
  clientSecret: string;
  /** Where the team's repositories live. */
  ns: string;
  /** How long the host's access tokens live. */
  tokenLifetimeMs: number;
  /** The host expires the user's access tokens (refresh tokens keep working). */
  expire(fake: FakeGitLab | FakeGitea, login: string): void;
  /** The path of a REST read of the repository, as recorded. */
  repoRead(ns: string, name: string): string;
}

const HOSTS: OAuthCase[] = [
  {
    kind: 'gitlab',
    oauth: {
      authorizePath: '/oauth/authorize',
      tokenPath: '/oauth/token',
      connectScope: 'api',
      loginScope: 'read_user',
    },
    clientId: 'gitlab-app-id-0123',
    clientSecret: 'gitlab-app-secret-0123456789',
    ns: 'acme/platform',
    tokenLifetimeMs: 7200 * 1000,
    expire: (fake, login) => (fake as FakeGitLab).expireOAuth(login),
    repoRead: (ns, name) => `/api/v4/projects/${encodeURIComponent(`${ns}/${name}`)}`,
  },
  {
    kind: 'gitea',
    oauth: {
      authorizePath: '/login/oauth/authorize',
      tokenPath: '/login/oauth/access_token',
      connectScope: 'write:repository read:user',
      loginScope: 'read:user',
    },
    clientId: 'gitea-emend-client',
    clientSecret: 'gitea-oauth-secret-0123456789',
    ns: 'acme',
    tokenLifetimeMs: 3600 * 1000,
    expire: (fake) => (fake as FakeGitea).expireOAuthTokens(),
    repoRead: (ns, name) => `/api/v1/repos/${ns}/${name}`,
  },
];

const cookiesOf = (res: { headers: Record<string, unknown> }) => {
  const raw = res.headers['set-cookie'] as string | string[] | undefined;
  return Array.isArray(raw) ? raw : raw ? [raw] : [];
};

describe.each(HOSTS)('OAuth on a $kind host', { timeout: 60_000 }, (host) => {
  const service = useOAuthHost(host.kind, host, { scm: 'fake' });
  const { oauth } = host;
  const login = `${host.kind}-${randomBytes(3).toString('hex')}`;
  let owner: Awaited<ReturnType<typeof newAccount>>;

  /** The authorize page the service sent the browser to, approved by the fake as `login`: the callback's query. */
  async function approveAt(authorizeUrl: string) {
    const { fake } = service;
    const authorize = new URL(authorizeUrl);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${fake.webUrl}${oauth.authorizePath}`);
    expect(authorize.searchParams.get('client_id')).toBe(host.clientId);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${OAUTH_BASE_URL}/v1/auth/scm/callback`);
    expect(authorize.searchParams.get('response_type')).toBe('code');
    fake.oauthAs(login);
    const res = await fetch(authorize, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(`${OAUTH_BASE_URL}/v1/auth/scm/callback`);
    expect(back.searchParams.get('error')).toBeNull();
    return { scope: authorize.searchParams.get('scope'), query: back.searchParams.toString() };
  }

  const tokenGrants = () =>
    service.fake.requests.filter((r) => r.kind === 'oauth' && r.path === oauth.tokenPath).map((r) => r.status);

  it('connects through the web flow with the host kind’s connect scope', async () => {
    const { h, fake } = service;
    owner = await newAccount(h, { plan: 'pro', credits: 3, scm: false });
    fake.addUser(login);
    const start = await h.app.inject({
      method: 'GET',
      url: `/v1/auth/scm/start?host=${host.kind}`,
      headers: owner.auth,
    });
    expect(start.statusCode, start.body).toBe(200);
    const { scope, query } = await approveAt(start.json().authorize_url);
    expect(scope).toBe(oauth.connectScope);
    const done = await h.app.inject({
      method: 'GET',
      url: `/v1/auth/scm/callback?${query}`,
      headers: cookieFrom(start, 'emend_oauth_connect'),
    });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toEqual({ ok: true, scm: login, host: host.kind });
    expect(tokenGrants()).toEqual([200]);
    const me = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: owner.auth })).json();
    expect(me.scm_hosts).toContainEqual({ host: host.kind, kind: host.kind, web_url: fake.webUrl, login, oauth: true });
  });

  it('refreshes the access token once the host has expired it, before asking about a private repository', async () => {
    const { h, fake } = service;
    const name = `vault-${login}`;
    fake.createRepo(host.ns, name, { files: CALC_REPO, private: true, collaborators: [login] });
    h.clock.advance(host.tokenLifetimeMs);
    host.expire(fake, login);
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: { prompt: 'Fix the crash on empty input', repo_url: `${fake.webUrl}/${host.ns}/${name}` },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ mode: 'pr', repo_name: name });
    // the code grant, then one refresh; the repository was read with the new token
    expect(tokenGrants()).toEqual([200, 200]);
    const reads = fake.requests.filter((r) => r.path === host.repoRead(host.ns, name));
    expect(reads.map((r) => [r.status, r.authenticated])).toEqual([[200, true]]);
  });

  it('signs in to the control panel with the host as the account connected to that user', async () => {
    const { h } = service;
    const start = await h.app.inject({ method: 'GET', url: `/v1/auth/scm/login?host=${host.kind}` });
    expect(start.statusCode, start.body).toBe(302);
    const nonce = cookiesOf(start).find((c) => c.startsWith('emend_oauth_login='))!;
    const { scope, query } = await approveAt(start.headers.location as string);
    expect(scope).toBe(oauth.loginScope);
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
    const { h } = service;
    expect(h.logLines.length).toBeGreaterThan(0);
    expect(h.logLines.join('\n')).not.toContain(host.clientSecret);
  });
});
