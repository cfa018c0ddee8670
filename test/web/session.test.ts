import { createHash } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiTokens, webSessions } from '../../src/db/schema.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

/**
 * Control-panel sessions (src/accounts/sessions.ts, src/http/session-cookie.ts) through the app:
 * the cookie's flags, its lifetime on the manual clock, death with its token, the CSRF rule, and
 * Bearer unchanged.
 */

const BASE_URL = 'http://panel.test:8080';
const ORIGIN = { origin: BASE_URL };

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ EMEND_BASE_URL: BASE_URL });
});
afterAll(() => h.close());

type Res = Awaited<ReturnType<Harness['app']['inject']>>;

/** The Set-Cookie header for emend_session, as one string. */
function sessionCookie(res: Res): string {
  const raw = res.headers['set-cookie'];
  const all = Array.isArray(raw) ? raw : raw ? [raw] : [];
  const found = all.find((c) => c.startsWith('emend_session='));
  expect(found, `no emend_session cookie in ${JSON.stringify(all)}`).toBeDefined();
  return found!;
}

const cookieValue = (setCookie: string) => setCookie.split(';')[0]!.slice('emend_session='.length);

async function signIn(token: string, headers: Record<string, string> = ORIGIN) {
  const res = await h.app.inject({ method: 'POST', url: '/v1/auth/session', headers, payload: { token } });
  expect(res.statusCode, res.body).toBe(200);
  const set = sessionCookie(res);
  return { res, set, cookie: { cookie: `emend_session=${cookieValue(set)}` } };
}

