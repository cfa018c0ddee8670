import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/accounts/token-secrets.js';
import { apiTokens } from '../../src/db/schema.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

let h: Harness;
let documented: { method: string; url: string; public: boolean }[];

beforeAll(async () => {
  h = await startHarness();
  const doc = h.app.swagger() as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      url: path.replace(/\{id\}/g, '01900000-0000-7000-8000-000000000000').replace(/\{provider\}/g, 'openai'),
      public: Array.isArray(op.security) && op.security.length === 0,
    })),
  );
});
afterAll(() => h.close());

// Shared checks for every documented route (as unkey's runCommonRouteTests): the same auth
// rules hold everywhere, so a route added later cannot forget them.
describe('every non-public route', () => {
  it('is documented, and there is more than a handful of them', () => {
    expect(documented.filter((r) => !r.public).length).toBeGreaterThanOrEqual(14);
  });

  it('answers 401 unauthorized without a token or with a malformed header', async () => {
    for (const route of documented.filter((r) => !r.public)) {
      for (const headers of [
        {},
        { authorization: 'Basic dXNlcjpwdw==' },
        { authorization: 'Bearer' },
        { authorization: 'Bearer not-our-token' },
      ]) {
        const res = await h.app.inject({ method: route.method as 'GET', url: route.url, headers });
        expect(res.statusCode, `${route.method} ${route.url} ${JSON.stringify(headers)}`).toBe(401);
        expect(res.json().error).toBe('unauthorized');
      }
    }
  });

  it('answers 401 invalid_token for an unknown, revoked or expired token', async () => {
    const { auth, account } = await newAccount(h, { plan: 'pro' });
    const unknown = { authorization: `Bearer tk_${'A'.repeat(40)}` };
    const mistyped = {
      authorization: `${auth.authorization.slice(0, -1)}${auth.authorization.endsWith('x') ? 'y' : 'x'}`,
    };
    for (const route of documented.filter((r) => !r.public)) {
      for (const headers of [unknown, mistyped, { authorization: 'Bearer tk_short' }]) {
        const res = await h.app.inject({ method: route.method as 'GET', url: route.url, headers });
        expect(res.statusCode, `${route.method} ${route.url}`).toBe(401);
        expect(res.json().error).toBe('invalid_token');
      }
    }
    // revoked
    await h.deps.db.update(apiTokens).set({ revokedAt: h.clock.now() }).where(eq(apiTokens.accountId, account.id));
    const revoked = await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth });
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json().error).toBe('invalid_token');
  });

  it('admin routes answer 403 forbidden to non-admins, demo tokens 403 on account management', async () => {
    const { auth } = await newAccount(h, { plan: 'scale' });
    for (const route of documented.filter((r) => r.url.includes('/admin/'))) {
      const res = await h.app.inject({
        method: route.method as 'GET',
        url: route.url,
        headers: auth,
        payload: route.method === 'PATCH' ? { plan: 'pro' } : undefined,
      });
      expect(res.statusCode, route.url).toBe(403);
      expect(res.json().error).toBe('forbidden');
    }
    const demo = (
      await h.app.inject({ method: 'POST', url: '/v1/demo/token', payload: { email: 'demo@example.com' } })
    ).json().token;
    const demoAuth = { authorization: `Bearer ${demo}` };
    for (const [method, url, payload] of [
      ['POST', '/v1/me/tokens', {}],
      ['GET', '/v1/me/tokens', undefined],
      ['POST', '/v1/me/keys', { provider: 'openai', api_key: 'sk-1234567890' }],
      ['POST', '/v1/me/byok', { enabled: true }],
      ['GET', '/v1/admin/accounts', undefined],
    ] as const) {
      const res = await h.app.inject({ method, url, headers: demoAuth, payload });
      expect(res.statusCode, url).toBe(403);
      expect(res.json().error).toBe('forbidden');
    }
    expect((await h.app.inject({ method: 'GET', url: '/v1/me', headers: demoAuth })).statusCode).toBe(200);
  });

  it('public routes need no token', async () => {
    for (const url of ['/health', '/v1/health', '/metrics', '/openapi-public.yaml', '/openapi-public.json']) {
      expect((await h.app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
    }
    expect((await h.app.inject({ method: 'GET', url: '/docs' })).statusCode).toBeLessThan(400);
  });
});

describe('tokens', () => {
  it('expire: a demo token is refused after 30 days', async () => {
    const demo = (
      await h.app.inject({ method: 'POST', url: '/v1/demo/token', payload: { email: 'late@example.com' } })
    ).json().token;
    const auth = { authorization: `Bearer ${demo}` };
    h.clock.advance(30 * 86_400_000 - 1000);
    expect((await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth })).statusCode).toBe(200);
    h.clock.advance(2000);
    const late = await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth });
    expect(late.statusCode).toBe(401);
    expect(late.json().error).toBe('invalid_token');
  });

  it('are stored as SHA-256 only, with at least 160 random bits', async () => {
    const { token, account } = await newAccount(h);
    expect(token).toMatch(/^tk_[A-Za-z0-9_-]{40}$/); // 40 base64url characters = 240 bits
    const rows = await h.deps.db.select().from(apiTokens).where(eq(apiTokens.accountId, account.id));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).toBe(hashToken(token));
    expect(JSON.stringify(rows)).not.toContain(token.slice(3));
  });
});
