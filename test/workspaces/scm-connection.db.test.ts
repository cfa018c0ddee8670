import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scmConnections } from '../../src/db/schema.js';
import { scmTokenOn } from '../../src/workspaces/scm-connection.js';
import { defaultHost } from '../../src/scm/hosts.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { cookieFrom } from '../support/cookie-jar.js';
import { freePort } from '../support/ports.js';

/**
 * Connecting an account to the code host: with a token (POST /v1/me/scm) and through the
 * OAuth web flow (GET /v1/auth/scm/start → the host → GET /v1/auth/scm/callback), against
 * the fake GitHub over real HTTP.
 */

const BASE_URL = 'http://emend.test:8080';
const CLIENT_ID = 'Iv1.emend-test';
const CLIENT_SECRET = 'oauth-client-secret-0123456789';

let h: Harness;
/** Every response body this file's main harness answered, for the leak check at the end. */
const bodies: string[] = [];
/** Every code-host token this file handed to the service. */
const secrets: string[] = [CLIENT_SECRET];

beforeAll(async () => {
  h = await startHarness(
    {
      LOG_LEVEL: 'trace',
      EMEND_BASE_URL: BASE_URL,
      EMEND_SCM_OAUTH_CLIENT_ID: CLIENT_ID,
      EMEND_SCM_OAUTH_CLIENT_SECRET: CLIENT_SECRET,
    },
    { scm: 'fake' },
  );
  // The harness builds its logger at 'info' whatever LOG_LEVEL says; log everything here.
  h.deps.log.level = 'trace';
  h.github.addOAuthApp(CLIENT_ID, CLIENT_SECRET);
});
afterAll(() => h.close());

async function call(
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  headers: Record<string, string> = {},
  payload?: object,
) {
  const res = await h.app.inject({ method, url, headers, payload });
  bodies.push(res.body);
  return res;
}

const me = async (auth: Record<string, string>) => (await call('GET', '/v1/me', auth)).json() as { scm: string | null };
/** The account's stored connection to the (one) configured host; empty fields when there is none. */
const storedScmOf = async (harness: Harness, accountId: string) => {
  const [row] = await harness.deps.db
    .select()
    .from(scmConnections)
    .where(and(eq(scmConnections.workspaceId, accountId), eq(scmConnections.host, 'github')));
  return { scmLogin: row?.login ?? null, scmTokenEnc: row?.tokenEnc ?? null };
};
const storedScm = (accountId: string) => storedScmOf(h, accountId);
/** The stored token, decrypted as the service decrypts it for use. */
const storedToken = (accountId: string) => scmTokenOn(h.deps, accountId, defaultHost(h.deps.config));