describe('POST /v1/auth/session', () => {
  it('sets an HttpOnly, SameSite=Strict cookie on / that expires in 12 hours, and answers the account', async () => {
    const { token, account } = await newAccount(h, { plan: 'pro' });
    const { res, set } = await signIn(token);
    expect(set).toMatch(/; HttpOnly/i);
    expect(set).toMatch(/; SameSite=Strict/i);
    expect(set).toMatch(/; Path=\//);
    expect(set).not.toMatch(/; Secure/i); // http base URL
    const expires = new Date(/Expires=([^;]+)/i.exec(set)![1]!);
    expect(Math.abs(expires.getTime() - (h.clock.now().getTime() + 12 * 3_600_000))).toBeLessThan(1_000);
    expect(res.json()).toMatchObject({ id: account.id, email: account.email, plan: 'pro', token_kind: 'full' });
    expect(res.body).not.toContain(token);
    expect(res.headers['cache-control']).toBe('no-store');
    // the database holds the secret's SHA-256 only
    const secret = cookieValue(set);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 bits
    const rows = await h.deps.db.select().from(webSessions).where(eq(webSessions.accountId, account.id));
    expect(rows.map((r) => r.idHash)).toContain(createHash('sha256').update(secret).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(secret);
  });

  it('is Secure when EMEND_BASE_URL is https', async () => {
    const tls = await startHarness({ EMEND_BASE_URL: 'https://emend.example' });
    try {
      const { token } = await newAccount(tls, { plan: 'pro', scm: false });
      const res = await tls.app.inject({ method: 'POST', url: '/v1/auth/session', payload: { token } });
      expect(res.statusCode, res.body).toBe(200);
      expect(sessionCookie(res)).toMatch(/; Secure/i);
    } finally {
      await tls.close();
    }
  });

  it('ends at the token’s expiry when that is sooner than 12 hours', async () => {
    const { auth } = await newAccount(h, { plan: 'pro' });
    const made = await h.app.inject({
      method: 'POST',
      url: '/v1/me/tokens',
      headers: auth,
      payload: { name: 'short', expires_in_days: 1 },
    });
    // a day is longer than 12 h: the session's 12 h win; move the clock so the token has 1 h left
    h.clock.advance(23 * 3_600_000);
    const { set } = await signIn(made.json().token);
    const expires = new Date(/Expires=([^;]+)/i.exec(set)![1]!);
    expect(Math.abs(expires.getTime() - (h.clock.now().getTime() + 3_600_000))).toBeLessThan(1_000);
  });

  it('takes demo tokens (the demo button) and refuses bad ones as Bearer does', async () => {
    const demo = (
      await h.app.inject({
        method: 'POST',
        url: '/v1/demo/token',
        payload: { email: 'panel-demo@example.com' },
        remoteAddress: '10.7.0.1',
      })
    ).json().token;
    const { res, cookie } = await signIn(demo);
    expect(res.json()).toMatchObject({ plan: 'demo', token_kind: 'demo' });
    expect((await h.app.inject({ method: 'GET', url: '/v1/me', headers: cookie })).json().plan).toBe('demo');
    // demo rules hold through the cookie too
    const mint = await h.app.inject({
      method: 'POST',
      url: '/v1/me/tokens',
      headers: { ...cookie, ...ORIGIN },
      payload: {},
    });
    expect(mint.statusCode).toBe(403);

    for (const [token, code] of [
      [`tk_${'A'.repeat(40)}`, 'invalid_token'],
      ['tk_short', 'invalid_token'],
      ['not-a-token', 'unauthorized'],
    ] as const) {
      const bad = await h.app.inject({ method: 'POST', url: '/v1/auth/session', headers: ORIGIN, payload: { token } });
      expect(bad.statusCode, token).toBe(401);
      expect(bad.json().error).toBe(code);
      expect(bad.headers['set-cookie']).toBeUndefined();
    }
    const empty = await h.app.inject({ method: 'POST', url: '/v1/auth/session', headers: ORIGIN, payload: {} });
    expect(empty.statusCode).toBe(400);
  });

  it('refuses a sign-in posted from another site (login CSRF)', async () => {
    const { token } = await newAccount(h, { plan: 'pro', scm: false });
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/auth/session',
      headers: { origin: 'https://evil.example' },
      payload: { token },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('forbidden');
    expect(res.headers['set-cookie']).toBeUndefined();
  });
});

describe('a session cookie', () => {
  it('authenticates reads, and dies after 12 hours with 401 invalid_token and a cleared cookie', async () => {
    const { token, account } = await newAccount(h, { plan: 'pro', scm: false });
    const { cookie } = await signIn(token);
    const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: cookie });
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json().id).toBe(account.id);
    h.clock.advance(12 * 3_600_000 - 1_000);
    expect((await h.app.inject({ method: 'GET', url: '/v1/tasks', headers: cookie })).statusCode).toBe(200);
    h.clock.advance(2_000);
    const late = await h.app.inject({ method: 'GET', url: '/v1/me', headers: cookie });
    expect(late.statusCode).toBe(401);
    expect(late.json().error).toBe('invalid_token');
    expect(sessionCookie(late)).toMatch(/emend_session=;.*Expires=Thu, 01 Jan 1970/i);
  });

  it('dies when its token is revoked', async () => {
    const { token, account } = await newAccount(h, { plan: 'pro', scm: false });
    const { cookie } = await signIn(token);
    expect((await h.app.inject({ method: 'GET', url: '/v1/me', headers: cookie })).statusCode).toBe(200);
    await h.deps.db.update(apiTokens).set({ revokedAt: h.clock.now() }).where(eq(apiTokens.accountId, account.id));
    const res = await h.app.inject({ method: 'GET', url: '/v1/me', headers: cookie });
    expect(res.statusCode).toBe(401);
    expect(res.json().error).toBe('invalid_token');
    expect(sessionCookie(res)).toMatch(/^emend_session=;/);
  });

  it('is refused when forged or unknown', async () => {
    for (const value of ['x', 'A'.repeat(43), '']) {
      const res = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie: `emend_session=${value}` } });
      expect(res.statusCode, value).toBe(401);
    }
  });

  it('needs a same-origin Origin (or Referer) on requests that change state: else 403 forbidden', async () => {
    const { token } = await newAccount(h, { plan: 'pro', scm: false });
    const { cookie } = await signIn(token);
    const post = (headers: Record<string, string>) =>
      h.app.inject({
        method: 'POST',
        url: '/v1/me/tokens',
        headers: { ...cookie, ...headers },
        payload: { name: 'csrf' },
      });
    for (const headers of [
      {},
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { referer: 'https://evil.example/app/' },
      { origin: 'http://panel.test:8081' },
    ] as Record<string, string>[]) {
      const res = await post(headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(403);
      expect(res.json().error).toBe('forbidden');
      expect(res.json().message).toContain('control panel');
    }
    expect((await post(ORIGIN)).statusCode).toBe(201);
    expect((await post({ referer: `${BASE_URL}/app/account` })).statusCode).toBe(201);
    // the request's own origin counts too (a server reached under another name than EMEND_BASE_URL)
    expect((await post({ host: 'other.host:3000', origin: 'http://other.host:3000' })).statusCode).toBe(201);
    // reads need no Origin
    expect((await h.app.inject({ method: 'GET', url: '/v1/me/tokens', headers: cookie })).statusCode).toBe(200);
    // nor does Bearer: the rule is for cookies only
    const bearer = await h.app.inject({
      method: 'POST',
      url: '/v1/me/tokens',
      headers: { authorization: `Bearer ${token}`, origin: 'https://evil.example' },
      payload: {},
    });
    expect(bearer.statusCode).toBe(201);
  });

  it('never overrides an Authorization header: Bearer behaves exactly as without the cookie', async () => {
    const a = await newAccount(h, { plan: 'pro', scm: false });
    const b = await newAccount(h, { plan: 'pro', scm: false });
    const { cookie } = await signIn(a.token);
    const asB = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { ...cookie, ...b.auth } });
    expect(asB.json().id).toBe(b.account.id);
    for (const authorization of ['Bearer nope', 'Basic abc', `Bearer tk_${'B'.repeat(40)}`]) {
      const res = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { ...cookie, authorization } });
      expect(res.statusCode, authorization).toBe(401);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    const none = await h.app.inject({ method: 'GET', url: '/v1/me' });
    expect(none.statusCode).toBe(401);
    expect(none.json().error).toBe('unauthorized');
  });
});

