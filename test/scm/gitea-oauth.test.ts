import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScmError } from '../../src/scm/code-host.js';
import { gitea, giteaKind } from '../../src/scm/gitea/gitea.js';
import { type FakeGitea, startFakeGitea } from '../support/fake-gitea/server.js';

/** The Gitea double's OAuth2 provider at giteaKind's paths, and its tokens on the adapter. */

describe('Gitea double: OAuth2 at giteaKind’s paths', () => {
  let fake: FakeGitea;
  const redirectUri = 'http://127.0.0.1:9/callback';

  beforeAll(async () => {
    fake = await startFakeGitea();
    fake.addOAuthApp('client-1', 'secret-1');
  });
  afterAll(async () => {
    await fake?.close();
  });

  const authorize = async (params: Record<string, string>) => {
    const url = new URL(`${fake.webUrl}${giteaKind.oauth.authorizePath}`);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const res = await fetch(url, { redirect: 'manual' });
    return { status: res.status, location: new URL(res.headers.get('location') ?? 'http://none/') };
  };
  const token = async (body: Record<string, string>, as: 'form' | 'json' = 'form') => {
    const res = await fetch(`${fake.webUrl}${giteaKind.oauth.tokenPath}`, {
      method: 'POST',
      headers: { 'content-type': as === 'json' ? 'application/json' : 'application/x-www-form-urlencoded' },
      body: as === 'json' ? JSON.stringify(body) : new URLSearchParams(body).toString(),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const codeFor = async () => {
    const { location } = await authorize({
      client_id: 'client-1',
      redirect_uri: redirectUri,
      response_type: 'code',
      state: 'st-1',
      scope: giteaKind.oauth.connectScope,
    });
    expect(location.searchParams.get('state')).toBe('st-1');
    return location.searchParams.get('code') ?? '';
  };

  it('denies until a user approves, then trades the code once for a bearer token that works', async () => {
    const denied = await authorize({ client_id: 'client-1', redirect_uri: redirectUri, response_type: 'code' });
    expect(denied.status).toBe(302);
    expect(denied.location.searchParams.get('error')).toBe('access_denied');
    const unknown = await authorize({ client_id: 'nobody', redirect_uri: redirectUri, response_type: 'code' });
    expect(unknown.location.searchParams.get('error')).toBe('unauthorized_client');

    fake.addUser('alice');
    fake.oauthAs('alice');
    const code = await codeFor();
    expect(code).toMatch(/^[0-9a-f]{32}$/);
    const grant = { grant_type: 'authorization_code', client_id: 'client-1', redirect_uri: redirectUri, code };
    const wrongSecret = await token({ ...grant, client_secret: 'nope' });
    expect(wrongSecret).toEqual({
      status: 400,
      body: { error: 'unauthorized_client', error_description: 'invalid client secret' },
    });
    const issued = await token({ ...grant, client_secret: 'secret-1' }, 'json');
    expect(issued.status).toBe(200);
    expect(issued.body).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    const access = issued.body.access_token as string;
    expect(typeof issued.body.refresh_token).toBe('string');
    expect(await gitea({ apiUrl: fake.apiUrl, fetch, token: access }).user()).toBe('alice');

    const reused = await token({ ...grant, client_secret: 'secret-1' });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    expect(JSON.stringify(fake.requests)).not.toContain(code);
  });

  it('expired access tokens answer 401; a refresh token gets a new one, once', async () => {
    fake.oauthAs('alice');
    const code = await codeFor();
    const issued = await token({
      grant_type: 'authorization_code',
      client_id: 'client-1',
      client_secret: 'secret-1',
      redirect_uri: redirectUri,
      code,
    });
    const access = issued.body.access_token as string;
    fake.expireOAuthTokens();
    const err = await gitea({ apiUrl: fake.apiUrl, fetch, token: access })
      .user()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ScmError);
    expect((err as ScmError).status).toBe(401);
    expect((err as ScmError).message).not.toContain(access);

    const refresh = {
      grant_type: 'refresh_token',
      client_id: 'client-1',
      client_secret: 'secret-1',
      refresh_token: issued.body.refresh_token as string,
    };
    const renewed = await token(refresh, 'json');
    expect(renewed.status).toBe(200);
    expect(renewed.body.access_token).not.toBe(access);
    expect(await gitea({ apiUrl: fake.apiUrl, fetch, token: renewed.body.access_token as string }).user()).toBe(
      'alice',
    );
    const again = await token(refresh);
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const badGrant = await token({ ...refresh, grant_type: 'password' });
    expect(badGrant).toMatchObject({ status: 400, body: { error: 'unsupported_grant_type' } });
  });
});
