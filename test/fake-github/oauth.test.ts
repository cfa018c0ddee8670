import { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';

describe('fake GitHub: the OAuth web flow', () => {
  let gh: FakeGitHub;
  const callback = 'http://127.0.0.1:9/api/v1/scm/github/callback';

  beforeAll(async () => {
    gh = await startFakeGitHub();
    gh.addUser('alice');
    gh.addOAuthApp('Iv1.client', 'shh-secret');
  });
  afterAll(async () => {
    await gh?.close();
  });

  const authorize = (params: Record<string, string>) =>
    fetch(`${gh.webUrl}/login/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });

  it('redirects back with an access_denied error before anyone approves, and 400 for an unknown client', async () => {
    const denied = await authorize({ client_id: 'Iv1.client', redirect_uri: callback, state: 's1', scope: 'repo' });
    expect(denied.status).toBe(302);
    const to = new URL(denied.headers.get('location')!);
    expect(to.searchParams.get('error')).toBe('access_denied');
    expect(to.searchParams.get('state')).toBe('s1');

    const unknown = await authorize({ client_id: 'nope', redirect_uri: callback, state: 's' });
    expect(unknown.status).toBe(400);
  });

  it('approves as the configured user, trades the code for a token once, and the token works on REST', async () => {
    gh.oauthAs('alice');
    const res = await authorize({
      client_id: 'Iv1.client',
      redirect_uri: callback,
      state: 'xyz',
      scope: 'repo user:email',
    });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(callback);
    expect(location.searchParams.get('state')).toBe('xyz');
    const code = location.searchParams.get('code')!;
    expect(code).toMatch(/^[0-9a-f]{20}$/);

    const exchange = (body: Record<string, string>, json = true) =>
      fetch(`${gh.webUrl}/login/oauth/access_token`, {
        method: 'POST',
        headers: json
          ? { accept: 'application/json', 'content-type': 'application/json' }
          : { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
        body: json ? JSON.stringify(body) : new URLSearchParams(body).toString(),
      });

    const wrongSecret = await exchange({ client_id: 'Iv1.client', client_secret: 'wrong', code });
    expect(wrongSecret.status).toBe(200);
    expect(((await wrongSecret.json()) as { error: string }).error).toBe('incorrect_client_credentials');

    const good = await exchange(
      { client_id: 'Iv1.client', client_secret: 'shh-secret', code, redirect_uri: callback },
      false,
    );
    expect(good.status).toBe(200);
    const token = (await good.json()) as { access_token: string; token_type: string; scope: string };
    expect(token).toEqual({
      access_token: expect.stringMatching(/^gho_[A-Za-z0-9]{36}$/),
      token_type: 'bearer',
      scope: 'repo,user:email',
    });

    const again = await exchange({ client_id: 'Iv1.client', client_secret: 'shh-secret', code });
    expect(await again.json()).toMatchObject({
      error: 'bad_verification_code',
      error_description: 'The code passed is incorrect or expired.',
    });

    const me = await new Octokit({ auth: token.access_token, baseUrl: gh.apiUrl }).rest.users.getAuthenticated();
    expect(me.data.login).toBe('alice');
    expect(me.headers['x-oauth-scopes']).toBe('repo, user:email');

    const oauth = gh.requests.filter((r) => r.kind === 'oauth');
    expect(oauth.map((r) => r.status)).toContain(302);
    expect(JSON.stringify(gh.requests)).not.toContain(code);
    expect(JSON.stringify(gh.requests)).not.toContain(token.access_token);
  });
});