describe('POST /v1/me/scm and DELETE /v1/me/scm', () => {
  it('connects with a token the host accepts, stores it encrypted, shows the login, and disconnects', async () => {
    const { account, auth } = await newAccount(h, { plan: 'pro', scm: false });
    const user = h.github.addUser(`conn-${randomBytes(3).toString('hex')}`);
    secrets.push(user.token);
    expect((await me(auth)).scm).toBeNull();

    const res = await call('POST', '/v1/me/scm', auth, { token: user.token });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ scm: user.login, host: 'github' });
    expect((await me(auth)).scm).toBe(user.login);

    const row = await storedScm(account.id);
    expect(row.scmLogin).toBe(user.login);
    expect(row.scmTokenEnc).toBeTruthy();
    expect(row.scmTokenEnc).not.toContain(user.token);
    expect(row.scmTokenEnc).not.toContain(user.token.slice(4, 20));
    // it is the token, encrypted, bound to this account: copied to another account's row it does not decrypt
    expect(await storedToken(account.id)).toBe(user.token);
    const other = await newAccount(h, { plan: 'pro', scm: false });
    await h.deps.db.insert(scmConnections).values({
      workspaceId: other.account.id,
      host: 'github',
      login: user.login,
      tokenEnc: row.scmTokenEnc!,
      createdAt: new Date(),
    });
    await expect(storedToken(other.account.id)).rejects.toThrow();
    await h.deps.db.delete(scmConnections).where(eq(scmConnections.workspaceId, other.account.id));

    // surrounding whitespace is not part of the token
    const again = await call('POST', '/v1/me/scm', auth, { token: `  ${user.token}\n` });
    expect(again.statusCode, again.body).toBe(200);
    const reRow = await storedScm(account.id);
    expect(await storedToken(account.id)).toBe(user.token);
    expect(reRow.scmTokenEnc).not.toBe(row.scmTokenEnc); // a fresh nonce

    const off = await call('DELETE', '/v1/me/scm', auth);
    expect(off.statusCode).toBe(200);
    expect(off.json()).toEqual({ scm: null, host: 'github', disconnected: true });
    expect((await me(auth)).scm).toBeNull();
    const cleared = await storedScm(account.id);
    expect([cleared.scmLogin, cleared.scmTokenEnc]).toEqual([null, null]);
    expect((await call('DELETE', '/v1/me/scm', auth)).json()).toEqual({
      scm: null,
      host: 'github',
      disconnected: false,
    });
  });

  it('answers 400 naming token for a token the host rejects, and keeps the connection it had', async () => {
    const { account, auth, scm } = await newAccount(h, { plan: 'pro' });
    secrets.push(scm!.token);
    const unknown = `ghp_${randomBytes(18).toString('hex')}`;
    secrets.push(unknown);
    const res = await call('POST', '/v1/me/scm', auth, { token: unknown });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('bad_request');
    expect(res.json().message).toMatch(/^token: /);
    expect(res.json().message).toContain('rejected');
    expect((await me(auth)).scm).toBe(scm!.login);
    expect(await storedToken(account.id)).toBe(scm!.token);
  });

  it.each([
    ['too short', { token: 'abc' }, 'token'],
    ['with spaces inside', { token: 'ghp_abc def_0123456789' }, 'token'],
    ['empty', { token: '' }, 'token'],
    ['only blanks', { token: '            ' }, 'token'],
    ['not a string', { token: 12345678901 }, 'token'],
    ['too long', { token: 'x'.repeat(501) }, 'token'],
    ['missing', {}, 'token'],
    ['with an unknown field', { token: 'ghp_0123456789abcdef0123456789abcdef0123', scope: 'repo' }, 'scope'],
  ])('answers 400 bad_request for a body %s, naming %s', async (_what, body, field) => {
    const { auth } = await newAccount(h, { plan: 'pro', scm: false });
    const before = h.github.requests.length;
    const res = await call('POST', '/v1/me/scm', auth, body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('bad_request');
    expect(res.json().message).toContain(field);
    // refused before the code host is asked
    expect(h.github.requests.slice(before).filter((r) => r.kind === 'rest')).toEqual([]);
    expect((await me(auth)).scm).toBeNull();
  });

  it('refuses demo tokens (403) on connect, disconnect and the OAuth start, and anonymous callers (401)', async () => {
    const demo = (
      await h.app.inject({
        method: 'POST',
        url: '/v1/demo/token',
        payload: { email: 'demo-connect@example.com' },
        remoteAddress: '10.9.0.1',
      })
    ).json().token as string;
    const auth = { authorization: `Bearer ${demo}` };
    const user = h.github.addUser(`demo-${randomBytes(3).toString('hex')}`);
    secrets.push(user.token);
    for (const [method, url, payload] of [
      ['POST', '/v1/me/scm', { token: user.token }],
      ['DELETE', '/v1/me/scm', undefined],
      ['GET', '/v1/auth/scm/start', undefined],
    ] as const) {
      const res = await call(method, url, auth, payload);
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(403);
      expect(res.json().error).toBe('forbidden');
      const anon = await call(method, url, {}, payload);
      expect(anon.statusCode, `${method} ${url} anonymously`).toBe(401);
    }
  });

  it('answers 502 scm_unavailable (never 500) when the code host cannot be reached', async () => {
    const down = await startHarness(
      { EMEND_SCM_API_URL: `http://127.0.0.1:${await freePort()}/api/v3` },
      { scm: 'fake' },
    );
    try {
      const { account, auth } = await newAccount(down, { plan: 'pro', scm: false });
      const token = `ghp_${randomBytes(18).toString('hex')}`;
      const res = await down.app.inject({ method: 'POST', url: '/v1/me/scm', headers: auth, payload: { token } });
      expect(res.statusCode, res.body).toBe(502);
      expect(res.json().error).toBe('scm_unavailable');
      expect(res.body).not.toContain(token);
      const row = await storedScmOf(down, account.id);
      expect([row.scmLogin, row.scmTokenEnc]).toEqual([null, null]);
      for (const line of down.logLines) expect(line).not.toContain(token);
    } finally {
      await down.close();
    }
  });

  it('answers 502 scm_unavailable when the host fails with a server error, with the host’s status', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', scm: false });
    const user = h.github.addUser(`flaky-${randomBytes(3).toString('hex')}`);
    secrets.push(user.token);
    h.github.failNext('GET', /^\/user$/, { status: 503 });
    const res = await call('POST', '/v1/me/scm', auth, { token: user.token });
    expect(res.statusCode, res.body).toBe(502);
    expect(res.json().error).toBe('scm_unavailable');
    expect(res.json().message).toContain('503');
    expect((await me(auth)).scm).toBeNull();
  });
});

