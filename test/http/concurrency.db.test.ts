import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ledgerBalance } from '../../src/billing/credits.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

let h: Harness;
let urls: string[];
let second: Awaited<ReturnType<typeof buildApp>>;

beforeAll(async () => {
  h = await startHarness();
  // the public repositories these tests name, on the code host the service asks
  h.github.createRepo('psf', 'requests');
  // A second API node on the same database: limits must hold across nodes, not per process.
  second = await buildApp({ ...h.deps, metrics: createMetrics() });
  urls = [await h.app.listen({ port: 0, host: '127.0.0.1' }), await second.listen({ port: 0, host: '127.0.0.1' })];
});
afterAll(async () => {
  await second.close();
  await h.close();
});

async function burst(token: string, n: number) {
  return Promise.all(
    Array.from({ length: n }, (_, i) =>
      fetch(`${urls[i % 2]}/v1/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: `parallel task ${i}`, repo_url: 'https://github.com/psf/requests' }),
      }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { error?: string },
        retryAfter: r.headers.get('retry-after'),
      })),
    ),
  );
}

describe('50 parallel POSTs from one account over real HTTP, across two API nodes', () => {
  it.each([
    ['pro', 3],
    ['scale', 5],
    ['free', 1],
  ] as const)('on %s: exactly 20 pass the rate limit and exactly the cap (%i) are accepted', async (plan, cap) => {
    const { token, account } = await newAccount(h, { plan, credits: 100 });
    const results = await burst(token, 50);
    const created = results.filter((r) => r.status === 201);
    const concurrent = results.filter((r) => r.status === 429 && r.body.error === 'CONCURRENT_LIMIT');
    const limited = results.filter((r) => r.status === 429 && r.body.error === 'rate_limited');
    // First what no request may answer, so a failure shows the odd answer itself.
    expect(results.filter((r) => ![201, 429].includes(r.status))).toEqual([]);
    expect(
      results.filter((r) => r.status === 429 && !['CONCURRENT_LIMIT', 'rate_limited'].includes(r.body.error ?? '')),
    ).toEqual([]);
    expect(created).toHaveLength(cap);
    expect(concurrent).toHaveLength(20 - cap);
    expect(limited).toHaveLength(30);
    for (const r of limited) expect(Number(r.retryAfter)).toBeGreaterThan(0);
    // credits held once per accepted pr-mode task, and the ledger agrees
    const held = plan === 'free' ? 0 : cap;
    const me = await fetch(`${urls[0]}/v1/me`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.json());
    expect(me.credits).toBe(100 - held);
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(100 - held);
  });
});
