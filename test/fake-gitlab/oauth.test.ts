import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScmError } from '../../src/scm/code-host.js';
import { gitLab } from '../../src/scm/gitlab/gitlab.js';
import { type FakeGitLab, startFakeGitLab } from '../support/fake-gitlab/server.js';

/** The fake GitLab's OAuth: authorize, code and refresh grants, expiry seen through the adapter. */
describe('fake GitLab: OAuth', () => {
  let gl: FakeGitLab;
  const redirect = 'http://127.0.0.1:9/callback';

  const authorize = async (): Promise<URL> => {
    const q = new URLSearchParams({ client_id: 'app', redirect_uri: redirect, response_type: 'code', state: 's1' });
    q.set('scope', 'api');
    const res = await fetch(`${gl.webUrl}/oauth/authorize?${q}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!);
  };
  const token = async (params: Record<string, string>, asJson = false) => {
    const res = await fetch(`${gl.webUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': asJson ? 'application/json' : 'application/x-www-form-urlencoded' },
      body: asJson ? JSON.stringify(params) : new URLSearchParams(params).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    gl = await startFakeGitLab();
    gl.addOAuthApp('app', 'shh');
  });
  afterAll(async () => {
    await gl?.close();
  });

  it('denies when nobody approves, then trades a code for an expiring Bearer token', async () => {
    expect((await authorize()).searchParams.get('error')).toBe('access_denied');
    gl.oauthAs('alice');
    const back = await authorize();
    expect(back.searchParams.get('state')).toBe('s1');
    const code = back.searchParams.get('code')!;
    const grant = { client_id: 'app', client_secret: 'shh', redirect_uri: redirect, grant_type: 'authorization_code' };
    const wrongSecret = await token({ ...grant, client_secret: 'nope', code });
    expect(wrongSecret).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    const ok = await token({ ...grant, code }, true);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ token_type: 'Bearer', expires_in: 7200, scope: 'api' });
    expect(typeof ok.body.refresh_token).toBe('string');
    expect(await gitLab({ apiUrl: gl.apiUrl, fetch, token: String(ok.body.access_token) }).user()).toBe('alice');
    // Codes are single-use.
    expect(await token({ ...grant, code })).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('expires a user tokens (401 invalid_token in GitLab words) and refreshes them, rotating the refresh token', async () => {
    const code = (await authorize()).searchParams.get('code')!;
    const first = await token({
      client_id: 'app',
      client_secret: 'shh',
      redirect_uri: redirect,
      grant_type: 'authorization_code',
      code,
    });
    const access = String(first.body.access_token);
    gl.expireOAuth('alice');
    const err = (await gitLab({ apiUrl: gl.apiUrl, fetch, token: access })
      .user()
      .catch((e: unknown) => e)) as ScmError;
    expect(err).toBeInstanceOf(ScmError);
    expect(err.status).toBe(401);
    expect(err.message).toContain('Token is expired. You can either do re-authorization or token refresh.');
    expect(err.message).not.toContain(access);

    const refresh = { client_id: 'app', client_secret: 'shh', grant_type: 'refresh_token' };
    const renewed = await token({ ...refresh, refresh_token: String(first.body.refresh_token) });
    expect(renewed.status).toBe(200);
    expect(renewed.body.refresh_token).not.toBe(first.body.refresh_token);
    expect(await gitLab({ apiUrl: gl.apiUrl, fetch, token: String(renewed.body.access_token) }).user()).toBe('alice');
    const reused = await token({ ...refresh, refresh_token: String(first.body.refresh_token) });
    expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });
});
