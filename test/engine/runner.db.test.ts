import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerBalance } from '../../src/billing/credits.js';
import { workspaces } from '../../src/db/schema.js';
import { CHANNELS } from '../../src/events/bus.js';
import type { RegistryStep } from '../../src/steps/step.js';
import {
  approveGate,
  createTask,
  deferred,
  isRunning,
  logsOf,
  recordingSteps,
  taskRow,
  waitFor,
  waitForStatus,
  workerPerTest,
} from '../support/engine.js';
import { type Harness, newAccount, startHarness, useOwnKey } from '../support/harness.js';
import { validatorOutput } from '../support/step-outputs.js';

let h: Harness;
const workers = workerPerTest(() => h);
beforeAll(async () => {
  h = await startHarness();
  // the public repositories these tests name, on the code host the service asks
  h.github.createRepo('psf', 'requests');
});
afterAll(() => h.close());

async function start(overrides: Parameters<typeof recordingSteps>[0] = {}, concurrency = 2) {
  const rec = recordingSteps(overrides);
  await workers.start(rec.steps, { concurrency });
  return rec;
}

async function credits(accountId: string) {
  const [row] = await h.deps.db
    .select({ credits: workspaces.credits })
    .from(workspaces)
    .where(eq(workspaces.id, accountId));
  return row!.credits;
}

describe('a full run', () => {
  it('runs the six steps in order on a pr-mode task, records totals and captures the credit', async () => {
    const { calls } = await start();
    const { auth, account } = await newAccount(h, { plan: 'pro', credits: 3 });
    const id = await createTask(h, auth);
    const done = await waitForStatus(h, id, 'done');
    expect(calls.map((c) => c.step)).toEqual(['planner', 'locator', 'inspector', 'fixer', 'validator', 'pr']);
    expect(await logsOf(h, id)).toEqual([
      'planner:running',
      'planner:done',
      'locator:running',
      'locator:done',
      'inspector:running',
      'inspector:done',
      'fixer:running',
      'fixer:done',
      'validator:running',
      'validator:done',
      'pr:running',
      'pr:done',
    ]);
    expect(done).toMatchObject({
      tokensTotal: 500,
      prUrl: expect.stringContaining('/pull/'),
      error: null,
      retryCount: 0,
    });
    expect(Number(done.costUsd)).toBeCloseTo(0.05, 6);
    expect(done.durationMs).toBeGreaterThanOrEqual(0);
    expect(done.diffSummary).toContain('+x = 2');
    // later steps see earlier outputs
    expect(calls[5]!.outputs).toHaveProperty('fixer.diff');
    expect(await credits(account.id)).toBe(2);
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(2);
    const view = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json();
    expect(view.task).toMatchObject({ status: 'done', tokens_total: 500, pr_url: done.prUrl });
    expect(view.logs.at(-1)).toMatchObject({
      step: 'pr',
      status: 'done',
      output: { pr_url: done.prUrl },
      tokens: 100,
      cost_usd: 0.01,
    });
  });

  it('skips pr in preview mode, and stops after the inspector for demo tokens', async () => {
    await start();
    const free = await newAccount(h, { plan: 'free' });
    const previewId = await createTask(h, free.auth);
    await waitForStatus(h, previewId, 'done');
    expect((await logsOf(h, previewId)).slice(-1)).toEqual(['pr:skipped']);
    const demo = (
      await h.app.inject({ method: 'POST', url: '/v1/demo/token', payload: { email: 'demo@example.com' } })
    ).json().token;
    const demoId = await createTask(h, { authorization: `Bearer ${demo}` });
    await waitForStatus(h, demoId, 'done');
    expect((await logsOf(h, demoId)).slice(-3)).toEqual(['fixer:skipped', 'validator:skipped', 'pr:skipped']);
    const view = (
      await h.app.inject({ method: 'GET', url: `/v1/tasks/${demoId}`, headers: { authorization: `Bearer ${demo}` } })
    ).json();
    expect(view.logs.find((l: { step: string }) => l.step === 'fixer').output).toEqual({
      reason: 'demo tokens stop after the inspector',
    });
  });

  it('re-runs the fixer with the failure while retries remain, then goes on', async () => {
    let validations = 0;
    const { calls } = await start({
      validator: async () => {
        validations++;
        return {
          output: validatorOutput({ passed: false, new_failures: [`test_${validations}`] }),
          patch: { passed: false },
        };
      },
    });
    const { auth, account } = await newAccount(h, { plan: 'pro', credits: 1 });
    const id = await createTask(h, auth);
    const done = await waitForStatus(h, id, 'done');
    // pro allows 2 retries: fixer runs 3 times, validator 3 times, then the pr step (a draft, in the pr issue)
    expect(calls.map((c) => c.step)).toEqual([
      'planner',
      'locator',
      'inspector',
      'fixer',
      'validator',
      'fixer',
      'validator',
      'fixer',
      'validator',
      'pr',
    ]);
    const fixers = calls.filter((c) => c.step === 'fixer');
    expect(fixers.map((c) => c.retry)).toEqual([0, 1, 2]);
    expect(fixers[1]!.failure).toEqual(validatorOutput({ passed: false, new_failures: ['test_1'] }));
    expect(done.retryCount).toBe(2);
    expect((await logsOf(h, id)).filter((l) => l === 'validator:failed')).toHaveLength(3);
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(await credits(account.id));
  });

  it('fails the task with the step’s message and releases the credit when a step throws', async () => {
    await start({ locator: async () => Promise.reject(new Error('index build ran out of memory')) });
    const { auth, account } = await newAccount(h, { plan: 'pro', credits: 1 });
    const id = await createTask(h, auth);
    const failed = await waitForStatus(h, id, 'failed');
    expect(failed.error).toBe('locator failed: index build ran out of memory');
    expect(await logsOf(h, id)).toEqual(['planner:running', 'planner:done', 'locator:running', 'locator:failed']);
    expect(await credits(account.id)).toBe(1);
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(1);
  });

  it('records tokens but no cost under BYOK', async () => {
    await start();
    const { auth } = await newAccount(h, { plan: 'pro' });
    await useOwnKey(h, auth);
    const id = await createTask(h, auth);
    const done = await waitForStatus(h, id, 'done');
    expect(done.tokensTotal).toBe(500);
    expect(Number(done.costUsd)).toBe(0);
  });
});

