import { afterEach, describe, expect, it } from 'vitest';
import { recordModelSpend } from '../../src/billing/spend-limits.js';
import { waitFor, waitForStatus } from '../support/engine.js';
import { CALC_REPO, scriptCalcRun } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type Log, type ModelService, postFixTask, startModelService } from '../support/model-service.js';

// Spend limits on a running task (issue 48, point 2; docs/decisions.md): when a model call's
// metered cost is recorded and a monthly model spend cap is reached, that call's answer is kept
// (it is paid for), no other call starts, and the task fails with the sentence naming the cap.

let svc: ModelService;

afterEach(async () => {
  await svc?.close();
});

describe('a running task at a spend cap', { timeout: 120_000 }, () => {
  it('finishes the model call under way, starts no other, and fails naming the cap', async () => {
    svc = await startModelService();
    const { h, model } = svc;
    h.github.createRepo('acme', 'calc', { files: CALC_REPO });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    // The planner's first call waits until the test lets it answer (then the script answers it).
    model.enqueue(async () => {
      await held;
      return undefined;
    });
    scriptCalcRun(model);
    const { auth, workspace, account } = await newAccount(h, { plan: 'pro', credits: 5 });
    const set = await h.app.inject({
      method: 'PATCH',
      url: `/v1/workspaces/${workspace.id}/limits`,
      headers: auth,
      payload: { monthly_spend_cap_usd: 1 },
    });
    expect(set.statusCode, set.body).toBe(200);
    const id = await postFixTask(h, auth, `${h.github.webUrl}/acme/calc`);
    await waitFor('the planner to call the model', async () => model.calls.length > 0);
    // Meanwhile another task of the workspace spent up to the cap (its calls are recorded as they are billed).
    await recordModelSpend(
      h.deps.db,
      { workspaceId: workspace.id, accountId: account.id, taskId: workspace.id, usd: 1 },
      h.clock.now(),
    );
    release();
    await waitForStatus(h, id, ['done', 'failed', 'cancelled'], 60_000);
    const got = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json();
    expect(got.task.status).toBe('failed');
    expect(got.task.error).toMatch(
      /^planner stopped: this workspace's monthly model spend cap of \$1\.00 is reached \(\$1\.\d\d used this month\)$/,
    );
    // The call under way finished and was billed to the task; none followed it.
    expect(model.calls).toHaveLength(1);
    const planner = (got.logs as Log[]).filter((l) => l.step === 'planner' && l.status !== 'running');
    expect(planner).toEqual([expect.objectContaining({ status: 'failed' })]);
    expect(planner[0]!.output.model_calls).toBe(1);
    expect(got.task.cost_usd).toBeGreaterThan(0);
    expect(got.logs.filter((l: Log) => l.step === 'locator' && l.status !== 'skipped')).toEqual([]);
    // Its cost counts in the month's use, and its credit was given back (a failed task's is).
    const limits = (
      await h.app.inject({ method: 'GET', url: `/v1/workspaces/${workspace.id}/limits`, headers: auth })
    ).json();
    expect(limits.spent_usd).toBeCloseTo(1 + got.task.cost_usd, 6);
    expect(limits.credits_used).toBe(0);
    // And a new task is refused at the cap.
    const refused = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: auth,
      payload: { prompt: 'one more', repo_url: `${h.github.webUrl}/acme/calc` },
    });
    expect(refused.statusCode).toBe(402);
    expect(refused.json().message).toContain("this workspace's monthly model spend cap of $1.00 is reached");
  });

  it('starts no model call once the cap is reached while it waited: the next step stops before its first call', async () => {
    svc = await startModelService();
    const { h, model } = svc;
    h.github.createRepo('acme', 'calc', { files: CALC_REPO });
    scriptCalcRun(model);
    const { auth, workspace, account } = await newAccount(h, { plan: 'pro', credits: 5 });
    await h.app.inject({
      method: 'PATCH',
      url: `/v1/workspaces/${workspace.id}/limits`,
      headers: auth,
      payload: { members: [{ account_id: account.id, monthly_spend_cap_usd: 2 }] },
    });
    const id = await postFixTask(h, auth, `${h.github.webUrl}/acme/calc`, { approval_mode: 'manual' });
    await waitForStatus(h, id, 'awaiting_plan', 60_000);
    const callsBefore = model.calls.length;
    // Another task of the same member spent up to their cap while this one waited at the gate.
    await recordModelSpend(
      h.deps.db,
      { workspaceId: workspace.id, accountId: account.id, taskId: workspace.id, usd: 2 },
      h.clock.now(),
    );
    const approved = await h.app.inject({
      method: 'POST',
      url: `/v1/tasks/${id}/approve`,
      headers: auth,
      payload: { stage: 'plan' },
    });
    expect(approved.statusCode, approved.body).toBe(200);
    await waitForStatus(h, id, ['done', 'failed', 'cancelled'], 60_000);
    const got = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json();
    expect(got.task.status).toBe('failed');
    expect(got.task.error).toMatch(
      /^locator stopped: the task creator's monthly model spend cap of \$2\.00 is reached \(\$2\.\d\d used this month\)$/,
    );
    expect(model.calls).toHaveLength(callsBefore);
  });
});