describe('DELETE /v1/auth/session', () => {
  it('signs out: the row is deleted, the cookie cleared, the cookie no longer works; the token still does', async () => {
    const { token, account } = await newAccount(h, { plan: 'pro', scm: false });
    const { cookie } = await signIn(token);
    const out = await h.app.inject({ method: 'DELETE', url: '/v1/auth/session', headers: { ...cookie, ...ORIGIN } });
    expect(out.statusCode, out.body).toBe(200);
    expect(out.json()).toEqual({ signed_out: true });
    expect(sessionCookie(out)).toMatch(/^emend_session=;/);
    expect(await h.deps.db.select().from(webSessions).where(eq(webSessions.accountId, account.id))).toEqual([]);
    expect((await h.app.inject({ method: 'GET', url: '/v1/me', headers: cookie })).statusCode).toBe(401);
    expect(
      (await h.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${token}` } })).statusCode,
    ).toBe(200);
    // again, or with no session at all: harmless
    expect((await h.app.inject({ method: 'DELETE', url: '/v1/auth/session', headers: ORIGIN })).json()).toEqual({
      signed_out: false,
    });
  });

  it('refuses a sign-out posted from another site', async () => {
    const { token } = await newAccount(h, { plan: 'pro', scm: false });
    const { cookie } = await signIn(token);
    const res = await h.app.inject({
      method: 'DELETE',
      url: '/v1/auth/session',
      headers: { ...cookie, origin: 'https://evil.example' },
    });
    expect(res.statusCode).toBe(403);
    expect((await h.app.inject({ method: 'GET', url: '/v1/me', headers: cookie })).statusCode).toBe(200);
  });
});

describe('GET /v1/auth/methods', () => {
  it('says whether code-host sign-in is configured', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/v1/auth/methods' })).json()).toEqual({
      token: true,
      demo: true,
      oauth: false,
      sso: false,
    });
  });
});