describe('OAuth: GET /v1/auth/scm/start and /v1/auth/scm/callback', () => {
  /** Starts the flow as `auth` and lets the fake host approve it as `login`; returns the callback's query. */
  async function approve(auth: Record<string, string>, login: string) {
    const start = await call('GET', '/v1/auth/scm/start', auth);
    expect(start.statusCode, start.body).toBe(200);
    const authorize = new URL(start.json().authorize_url as string);
    h.github.oauthAs(login);
    const res = await fetch(authorize, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get('location')!);
    const browser = cookieFrom(start, 'emend_oauth_connect');
    return { authorize, back, browser, code: back.searchParams.get('code')!, state: back.searchParams.get('state')! };
  }

  /** The callback in the browser that started the flow (it holds the start's cookie). */
  const callback = (code: string, state: string, browser: Record<string, string>) =>
    call('GET', `/v1/auth/scm/callback?${new URLSearchParams({ code, state })}`, browser);

  it('sends the person to the host’s authorize page and connects the account on the way back', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', scm: false });
    const login = `oauth-${randomBytes(3).toString('hex')}`;
    const { authorize, back, browser, code, state } = await approve(auth, login);

    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${h.github.webUrl}/login/oauth/authorize`);
    expect(authorize.searchParams.get('client_id')).toBe(CLIENT_ID);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${BASE_URL}/v1/auth/scm/callback`);
    expect(authorize.searchParams.get('scope')).toBe('repo');
    expect(authorize.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(authorize.href).not.toContain(CLIENT_SECRET);
    expect(`${back.origin}${back.pathname}`).toBe(`${BASE_URL}/v1/auth/scm/callback`);
    expect(state).toBe(authorize.searchParams.get('state'));
    expect(code).toBeTruthy();

    // the callback carries no token of ours: the signed state says whose account, the cookie which browser
    const done = await callback(code, state, browser);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toEqual({ ok: true, scm: login, host: 'github' });
    expect((await me(auth)).scm).toBe(login);
    // the code was traded at the host's token endpoint
    expect(
      h.github.requests.some(
        (r) => r.kind === 'oauth' && r.path.startsWith('/login/oauth/access_token') && r.status === 200,
      ),
    ).toBe(true);

    // states are single-use: replaying the callback is the caller's error
    const replay = await callback(code, state, browser);
    expect(replay.statusCode, replay.body).toBe(400);
    expect(replay.json().message).toMatch(/^state: already used/);
  });

  it('connects the account named by the state, not another one', async () => {
    const a = await newAccount(h, { plan: 'pro', scm: false });
    const b = await newAccount(h, { plan: 'pro', scm: false });
    const login = `oauth-a-${randomBytes(3).toString('hex')}`;
    const { code, state, browser } = await approve(a.auth, login);
    expect((await callback(code, state, browser)).json()).toEqual({ ok: true, scm: login, host: 'github' });
    expect((await me(a.auth)).scm).toBe(login);
    expect((await me(b.auth)).scm).toBeNull();
  });

  it('answers 400 for a tampered state and connects nothing', async () => {
    const victim = await newAccount(h, { plan: 'pro', scm: false });
    const attacker = await newAccount(h, { plan: 'pro', scm: false });
    const { code, state, browser } = await approve(attacker.auth, `oauth-t-${randomBytes(3).toString('hex')}`);
    const [payload, mac] = state.split('.') as [string, string];

    // the payload rewritten to name another account, the signature kept
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { a: string };
    const forged = Buffer.from(JSON.stringify({ ...claims, a: victim.account.id })).toString('base64url');
    const flipped = `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    // a signature as long as the real one in characters, but not in bytes
    const wide = `${payload}.${mac.slice(0, -1)}é`;
    for (const bad of [
      `${forged}.${mac}`,
      `${payload}.${flipped}`,
      payload,
      `${payload}.`,
      'garbage',
      `.${mac}`,
      wide,
    ]) {
      const res = await callback(code, bad, browser);
      expect(res.statusCode, `state ${bad}: ${res.body}`).toBe(400);
      expect(res.json().error).toBe('bad_request');
      expect(res.json().message).toMatch(/^state: /);
    }
    expect((await me(victim.auth)).scm).toBeNull();
    expect((await me(attacker.auth)).scm).toBeNull();
  });

  it('answers 400 for an expired state (ten minutes)', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', scm: false });
    const { code, state, browser } = await approve(auth, `oauth-x-${randomBytes(3).toString('hex')}`);
    h.clock.advance(10 * 60_000 + 1_000);
    const res = await callback(code, state, browser);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('bad_request');
    expect(res.json().message).toMatch(/^state: .*expired/);
    expect((await me(auth)).scm).toBeNull();
  });

  it('answers 400 for a code the host refuses, and for missing parameters', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', scm: false });
    const { state, browser } = await approve(auth, `oauth-c-${randomBytes(3).toString('hex')}`);
    const res = await callback('not-a-code-the-host-issued', state, browser);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toBe('bad_request');
    expect(res.json().message).toMatch(/^code: .*incorrect or expired/);
    expect((await me(auth)).scm).toBeNull();

    for (const query of [`state=${state}`, 'code=abc', '']) {
      const missing = await call('GET', `/v1/auth/scm/callback?${query}`);
      expect(missing.statusCode, `?${query}: ${missing.body}`).toBe(400);
      expect(missing.json().error).toBe('bad_request');
    }
  });

  it('answers 404 not_found on start and callback when no OAuth app is configured', async () => {
    const plain = await startHarness({}, { scm: 'fake' });
    try {
      const { auth } = await newAccount(plain, { plan: 'pro', scm: false });
      const start = await plain.app.inject({ method: 'GET', url: '/v1/auth/scm/start', headers: auth });
      expect(start.statusCode, start.body).toBe(404);
      expect(start.json().error).toBe('not_found');
      expect(start.json().message).toContain('EMEND_SCM_OAUTH_CLIENT_ID');
      const back = await plain.app.inject({ method: 'GET', url: '/v1/auth/scm/callback?code=abc&state=def.ghi' });
      expect(back.statusCode, back.body).toBe(404);
    } finally {
      await plain.close();
    }
  });
});

describe('secrets', () => {
  // runs last in this file: every body and log line of the tests above
  it('no code-host token or the OAuth client secret appears in any response body or log line', () => {
    expect(secrets.length).toBeGreaterThan(3);
    expect(bodies.length).toBeGreaterThan(20);
    expect(h.logLines.length).toBeGreaterThan(20);
    // the logger runs at trace (nothing on these paths logs below info today) and request lines are there
    expect(h.deps.log.level).toBe('trace');
    expect(h.logLines.some((l) => l.includes('incoming request'))).toBe(true);
    for (const secret of secrets) {
      for (const body of bodies) expect(body).not.toContain(secret);
      for (const line of h.logLines) expect(line).not.toContain(secret);
      for (const r of h.github.requests) expect(r.path).not.toContain(secret);
    }
    // the OAuth tokens the host minted (gho_…) are not known to the test: no such string anywhere
    for (const text of [...bodies, ...h.logLines]) expect(text).not.toMatch(/gh[pousr]_[A-Za-z0-9]{20,}/);
  });
});

// Failing today; kept out of the commit until src is fixed (see the report).
describe('known problems', () => {
  it('says the code host could not be reached, not that it answered HTTP 500 (src/scm/github/github.ts describe)', async () => {
    const port = await freePort();
    const down = await startHarness({ EMEND_SCM_API_URL: `http://127.0.0.1:${port}/api/v3` }, { scm: 'fake' });
    try {
      const { auth } = await newAccount(down, { plan: 'pro', scm: false });
      const res = await down.app.inject({
        method: 'POST',
        url: '/v1/me/scm',
        headers: auth,
        payload: { token: `ghp_${randomBytes(18).toString('hex')}` },
      });
      expect(res.statusCode).toBe(502);
      expect(res.json().message).toContain('could not be reached');
      expect(res.json().message).not.toContain('HTTP 500');
      expect(res.json().message).not.toContain(String(port));
    } finally {
      await down.close();
    }
  });

  it('does not write the OAuth code of the callback into the request log line', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', scm: false });
    const start = await call('GET', '/v1/auth/scm/start', auth);
    h.github.oauthAs(`oauth-log-${randomBytes(3).toString('hex')}`);
    const back = new URL((await fetch(start.json().authorize_url, { redirect: 'manual' })).headers.get('location')!);
    const code = back.searchParams.get('code')!;
    const done = await call(
      'GET',
      `/v1/auth/scm/callback?${back.searchParams}`,
      cookieFrom(start, 'emend_oauth_connect'),
    );
    expect(done.statusCode).toBe(200);
    for (const line of h.logLines) expect(line).not.toContain(code);
  });
});