describe('approval gates', () => {
  it('waits after the planner and after the fixer without holding a worker; approve resumes, with an edited plan', async () => {
    const { calls } = await start({}, 1);
    const { auth } = await newAccount(h, { plan: 'pro', credits: 5 });
    const id = await createTask(h, auth, { approval_mode: 'manual' });
    await waitForStatus(h, id, 'awaiting_plan');
    expect(calls.map((c) => c.step)).toEqual(['planner']);
    // the single consumer is free: another task runs to the end meanwhile
    const other = await createTask(h, auth);
    await waitForStatus(h, other, 'done');

    const wrongStage = await approveGate(h, auth, id, { stage: 'diff' });
    expect(wrongStage.statusCode).toBe(409);
    expect(wrongStage.json().error).toBe('conflict');
    const badStage = await approveGate(h, auth, id, { stage: 'code' });
    expect(badStage.statusCode).toBe(400);
    expect(badStage.json().message).toContain('stage');

    const approved = await approveGate(h, auth, id, {
      stage: 'plan',
      plan: { summary: 'reviewer: change two lines', likely_files: ['b.py'] },
    });
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toMatchObject({ ok: true, task: { id, status: 'running' } });
    await waitForStatus(h, id, 'awaiting_diff');
    const locator = calls.find((c) => c.taskId === id && c.step === 'locator')!;
    expect(locator.outputs.planner).toMatchObject({
      summary: 'reviewer: change two lines',
      likely_files: ['b.py'],
      steps: ['edit'],
      edited_by_reviewer: true,
    });
    expect(calls.filter((c) => c.taskId === id).map((c) => c.step)).toEqual([
      'planner',
      'locator',
      'inspector',
      'fixer',
    ]);

    expect((await approveGate(h, auth, id, { stage: 'plan' })).statusCode).toBe(409);
    expect((await approveGate(h, auth, id, { stage: 'diff' })).statusCode).toBe(200);
    await waitForStatus(h, id, 'done');
    expect(calls.filter((c) => c.taskId === id).map((c) => c.step)).toEqual([
      'planner',
      'locator',
      'inspector',
      'fixer',
      'validator',
      'pr',
    ]);
    const metrics = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^emend_gate_waits_total\{stage="plan"\} [1-9]/m);
    expect(metrics).toMatch(/^emend_gate_waits_total\{stage="diff"\} [1-9]/m);
    expect(metrics).toMatch(/^emend_step_duration_seconds_count\{step="validator"\} [1-9]/m);
    expect(metrics).toMatch(/^emend_tasks_finished_total\{status="done",task_type="fix",mode="pr"\} [1-9]/m);
    const other404 = await newAccount(h, { plan: 'pro' });
    expect((await approveGate(h, other404.auth, id, { stage: 'plan' })).statusCode).toBe(404);
  });

  it('cancels a gate left unapproved for 5 minutes and releases the credit (injected clock)', async () => {
    await start();
    const { auth, account } = await newAccount(h, { plan: 'pro', credits: 1 });
    const id = await createTask(h, auth, { approval_mode: 'manual' });
    await waitForStatus(h, id, 'awaiting_plan');
    expect(await credits(account.id)).toBe(0);
    h.clock.advance(4 * 60_000 + 59_000);
    await workers.current!.maintain();
    expect((await taskRow(h, id)).status).toBe('awaiting_plan');
    const cancelledCount = async () =>
      (await h.deps.metrics.tasksFinished.get()).values.find((v) => v.labels.status === 'cancelled')?.value ?? 0;
    const before = await cancelledCount();
    const notified: string[] = [];
    const unsubscribe = h.deps.events.subscribe(CHANNELS.taskEvents, (taskId) => notified.push(taskId));
    // On PostgreSQL the LISTEN behind a channel's first subscription is still under way when
    // subscribe returns, and a notify sent before it takes effect is lost (streams poll besides):
    // a probe heard back shows it is in effect before the cancel's notify can go out.
    await waitFor('the subscription to listen', async () => {
      await h.deps.events.publish(CHANNELS.taskEvents, 'probe');
      return notified.includes('probe');
    });
    h.clock.advance(2_000);
    await workers.current!.maintain();
    const cancelled = await taskRow(h, id);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.error).toContain('5 minutes');
    expect(cancelled.durationMs).toBeGreaterThanOrEqual(5 * 60_000);
    expect(await credits(account.id)).toBe(1);
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(1);
    // It ends like every other end: counted once, and the task's streams hear of it.
    expect(await cancelledCount()).toBe(before + 1);
    await waitFor('the notify of the cancel', async () => notified.includes(id));
    unsubscribe();
    await workers.current!.maintain();
    expect(await cancelledCount()).toBe(before + 1);
    expect(await credits(account.id)).toBe(1);
  });
});

