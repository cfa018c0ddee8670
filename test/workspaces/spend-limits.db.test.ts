import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordModelSpend } from '../../src/billing/spend-limits.js';
import { webhookDeliveries } from '../../src/db/schema.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';

// Spend limits (issue 48, point 2): the caps are set and read through the API, a new task at a
// cap is refused 402 with the cap named, the month is the UTC calendar month of the injected
// clock, and 80 % and 100 % are each told once a month as a `spend.threshold` webhook event.

const ENV = { EMEND_OUTBOUND_ALLOW: '127.0.0.1', EMEND_WEBHOOK_ALLOW_HTTP: 'on' };

let h: Harness;
let rx: WebhookReceiver;
beforeAll(async () => {
  h = await startHarness(ENV);
  rx = await startWebhookReceiver();
  h.github.createRepo('psf', 'requests');
  h.clock.set(new Date('2026-11-20T12:00:00Z'));
});
afterAll(async () => {
  await rx.close();
  await h.close();
});

type Auth = Record<string, string>;
const call = (auth: Auth, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  h.app.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) });
const limitsUrl = (id: string) => `/v1/workspaces/${id}/limits`;
const newTask = (auth: Auth, i = 0) =>
  call(auth, 'POST', '/v1/tasks', { prompt: `spend limit task ${i}`, repo_url: 'https://github.com/psf/requests' });
const kill = (auth: Auth, id: string) => call(auth, 'POST', `/v1/tasks/${id}/kill`);

