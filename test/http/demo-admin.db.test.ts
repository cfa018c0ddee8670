import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerBalance } from '../../src/billing/credits.js';
import { tasks } from '../../src/db/schema.js';
import { type Harness, forceStatus, newAccount, startHarness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  // the public repositories these tests name, on the code host the service asks
  h.github.createRepo('psf', 'requests');
});
afterAll(() => h.close());

const demoToken = (email: string, ip = '203.0.113.7') =>
  h.app.inject({ method: 'POST', url: '/v1/demo/token', payload: { email }, remoteAddress: ip });

describe('POST /v1/demo/token', () => {
  it('issues a 30-day demo token with the spec’s limits', async () => {
    const res = await demoToken('visitor@example.com', '198.51.100.1');
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      token: expect.stringMatching(/^tk_demo_[A-Za-z0-9_-]{40}$/),
      expires_in_days: 30,
      scope: 'demo',
      limits: { max_tasks_per_token: 2, public_repos_only: true, pipeline_stages: ['planner', 'locator', 'inspector'] },
    });
  });

  it('runs 2 preview tasks per token, then 402 DEMO_LIMIT_REACHED', async () => {
    const { token } = (await demoToken('two@example.com', '198.51.100.2')).json();
    const auth = { authorization: `Bearer ${token}` };
    const post = () =>
      h.app.inject({
        method: 'POST',
        url: '/v1/tasks',
        headers: auth,
        payload: { prompt: 'explain the bug', repo_url: 'https://github.com/psf/requests' },
      });
    const first = await post();
    expect(first.statusCode).toBe(201);
    expect(first.json().mode).toBe('preview');
    // one at a time (cap 1)
    expect((await post()).json().error).toBe('CONCURRENT_LIMIT');
    await forceStatus(h, eq(tasks.id, first.json().id), 'done');
    const second = await post();
    expect(second.statusCode).toBe(201);
    await forceStatus(h, eq(tasks.id, second.json().id), 'done');
    const third = await post();
    expect(third.statusCode).toBe(402);
    expect(third.json().error).toBe('DEMO_LIMIT_REACHED');
    const limits = await h.app.inject({ method: 'GET', url: '/v1/tasks/limits', headers: auth });
    expect(limits.json()).toMatchObject({
      plan: 'demo',
      used_this_month: 2,
      limits: { monthly: 2, concurrent: 1, mode: 'preview' },
    });
  });

  it('issues at most 3 per IP in 24 hours, exactly, under parallel requests', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => demoToken(`p${i}@example.com`, '192.0.2.50')),
    );
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([201, 201, 201, 429, 429, 429, 429, 429]);
    const limited = results.find((r) => r.statusCode === 429)!;
    expect(limited.json().error).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBe(24 * 3600);
    expect((await demoToken('other@example.com', '192.0.2.51')).statusCode).toBe(201);
    h.clock.advance(24 * 3600_000 + 1);
    expect((await demoToken('later@example.com', '192.0.2.50')).statusCode).toBe(201);
  });

  it('never hands out access to an existing account with that email', async () => {
    const { account } = await newAccount(h, { plan: 'pro', credits: 9, email: 'owner@example.com' });
    const { token } = (await demoToken('owner@example.com', '198.51.100.9')).json();
    const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${token}` } });
    expect(me.json().id).not.toBe(account.id);
    expect(me.json()).toMatchObject({ plan: 'demo', credits: 0 });
  });

  it('answers 400 for a bad email', async () => {
    for (const payload of [{ email: 'not-an-email' }, {}, { email: 'a@b.co', extra: 1 }]) {
      const res = await h.app.inject({ method: 'POST', url: '/v1/demo/token', payload });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('bad_request');
    }
  });
});

describe('admin', () => {
  it('lists accounts and changes plan and credits through the ledger', async () => {
    const admin = await newAccount(h, { plan: 'scale', admin: true });
    const user = await newAccount(h, { plan: 'free', credits: 2, email: 'customer@example.com' });
    const list = await h.app.inject({
      method: 'GET',
      url: '/v1/admin/accounts?email=customer@example.com',
      headers: admin.auth,
    });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual([expect.objectContaining({ id: user.account.id, plan: 'free', credits: 2 })]);
    const patched = await h.app.inject({
      method: 'PATCH',
      url: `/v1/admin/accounts/${user.account.id}`,
      headers: admin.auth,
      payload: { plan: 'pro', credits: 50 },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ plan: 'pro', credits: 50 });
    expect(await ledgerBalance(h.deps.db, user.account.id)).toBe(50);
    const lowered = await h.app.inject({
      method: 'PATCH',
      url: `/v1/admin/accounts/${user.account.id}`,
      headers: admin.auth,
      payload: { credits: 10 },
    });
    expect(lowered.json().credits).toBe(10);
    expect(await ledgerBalance(h.deps.db, user.account.id)).toBe(10);
    const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: user.auth });
    expect(me.json()).toMatchObject({ plan: 'pro', credits: 10 });
    for (const payload of [{ plan: 'platinum' }, { credits: -1 }, { credits: 1.5 }]) {
      const bad = await h.app.inject({
        method: 'PATCH',
        url: `/v1/admin/accounts/${user.account.id}`,
        headers: admin.auth,
        payload,
      });
      expect(bad.statusCode, JSON.stringify(payload)).toBe(400);
    }
    // every field is optional: {} changes nothing and answers the account as it is
    const unchanged = await h.app.inject({
      method: 'PATCH',
      url: `/v1/admin/accounts/${user.account.id}`,
      headers: admin.auth,
      payload: {},
    });
    expect(unchanged.statusCode).toBe(200);
    expect(unchanged.json()).toMatchObject({ plan: 'pro', credits: 10 });
    expect(await ledgerBalance(h.deps.db, user.account.id)).toBe(10);
    const missing = await h.app.inject({
      method: 'PATCH',
      url: '/v1/admin/accounts/01900000-0000-7000-8000-000000000000',
      headers: admin.auth,
      payload: { plan: 'pro' },
    });
    expect(missing.statusCode).toBe(404);
    const limit = await h.app.inject({ method: 'GET', url: '/v1/admin/accounts?limit=1', headers: admin.auth });
    expect(limit.json()).toHaveLength(1);
    expect(
      (await h.app.inject({ method: 'GET', url: '/v1/admin/accounts?limit=zero', headers: admin.auth })).statusCode,
    ).toBe(400);
  });
});