describe('kill', () => {
  it('kills a running task’s whole process tree before answering, releases the credit, and 409s a finished task', async () => {
    const spawned = deferred<number[]>();
    const inspector: RegistryStep = async (_payload, helpers) => {
      const child = helpers.spawn('sh', ['-c', 'sleep 300 & echo $!; sleep 300 & echo $!; wait'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const pids: number[] = [child.pid!];
      child.stdout!.on('data', (b: Buffer) => {
        pids.push(...String(b).split('\n').filter(Boolean).map(Number));
        if (pids.length === 3) spawned.resolve(pids);
      });
      await new Promise((resolve) => child.once('exit', resolve));
      return { output: {} };
    };
    const { calls } = await start({ inspector });
    const { auth, account } = await newAccount(h, { plan: 'pro', credits: 1 });
    const id = await createTask(h, auth);
    const pids = await spawned.promise;
    expect(pids.every(isRunning)).toBe(true);
    const res = await h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/kill`, headers: auth });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, task: { status: 'cancelled' } });
    expect(pids.filter(isRunning)).toEqual([]);
    expect(await credits(account.id)).toBe(1);
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(1);
    // nothing ran after the kill
    await new Promise((r) => setTimeout(r, 300));
    expect(calls.filter((c) => c.taskId === id).map((c) => c.step)).toEqual(['planner', 'locator', 'inspector']);
    expect((await taskRow(h, id)).status).toBe('cancelled');
    const again = await h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/kill`, headers: auth });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe('conflict');
  });

  it('kills pending and waiting tasks, and 404s another account’s task', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', credits: 3 });
    const pending = await createTask(h, auth); // no worker yet: stays pending
    const killed = await h.app.inject({ method: 'POST', url: `/v1/tasks/${pending}/kill`, headers: auth });
    expect(killed.json().task.status).toBe('cancelled');
    await start();
    const waiting = await createTask(h, auth, { approval_mode: 'manual' });
    await waitForStatus(h, waiting, 'awaiting_plan');
    const other = await newAccount(h, { plan: 'pro' });
    expect(
      (await h.app.inject({ method: 'POST', url: `/v1/tasks/${waiting}/kill`, headers: other.auth })).statusCode,
    ).toBe(404);
    expect(
      (await h.app.inject({ method: 'POST', url: `/v1/tasks/${waiting}/kill`, headers: auth })).json().task.status,
    ).toBe('cancelled');
  });
});

