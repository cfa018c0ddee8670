import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerBalance } from '../../src/billing/credits.js';
import { updateAccount } from '../../src/accounts/accounts.js';
import { workspaces, tasks } from '../../src/db/schema.js';
import { createTask } from '../../src/tasks/service.js';
import { type Harness, forceStatus, newAccount, startHarness } from '../support/harness.js';

/**
 * Which fixer a task runs (docs/agent.md, "Choosing the fixer"): the task's `fixer`, else the
 * account's default, else the operator's EMEND_FIXER, within the fixers the plan offers. Two
 * servers: one with the operator's defaults, one whose operator chose the agent and lowered its
 * ceilings (6 turns, 60 s).
 */

let h: Harness;
let agentByDefault: Harness;
beforeAll(async () => {
  [h, agentByDefault] = await Promise.all([
    startHarness(),
    startHarness({ EMEND_FIXER: 'agent', EMEND_AGENT_TURNS: '6', EMEND_AGENT_WALL_S: '60' }),
  ]);
  for (const s of [h, agentByDefault]) s.github.createRepo('psf', 'requests');
});
afterAll(async () => {
  await Promise.all([h?.close(), agentByDefault?.close()]);
});

const REPO = 'https://github.com/psf/requests';

async function post(s: Harness, auth: Record<string, string>, body: Record<string, unknown> = {}) {
  return s.app.inject({
    method: 'POST',
    url: '/v1/tasks',
    headers: auth,
    payload: { prompt: 'Fix the crash in Session.send', repo_url: REPO, ...body },
  });
}

async function settings(s: Harness, auth: Record<string, string>, body: Record<string, unknown>) {
  return s.app.inject({ method: 'POST', url: '/v1/me/settings', headers: auth, payload: body });
}

const get = async (s: Harness, auth: Record<string, string>, url: string) =>
  (await s.app.inject({ method: 'GET', url, headers: auth })).json();

/** A created task's fixer as the API shows it, after the concurrency cap is freed for the next. */
async function fixerOf(s: Harness, auth: Record<string, string>, accountId: string, body = {}) {
  const res = await post(s, auth, body);
  expect(res.statusCode, res.body).toBe(201);
  await forceStatus(s, eq(tasks.workspaceId, accountId), 'done');
  return res.json().fixer as string;
}

const demoAuth = async (s: Harness, email: string) => ({
  authorization: `Bearer ${(await s.app.inject({ method: 'POST', url: '/v1/demo/token', payload: { email } })).json().token}`,
});

