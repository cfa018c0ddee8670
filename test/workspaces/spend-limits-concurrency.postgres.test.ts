import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ledgerBalance } from '../../src/billing/credits.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

// Spend limits are exact under concurrency (issue 48, point 2): 50 parallel task creations over
// real HTTP, across two API nodes on one PostgreSQL, never pass a workspace's or a member's
// monthly credit cap. The check and the hold run in one transaction on the workspace's locked row.

let h: Harness;
let urls: string[];
let second: Awaited<ReturnType<typeof buildApp>>;

beforeAll(async () => {
  h = await startHarness();
  h.github.createRepo('psf', 'requests');
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
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: string; message?: string } })),
    ),
  );
}

describe('50 parallel POSTs /v1/tasks against a monthly credit cap, across two API nodes', () => {
  it.each([
    ['workspace', 4, "this workspace's monthly credit cap of 4 is reached (4 used this month)"],
    ['member', 3, 'your monthly credit cap of 3 is reached (3 used this month)'],
  ] as const)(
    "the %s's cap of %i: exactly that many are created, the rest of the 20 get 402",
    async (whose, cap, sentence) => {
      // scale: 5 tasks at once, so the cap and not the concurrency limit is what stops them.
      const { token, account, auth, workspace } = await newAccount(h, { plan: 'scale', credits: 100 });
      const body =
        whose === 'workspace'
          ? { monthly_credit_cap: cap }
          : { members: [{ account_id: account.id, monthly_credit_cap: cap }] };
      const set = await h.app.inject({
        method: 'PATCH',
        url: `/v1/workspaces/${workspace.id}/limits`,
        headers: auth,
        payload: body,
      });
      expect(set.statusCode, set.body).toBe(200);
      const results = await burst(token, 50);
      const created = results.filter((r) => r.status === 201);
      const capped = results.filter((r) => r.status === 402);
      // First what no request may answer, so a failure shows the odd answer itself.
      expect(results.filter((r) => ![201, 402, 429].includes(r.status))).toEqual([]);
      expect(results.filter((r) => r.status === 429 && r.body.error !== 'rate_limited')).toEqual([]);
      expect(created).toHaveLength(cap);
      expect(capped).toHaveLength(20 - cap);
      for (const r of capped) {
        expect(r.body.error).toBe('NO_CREDITS');
        expect(r.body.message).toContain(sentence);
      }
      const limits = (
        await h.app.inject({ method: 'GET', url: `/v1/workspaces/${workspace.id}/limits`, headers: auth })
      ).json();
      expect(limits.credits_used).toBe(cap);
      expect(await ledgerBalance(h.deps.db, workspace.id)).toBe(100 - cap);
    },
  );
});
