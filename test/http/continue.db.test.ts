import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectScm } from '../../src/workspaces/scm-connection.js';
import { workspaces, creditLedger, tasks } from '../../src/db/schema.js';
import { type Harness, forceStatus, newAccount, startHarness } from '../support/harness.js';

// POST /v1/tasks/{id}/continue refuses up front what its child could never finish: no code-host
// connection (412), a scaffold task or a preview that did not end done (409). A refusal holds,
// captures and creates nothing.
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.github.createRepo('psf', 'requests');
});
afterAll(() => h.close());

const create = (auth: Record<string, string>, payload: Record<string, unknown>) =>
  h.app.inject({ method: 'POST', url: '/v1/tasks', headers: auth, payload });

async function preview(auth: Record<string, string>, payload: Record<string, unknown>) {
  const res = await create(auth, payload);
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json().mode).toBe('preview');
  return res.json().id as string;
}

const fix = { prompt: 'fix the bug', repo_url: 'https://github.com/psf/requests' };
const continueTask = (auth: Record<string, string>, id: string) =>
  h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/continue`, headers: auth });

/** What a refusal must leave as it was: the balance, every ledger row, and the task's children. */
async function books(accountId: string, parentId: string) {
  const [workspace] = await h.deps.db.select().from(workspaces).where(eq(workspaces.id, accountId));
  const ledger = await h.deps.db.select().from(creditLedger).where(eq(creditLedger.workspaceId, accountId));
  const children = await h.deps.db.select().from(tasks).where(eq(tasks.parentId, parentId));
  return { credits: workspace!.credits, ledger: ledger.map((r) => r.id).sort(), children: children.length };
}

describe('POST /v1/tasks/{id}/continue refusals', () => {
  it('answers 412 scm_not_connected without a code-host connection, then 201 once connected', async () => {
    const { auth, account } = await newAccount(h, { plan: 'free', credits: 1, scm: false });
    const parent = await preview(auth, fix);
    await forceStatus(h, eq(tasks.id, parent), 'done');
    const before = await books(account.id, parent);
    const refused = await continueTask(auth, parent);
    expect(refused.statusCode, refused.body).toBe(412);
    expect(refused.json()).toMatchObject({
      error: 'scm_not_connected',
      message: expect.stringMatching(/\/v1\/me\/scm/),
    });
    expect(await books(account.id, parent)).toEqual(before);
    expect(before).toMatchObject({ credits: 1, children: 0 });

    const user = h.github.addUser('late-connector');
    await connectScm(h.deps, account.id, user.token);
    const admitted = await continueTask(auth, parent);
    expect(admitted.statusCode, admitted.body).toBe(201);
    expect(await books(account.id, parent)).toMatchObject({ credits: 0, children: 1 });
    const kinds = await h.deps.db.select().from(creditLedger).where(eq(creditLedger.workspaceId, account.id));
    expect(kinds.map((r) => r.kind).sort()).toEqual(['grant', 'hold']);
  });

  it('answers 409 conflict for a done scaffold preview, holding nothing', async () => {
    const { auth, account } = await newAccount(h, { plan: 'free', credits: 1 });
    const parent = await preview(auth, { prompt: 'a landing page for a bakery', task_type: 'scaffold' });
    await forceStatus(h, eq(tasks.id, parent), 'done');
    const before = await books(account.id, parent);
    const refused = await continueTask(auth, parent);
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json()).toMatchObject({ error: 'conflict', message: expect.stringMatching(/scaffold/) });
    expect(await books(account.id, parent)).toEqual(before);
  });

  it('answers 409 conflict for a preview that was cancelled or is still running, before the 412', async () => {
    const { auth, account } = await newAccount(h, { plan: 'free', credits: 1, scm: false });
    const running = await preview(auth, fix);
    await forceStatus(h, eq(tasks.id, running), 'running');
    const refusedRunning = await continueTask(auth, running);
    expect(refusedRunning.statusCode, refusedRunning.body).toBe(409);
    const killed = await h.app.inject({ method: 'POST', url: `/v1/tasks/${running}/kill`, headers: auth });
    expect(killed.json().task.status).toBe('cancelled');
    const before = await books(account.id, running);
    const refused = await continueTask(auth, running);
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json().error).toBe('conflict');
    expect(await books(account.id, running)).toEqual(before);
  });
});