describe('the task’s fixer', () => {
  it('is the task’s own choice on a plan that offers it, stored, and shown by GET', async () => {
    const { account, auth } = await newAccount(h, { plan: 'pro', credits: 3 });
    const res = await post(h, auth, { fixer: 'agent' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().fixer).toBe('agent');
    const [row] = await h.deps.db.select().from(tasks).where(eq(tasks.id, res.json().id));
    expect(row!.fixer).toBe('agent');
    expect((await get(h, auth, `/v1/tasks/${row!.id}`)).task.fixer).toBe('agent');
    await forceStatus(h, eq(tasks.workspaceId, account.id), 'done');
    // the server's default, with nothing chosen
    expect(await fixerOf(h, auth, account.id)).toBe('pipeline');
    expect(await fixerOf(h, auth, account.id, { fixer: 'pipeline' })).toBe('pipeline');
  });

  it('one the plan does not offer is a 400 naming the fixer and the plan; nothing is created, counted or held', async () => {
    const { account, auth } = await newAccount(h, { plan: 'free', credits: 2 });
    const res = await post(h, auth, { fixer: 'agent' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'bad_request' });
    expect(res.json().message).toBe('fixer: the free plan does not offer the agent fixer (it offers: pipeline)');
    expect(await h.deps.db.select().from(tasks).where(eq(tasks.workspaceId, account.id))).toEqual([]);
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(2);
    expect((await get(h, auth, '/v1/tasks/limits')).used_this_month).toBe(0);

    const demo = await demoAuth(h, 'demo-fixer@example.com');
    const refused = await post(h, demo, { fixer: 'agent' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toContain('the demo plan does not offer the agent fixer');
    expect((await post(h, demo, { fixer: 'pipeline' })).json().fixer).toBe('pipeline');
  });

  it('a value that is not a fixer is a 400 naming the field', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', credits: 1 });
    for (const fixer of ['robot', '', null, 1]) {
      const res = await post(h, auth, { fixer });
      expect(res.statusCode, JSON.stringify(fixer)).toBe(400);
      expect(res.json().error).toBe('bad_request');
      expect(res.json().message).toContain('fixer');
    }
    const bad = await settings(h, auth, { fixer: 'robot' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('fixer');
  });

  it('scaffold tasks take none (400 naming it, as repo_url) and run the pipeline whatever the defaults', async () => {
    const { auth } = await newAccount(agentByDefault, { plan: 'pro', credits: 1 });
    expect((await settings(agentByDefault, auth, { fixer: 'agent' })).statusCode).toBe(200);
    const body = { prompt: 'A landing page for a bakery in Lyon', task_type: 'scaffold' };
    const refused = await agentByDefault.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: auth,
      payload: { ...body, fixer: 'agent' },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toMatch(/^fixer: scaffold tasks take no fixer/);
    const made = await agentByDefault.app.inject({ method: 'POST', url: '/v1/tasks', headers: auth, payload: body });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json()).toMatchObject({ task_type: 'scaffold', fixer: 'pipeline' });
  });
});

describe('the account’s default fixer', () => {
  it('is set through POST /v1/me/settings, shown in the profile, and used by tasks that name none', async () => {
    const { account, auth } = await newAccount(h, { plan: 'pro', credits: 4 });
    expect((await get(h, auth, '/v1/me')).fixer).toBeNull();
    const set = await settings(h, auth, { fixer: 'agent' });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toEqual({ approval_mode: 'auto', fixer: 'agent' });
    expect((await get(h, auth, '/v1/me')).fixer).toBe('agent');
    // approval_mode alone leaves the fixer; an empty body answers the settings
    expect((await settings(h, auth, { approval_mode: 'manual' })).json()).toEqual({
      approval_mode: 'manual',
      fixer: 'agent',
    });
    expect((await settings(h, auth, {})).json()).toEqual({ approval_mode: 'manual', fixer: 'agent' });
    const limits = await get(h, auth, '/v1/tasks/limits');
    expect(limits).toMatchObject({ fixer: 'agent', limits: { fixers: ['pipeline', 'agent'] } });

    expect(await fixerOf(h, auth, account.id)).toBe('agent');
    // the task's own choice comes first
    expect(await fixerOf(h, auth, account.id, { fixer: 'pipeline' })).toBe('pipeline');
    // null clears it: the server's default again
    expect((await settings(h, auth, { fixer: null })).json().fixer).toBeNull();
    expect(await fixerOf(h, auth, account.id)).toBe('pipeline');
  });

  it('one the plan does not offer is refused (400 naming it and the plan) and not saved', async () => {
    const { account, auth } = await newAccount(h, { plan: 'free' });
    const res = await settings(h, auth, { fixer: 'agent', approval_mode: 'manual' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('fixer: the free plan does not offer the agent fixer (it offers: pipeline)');
    const [row] = await h.deps.db.select().from(workspaces).where(eq(workspaces.id, account.id));
    expect(row).toMatchObject({ fixer: null, approvalMode: 'auto' });
    expect((await settings(h, auth, { fixer: 'pipeline' })).json().fixer).toBe('pipeline');
  });

  it('saved on a plan that offered it and no longer does (a downgrade), reads as pipeline', async () => {
    const { account, auth } = await newAccount(h, { plan: 'pro', credits: 2 });
    expect((await settings(h, auth, { fixer: 'agent' })).statusCode).toBe(200);
    await updateAccount(h.deps, account.id, { plan: 'free' });
    expect((await get(h, auth, '/v1/me')).fixer).toBe('agent');
    expect((await get(h, auth, '/v1/tasks/limits')).fixer).toBe('pipeline');
    expect(await fixerOf(h, auth, account.id)).toBe('pipeline');
  });

  it('applies to tasks a code-host trigger starts (no token, no choice in the request)', async () => {
    const { account, auth } = await newAccount(h, { plan: 'pro', credits: 2 });
    expect((await settings(h, auth, { fixer: 'agent' })).statusCode).toBe(200);
    const [fresh] = await h.deps.db.select().from(workspaces).where(eq(workspaces.id, account.id));
    const task = await createTask(
      h.deps,
      { workspace: fresh!, account: null, tokenId: null, tokenKind: 'full' },
      { prompt: 'Fix the crash in Session.send', repo_url: REPO },
    );
    expect(task.fixer).toBe('agent');
  });
});

describe('the operator’s default fixer (EMEND_FIXER)', () => {
  it('applies when neither the task nor the account chooses, on plans that offer it; else pipeline', async () => {
    const s = agentByDefault;
    const pro = await newAccount(s, { plan: 'pro', credits: 3 });
    expect(await fixerOf(s, pro.auth, pro.account.id)).toBe('agent');
    expect((await get(s, pro.auth, '/v1/tasks/limits')).fixer).toBe('agent');
    // the account's default comes before the operator's
    expect((await settings(s, pro.auth, { fixer: 'pipeline' })).statusCode).toBe(200);
    expect(await fixerOf(s, pro.auth, pro.account.id)).toBe('pipeline');

    const free = await newAccount(s, { plan: 'free' });
    expect(await fixerOf(s, free.auth, free.account.id)).toBe('pipeline');
    expect((await get(s, free.auth, '/v1/tasks/limits')).fixer).toBe('pipeline');
    const demo = await demoAuth(s, 'demo-operator@example.com');
    expect((await post(s, demo)).json().fixer).toBe('pipeline');
  });
});

describe('the plan’s agent limits', () => {
  it('GET /v1/tasks/limits shows the plan’s fixers and its agent limits under the operator’s ceiling', async () => {
    const pro = await newAccount(h, { plan: 'pro' });
    expect((await get(h, pro.auth, '/v1/tasks/limits')).limits).toMatchObject({
      fixers: ['pipeline', 'agent'],
      agentTurns: 40,
      agentWallMs: 1_200_000,
    });
    const scale = await newAccount(h, { plan: 'scale' });
    expect((await get(h, scale.auth, '/v1/tasks/limits')).limits).toMatchObject({
      fixers: ['pipeline', 'agent'],
      agentTurns: 80,
      agentWallMs: 2_400_000,
    });
    const free = await newAccount(h, { plan: 'free' });
    expect((await get(h, free.auth, '/v1/tasks/limits')).limits.fixers).toEqual(['pipeline']);
    // an operator's ceiling below the plan's wins
    const capped = await newAccount(agentByDefault, { plan: 'scale' });
    expect((await get(agentByDefault, capped.auth, '/v1/tasks/limits')).limits).toMatchObject({
      agentTurns: 6,
      agentWallMs: 60_000,
    });
  });
});
