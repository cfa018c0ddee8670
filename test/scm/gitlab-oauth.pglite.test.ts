import { describe, expect, it } from 'vitest';
import { CALC_REPO } from '../support/fix-script.js';
import { OAUTH_BASE_URL, useOAuthHost } from '../support/code-hosts.js';
import { newAccount } from '../support/harness.js';
import { cookieFrom } from '../support/cookie-jar.js';

/**
 * Connecting an account on a GitLab host through OAuth (the service's /v1/auth/scm/start and
 * callback with `host`), against the fake GitLab's /oauth/authorize and /oauth/token: GitLab's
 * tokens expire (expires_in 7200), and the service refreshes one before using it.
 */

const CLIENT_ID = 'gitlab-app-id-0123';
const CLIENT_SECRET = 'gitlab-app-secret-0123456789';

describe('OAuth on a GitLab host', () => {
  const service = useOAuthHost('gitlab', { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });

  it('connects through GitLab authorize page with the api scope, and refreshes the expiring token before use', async () => {
    const { h, fake: gl } = service;
    const { auth } = await newAccount(h, { plan: 'pro', credits: 2, scm: false });
    const start = await h.app.inject({ method: 'GET', url: '/v1/auth/scm/start?host=gitlab', headers: auth });
    expect(start.statusCode, start.body).toBe(200);
    const authorize = new URL(start.json().authorize_url as string);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${gl.webUrl}/oauth/authorize`);
    expect(authorize.searchParams.get('scope')).toBe('api');
    expect(authorize.searchParams.get('client_id')).toBe(CLIENT_ID);
    expect(authorize.searchParams.get('response_type')).toBe('code');

    gl.oauthAs('olga');
    const res = await fetch(authorize, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(`${OAUTH_BASE_URL}/v1/auth/scm/callback`);
    const done = await h.app.inject({
      method: 'GET',
      url: `/v1/auth/scm/callback?${back.searchParams}`,
      headers: cookieFrom(start, 'emend_oauth_connect'),
    });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toEqual({ ok: true, scm: 'olga', host: 'gitlab' });

    // GitLab's token lives two hours: past that, the old one is refused and the service refreshes it.
    gl.createRepo('acme/platform', 'calc', { files: CALC_REPO, visibility: 'private', collaborators: ['olga'] });
    gl.expireOAuth('olga');
    h.clock.advance(7200 * 1000);
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: auth,
      payload: { prompt: 'fix add()', repo_url: `${gl.webUrl}/acme/platform/calc` },
    });
    expect(created.statusCode, created.body).toBe(201);
    const grants = gl.requests.filter((r) => r.kind === 'oauth' && r.path === '/oauth/token');
    expect(grants.map((r) => r.status)).toEqual([200, 200]);
    const reads = gl.requests.filter((r) => r.path === '/api/v4/projects/acme%2Fplatform%2Fcalc');
    expect(reads.map((r) => r.status)).toEqual([200]);
  });
});