describe('continue', () => {
  it('promotes a done preview to a pr-mode child that reuses the plan and diff, holding one credit', async () => {
    const { calls } = await start();
    const { auth, account } = await newAccount(h, { plan: 'free', credits: 1 });
    const parent = await createTask(h, auth);
    await waitForStatus(h, parent, 'done');
    const res = await h.app.inject({ method: 'POST', url: `/v1/tasks/${parent}/continue`, headers: auth });
    expect(res.statusCode).toBe(201);
    const child = res.json();
    expect(child).toMatchObject({ parent_id: parent, mode: 'pr', status: 'pending', prompt: 'fix the bug' });
    expect(await credits(account.id)).toBe(0);
    await waitForStatus(h, child.id, 'done');
    expect(calls.filter((c) => c.taskId === child.id).map((c) => c.step)).toEqual(['validator', 'pr']);
    expect(await logsOf(h, child.id)).toEqual([
      'planner:done',
      'locator:done',
      'inspector:done',
      'fixer:done',
      'validator:running',
      'validator:done',
      'pr:running',
      'pr:done',
    ]);
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(0);
    // no credit, no BYOK: 402; the child (pr mode) cannot be continued: 409
    const again = await h.app.inject({ method: 'POST', url: `/v1/tasks/${parent}/continue`, headers: auth });
    expect(again.statusCode).toBe(402);
    expect(again.json().error).toBe('NO_CREDITS');
    expect(
      (await h.app.inject({ method: 'POST', url: `/v1/tasks/${child.id}/continue`, headers: auth })).statusCode,
    ).toBe(409);
    await h.app.inject({ method: 'POST', url: '/v1/me/byok', headers: auth, payload: { enabled: true } });
    const byok = await h.app.inject({ method: 'POST', url: `/v1/tasks/${parent}/continue`, headers: auth });
    expect(byok.statusCode).toBe(201);
    expect(byok.json().byok).toBe(true);
  });

  it('answers 409 for a preview not done, and 402 DEMO_LIMIT_REACHED to demo tokens', async () => {
    const { auth } = await newAccount(h, { plan: 'free', credits: 5 });
    const pending = await createTask(h, auth);
    expect(
      (await h.app.inject({ method: 'POST', url: `/v1/tasks/${pending}/continue`, headers: auth })).statusCode,
    ).toBe(409);
    const demo = (
      await h.app.inject({ method: 'POST', url: '/v1/demo/token', payload: { email: 'c@example.com' } })
    ).json().token;
    const demoAuth = { authorization: `Bearer ${demo}` };
    const demoTask = await createTask(h, demoAuth);
    const res = await h.app.inject({ method: 'POST', url: `/v1/tasks/${demoTask}/continue`, headers: demoAuth });
    expect(res.statusCode).toBe(402);
    expect(res.json().error).toBe('DEMO_LIMIT_REACHED');
  });
});
