import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiTokens } from '../../src/db/schema.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

/** "Sign in with GitHub" for the control panel, through the fake GitHub's OAuth web flow. */

const BASE_URL = 'http://emend.test:8080';
const CLIENT_ID = 'Iv1.emend-login';
const CLIENT_SECRET = 'oauth-login-secret-0123456789';

let h: Harness;
beforeAll(async () => {
  h = await startHarness(
    { EMEND_BASE_URL: BASE_URL, EMEND_SCM_OAUTH_CLIENT_ID: CLIENT_ID, EMEND_SCM_OAUTH_CLIENT_SECRET: CLIENT_SECRET },
    { scm: 'fake' },
  );
  h.github.addOAuthApp(CLIENT_ID, CLIENT_SECRET);
});
afterAll(() => h.close());

const cookiesOf = (res: { headers: Record<string, unknown> }) => {
  const raw = res.headers['set-cookie'] as string | string[] | undefined;
  return Array.isArray(raw) ? raw : raw ? [raw] : [];
};

/**
 * Starts a sign-in, lets the fake host approve it as `login`; returns the callback query and the browser's login
 * cookie.
 */
async function startLogin(login: string) {
  const start = await h.app.inject({ method: 'GET', url: '/v1/auth/scm/login' });
  expect(start.statusCode, start.body).toBe(302);
  const authorize = new URL(start.headers.location as string);
  expect(`${authorize.origin}${authorize.pathname}`).toBe(`${h.github.webUrl}/login/oauth/authorize`);
  expect(authorize.searchParams.get('redirect_uri')).toBe(`${BASE_URL}/v1/auth/scm/callback`);
  const nonce = cookiesOf(start).find((c) => c.startsWith('emend_oauth_login='))!;
  expect(nonce).toMatch(/HttpOnly/i);
  expect(nonce).toMatch(/SameSite=Lax/i);
  h.github.oauthAs(login);
  const back = new URL((await fetch(authorize, { redirect: 'manual' })).headers.get('location')!);
  return { query: back.searchParams.toString(), loginCookie: nonce.split(';')[0]! };
}

describe('GET /v1/auth/scm/login and the callback', () => {
  it('signs in the account connected to that GitHub user: a session cookie, a token for it, a redirect to /app/', async () => {
    const { account, scm } = await newAccount(h, { plan: 'pro' });
    const { query, loginCookie } = await startLogin(scm!.login.toUpperCase()); // logins are case-insensitive
    const done = await h.app.inject({
      method: 'GET',
      url: `/v1/auth/scm/callback?${query}`,
      headers: { cookie: loginCookie },
    });
    expect(done.statusCode, done.body).toBe(302);
    expect(done.headers.location).toBe('/app/');
    const session = cookiesOf(done).find((c) => c.startsWith('emend_session='))!;
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Strict/i);
    const cookie = { cookie: session.split(';')[0]! };
    const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: cookie });
    expect(me.json().id).toBe(account.id);
    const tokens = await h.deps.db.select().from(apiTokens).where(eq(apiTokens.accountId, account.id));
    const issued = tokens.find((t) => t.name === 'control panel (GitHub sign-in)')!;
    expect(issued.kind).toBe('full');
    expect(issued.revokedAt).toBeNull();

    // signing out revokes the token the sign-in issued
    const out = await h.app.inject({
      method: 'DELETE',
      url: '/v1/auth/session',
      headers: { ...cookie, origin: BASE_URL },
    });
    expect(out.json()).toEqual({ signed_out: true });
    const [after] = await h.deps.db.select().from(apiTokens).where(eq(apiTokens.id, issued.id));
    expect(after!.revokedAt).not.toBeNull();
  });

  it('shows a page saying no account is connected to that user', async () => {
    const login = `nobody-${randomBytes(3).toString('hex')}`;
    h.github.addUser(login);
    const { query, loginCookie } = await startLogin(login);
    const res = await h.app.inject({
      method: 'GET',
      url: `/v1/auth/scm/callback?${query}`,
      headers: { cookie: loginCookie },
    });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain(`no emend account is connected to GitHub user ${login}`);
    expect(cookiesOf(res).some((c) => c.startsWith('emend_session=') && !c.startsWith('emend_session=;'))).toBe(false);
  });

  it('refuses a callback in a browser that did not start the sign-in (login CSRF)', async () => {
    const { scm } = await newAccount(h, { plan: 'pro' });
    const { query } = await startLogin(scm!.login);
    for (const headers of [{}, { cookie: 'emend_oauth_login=someone-elses' }]) {
      const res = await h.app.inject({ method: 'GET', url: `/v1/auth/scm/callback?${query}`, headers });
      expect(res.statusCode).toBe(400);
      expect(res.body).toContain('started in another browser');
      expect(cookiesOf(res).some((c) => c.startsWith('emend_session=') && !c.startsWith('emend_session=;'))).toBe(
        false,
      );
    }
  });

  it('is 404 without an OAuth app, and methods says so', async () => {
    const plain = await startHarness({});
    try {
      expect((await plain.app.inject({ method: 'GET', url: '/v1/auth/scm/login' })).statusCode).toBe(404);
      expect((await plain.app.inject({ method: 'GET', url: '/v1/auth/methods' })).json().oauth).toBe(false);
    } finally {
      await plain.close();
    }
    expect((await h.app.inject({ method: 'GET', url: '/v1/auth/methods' })).json().oauth).toBe(true);
  });
});