describe('spend limits through the API', () => {
  it('reads no caps and nothing used for a new workspace, in the UTC month of the clock', async () => {
    const { auth, workspace, account } = await newAccount(h, { plan: 'pro', credits: 10 });
    const res = await call(auth, 'GET', limitsUrl(workspace.id));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      month: '2026-11',
      monthly_spend_cap_usd: null,
      spent_usd: 0,
      monthly_credit_cap: null,
      credits_used: 0,
      members: [
        expect.objectContaining({
          account_id: account.id,
          role: 'owner',
          monthly_spend_cap_usd: null,
          spent_usd: 0,
          monthly_credit_cap: null,
          credits_used: 0,
        }),
      ],
      notices: [],
    });
  });

  it('sets caps (a field left out stays, null removes), and refuses bad values naming the field', async () => {
    const { auth, workspace, account } = await newAccount(h, { plan: 'pro', credits: 10 });
    const set = await call(auth, 'PATCH', limitsUrl(workspace.id), {
      monthly_spend_cap_usd: 12.5,
      monthly_credit_cap: 7,
      members: [{ account_id: account.id, monthly_credit_cap: 3 }],
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ monthly_spend_cap_usd: 12.5, monthly_credit_cap: 7 });
    expect(set.json().members[0]).toMatchObject({ monthly_credit_cap: 3, monthly_spend_cap_usd: null });
    const partly = await call(auth, 'PATCH', limitsUrl(workspace.id), { monthly_credit_cap: null });
    expect(partly.json()).toMatchObject({ monthly_spend_cap_usd: 12.5, monthly_credit_cap: null });

    const refused: [object, string][] = [
      [{ monthly_spend_cap_usd: -1 }, 'monthly_spend_cap_usd'],
      [{ monthly_spend_cap_usd: 1.005 }, 'monthly_spend_cap_usd'],
      [{ monthly_spend_cap_usd: 'ten' }, 'monthly_spend_cap_usd'],
      [{ monthly_credit_cap: 1.5 }, 'monthly_credit_cap'],
      [{ monthly_credit_cap: -3 }, 'monthly_credit_cap'],
      [{ members: [{ account_id: account.id, monthly_spend_cap_usd: -2 }] }, 'members'],
      [
        { members: [{ account_id: '01900000-0000-7000-8000-000000000000', monthly_credit_cap: 1 }] },
        'members[0].account_id',
      ],
      [{ cap: 1 }, 'cap'],
    ];
    for (const [body, field] of refused) {
      const res = await call(auth, 'PATCH', limitsUrl(workspace.id), body);
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(400);
      expect(res.json().error).toBe('bad_request');
      expect(res.json().message).toContain(field);
    }
    // Nothing changed by the refused ones.
    expect((await call(auth, 'GET', limitsUrl(workspace.id))).json()).toMatchObject({
      monthly_spend_cap_usd: 12.5,
      monthly_credit_cap: null,
    });
  });

  it('refuses a new task at the workspace credit cap with 402 naming it; a released credit counts no more', async () => {
    const { auth, workspace } = await newAccount(h, { plan: 'pro', credits: 10 });
    await call(auth, 'PATCH', limitsUrl(workspace.id), { monthly_credit_cap: 2 });
    const first = await newTask(auth, 1);
    expect(first.statusCode, first.body).toBe(201);
    expect((await newTask(auth, 2)).statusCode).toBe(201);
    const third = await newTask(auth, 3);
    expect(third.statusCode, third.body).toBe(402);
    expect(third.json()).toMatchObject({
      error: 'NO_CREDITS',
      message: expect.stringContaining("this workspace's monthly credit cap of 2 is reached (2 used this month)"),
    });
    expect((await call(auth, 'GET', limitsUrl(workspace.id))).json()).toMatchObject({ credits_used: 2 });
    // A killed task gives its credit back: the month's use falls and a task fits again.
    expect((await kill(auth, first.json().id)).statusCode).toBe(200);
    expect((await call(auth, 'GET', limitsUrl(workspace.id))).json()).toMatchObject({ credits_used: 1 });
    expect((await newTask(auth, 4)).statusCode).toBe(201);
  });

  it('refuses a new task at the model spend cap with the cap and the use in dollars', async () => {
    const { auth, workspace, account } = await newAccount(h, { plan: 'pro', credits: 10 });
    await call(auth, 'PATCH', limitsUrl(workspace.id), { monthly_spend_cap_usd: 5 });
    const spend = { workspaceId: workspace.id, accountId: account.id, taskId: account.id };
    await recordModelSpend(h.deps.db, { ...spend, usd: 4.99 }, h.clock.now());
    expect((await newTask(auth, 1)).statusCode).toBe(201);
    await recordModelSpend(h.deps.db, { ...spend, usd: 0.03 }, h.clock.now());
    const refused = await newTask(auth, 2);
    expect(refused.statusCode, refused.body).toBe(402);
    expect(refused.json().error).toBe('NO_CREDITS');
    expect(refused.json().message).toContain(
      "this workspace's monthly model spend cap of $5.00 is reached ($5.02 used this month)",
    );
    expect(refused.json().request_id).toEqual(expect.any(String));
    // The next UTC month starts from nothing.
    const was = h.clock.now();
    h.clock.set(new Date('2026-12-01T00:00:00Z'));
    try {
      expect((await newTask(auth, 3)).statusCode).toBe(201);
      expect((await call(auth, 'GET', limitsUrl(workspace.id))).json()).toMatchObject({
        month: '2026-12',
        spent_usd: 0,
      });
    } finally {
      h.clock.set(was);
    }
  });

  it("refuses a member's task at their own cap, saying it is theirs", async () => {
    const { auth, workspace, account } = await newAccount(h, { plan: 'pro', credits: 10 });
    await call(auth, 'PATCH', limitsUrl(workspace.id), {
      monthly_credit_cap: 10,
      members: [{ account_id: account.id, monthly_credit_cap: 1 }],
    });
    expect((await newTask(auth, 1)).statusCode).toBe(201);
    const refused = await newTask(auth, 2);
    expect(refused.statusCode).toBe(402);
    expect(refused.json().message).toContain(
      'your monthly credit cap of 1 is reached (1 used this month) in this workspace',
    );
  });

  it('tells 80 % and 100 % once each as a spend.threshold event, and the limits carry the notice', async () => {
    const { auth, workspace } = await newAccount(h, { plan: 'scale', credits: 20 });
    const hook = await call(auth, 'POST', '/v1/me/webhooks', { url: rx.url, events: ['spend.threshold'] });
    expect(hook.statusCode, hook.body).toBe(201);
    const events = async () =>
      (await h.deps.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, hook.json().id)))
        .filter((d) => d.eventType === 'spend.threshold')
        .map((d) => JSON.parse(d.payload!).data)
        .sort((a, b) => a.threshold - b.threshold);
    await call(auth, 'PATCH', limitsUrl(workspace.id), { monthly_credit_cap: 5 });
    for (let i = 0; i < 3; i++) expect((await newTask(auth, i)).statusCode).toBe(201);
    expect(await events()).toEqual([]);
    expect((await call(auth, 'GET', limitsUrl(workspace.id))).json().notices).toEqual([]);
    const fourth = await newTask(auth, 3);
    expect(fourth.statusCode).toBe(201);
    expect(await events()).toEqual([
      {
        workspace_id: workspace.id,
        month: '2026-11',
        scope: 'workspace',
        account_id: null,
        cap: 'monthly_credit_cap',
        limit: 5,
        used: 4,
        share: 0.8,
        threshold: 80,
      },
    ]);
    expect((await call(auth, 'GET', limitsUrl(workspace.id))).json().notices).toEqual([
      expect.objectContaining({
        scope: 'workspace',
        cap: 'monthly_credit_cap',
        threshold: 80,
        message: "This workspace's monthly credit cap is 80 % used (4 of 5 this month).",
      }),
    ]);
    // A credit given back and held again crosses 80 % again: still told once.
    await kill(auth, fourth.json().id);
    expect((await newTask(auth, 4)).statusCode).toBe(201);
    expect((await newTask(auth, 5)).statusCode).toBe(201);
    expect((await events()).map((e) => [e.threshold, e.used])).toEqual([
      [80, 4],
      [100, 5],
    ]);
    expect((await call(auth, 'GET', limitsUrl(workspace.id))).json().notices[0].message).toBe(
      "This workspace's monthly credit cap is reached (5 of 5 this month): new tasks are refused.",
    );
  });
});
