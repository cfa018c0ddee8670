import { describe, expect, it } from 'vitest';
import { scmTokenOn } from '../../src/workspaces/scm-connection.js';
import { hostById } from '../../src/scm/hosts.js';
import { useOAuthHost } from '../support/code-hosts.js';
import { newAccount } from '../support/harness.js';
import { cookieFrom } from '../support/cookie-jar.js';

/**
 * An expiring OAuth token (GitLab's: two hours, refresh tokens rotated on use) refreshed by two
 * tasks of one account at the same moment: one refresh reaches the host, both get the new token.
 * On both legs: the row lock that serialises them is the database's.
 */
const CLIENT_ID = 'gitlab-app-refresh';
const CLIENT_SECRET = 'gitlab-app-refresh-secret-0123';

describe('refreshing an expiring code-host token', () => {
  const service = useOAuthHost('gitlab', { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });

  it('refreshes once when two uses race, and both get the token the host accepts', async () => {
    const { h, fake: gl } = service;
    const { account, auth } = await newAccount(h, { plan: 'pro', scm: false });
    const start = await h.app.inject({ method: 'GET', url: '/v1/auth/scm/start?host=gitlab', headers: auth });
    gl.oauthAs('rita');
    const back = new URL((await fetch(start.json().authorize_url, { redirect: 'manual' })).headers.get('location')!);
    const done = await h.app.inject({
      method: 'GET',
      url: `/v1/auth/scm/callback?${back.searchParams}`,
      headers: cookieFrom(start, 'emend_oauth_connect'),
    });
    expect(done.json()).toEqual({ ok: true, scm: 'rita', host: 'gitlab' });

    const host = hostById(h.deps.config, 'gitlab')!;
    const first = await scmTokenOn(h.deps, account.id, host);
    gl.expireOAuth('rita');
    h.clock.advance(7200 * 1000);
    const grantsBefore = gl.requests.filter((r) => r.path === '/oauth/token').length;

    const [a, b] = await Promise.all([scmTokenOn(h.deps, account.id, host), scmTokenOn(h.deps, account.id, host)]);
    expect(a).toBe(b);
    expect(a).not.toBe(first);
    const grants = gl.requests.filter((r) => r.path === '/oauth/token').slice(grantsBefore);
    expect(grants.map((r) => r.status)).toEqual([200]);
    expect(await host.kind.client({ apiUrl: host.apiUrl, fetch, token: a }).user()).toBe('rita');
    // and the stored pair is the fresh one: the next use asks the host for nothing
    expect(await scmTokenOn(h.deps, account.id, host)).toBe(a);
    expect(gl.requests.filter((r) => r.path === '/oauth/token').length).toBe(grantsBefore + 1);
  });
});
