import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ledgerBalance } from '../../src/billing/credits.js';
import { createTask, isRunning, logsOf, taskRow, waitFor, waitForStatus } from '../support/engine.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { workerProcesses } from '../support/worker-processes.js';

let h: Harness;
let procs: Awaited<ReturnType<typeof workerProcesses>>;
beforeAll(async () => {
  h = await startHarness();
  // the public repositories these tests name, on the code host the service asks
  h.github.createRepo('a', 'b');
});
afterEach(async () => {
  await procs?.close();
});
afterAll(() => h.close());

const create = (auth: Record<string, string>, n = 0) =>
  createTask(h, auth, { prompt: `task ${n}`, repo_url: 'https://github.com/a/b' });

describe('worker processes', { timeout: 120_000 }, () => {
  it('a worker killed with SIGKILL mid-step leaves no task stuck: another resumes from the last finished step', async () => {
    procs = await workerProcesses(h);
    const a = await procs.start({ STEPS: 'hang-at-locator' });
    const { auth, account } = await newAccount(h, { plan: 'pro', credits: 2 });
    const id = await create(auth);
    await waitFor('the locator to start in worker A', async () =>
      procs.calls().some((c) => c.task === id && c.step === 'locator'),
    );
    await procs.kill(a);
    expect((await taskRow(h, id)).status).toBe('running');
    const b = await procs.start({ STEPS: 'quick' });
    await waitForStatus(h, id, 'done', 30_000);
    const calls = procs.calls().filter((c) => c.task === id);
    expect(calls.map((c) => c.step)).toEqual([
      'planner',
      'locator',
      'locator',
      'inspector',
      'fixer',
      'validator',
      'pr',
    ]);
    expect(calls.slice(0, 2).every((c) => c.pid === a.pid)).toBe(true);
    expect(calls.slice(2).every((c) => c.pid === b.pid)).toBe(true);
    expect(await logsOf(h, id)).toEqual([
      'planner:running',
      'planner:done',
      'locator:running',
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
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(1);
  });

  it('fails the task with a reason when its worker dies twice', async () => {
    procs = await workerProcesses(h);
    const { auth, account } = await newAccount(h, { plan: 'pro', credits: 1 });
    const first = await procs.start({ STEPS: 'hang-at-locator', STALE_MS: '1000' });
    const id = await create(auth);
    await waitFor(
      'locator in the first worker',
      async () => procs.calls().filter((c) => c.task === id && c.step === 'locator').length === 1,
    );
    await procs.kill(first);
    const second = await procs.start({ STEPS: 'hang-at-locator', STALE_MS: '1000' });
    await waitFor(
      'locator in the second worker',
      async () => procs.calls().filter((c) => c.task === id && c.step === 'locator').length === 2,
    );
    await procs.kill(second);
    await procs.start({ STEPS: 'quick', STALE_MS: '1000' });
    const failed = await waitForStatus(h, id, 'failed', 30_000);
    expect(failed.error).toMatch(/worker running locator stopped responding 2 times/);
    expect(
      procs
        .calls()
        .filter((c) => c.task === id)
        .map((c) => c.step),
    ).toEqual(['planner', 'locator', 'locator']);
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(1);
  });

  it('a kill reaches a task running in another worker process by NOTIFY: its process tree is dead within 1 s', async () => {
    procs = await workerProcesses(h);
    await procs.start({ STEPS: 'spawn-at-inspector' });
    const { auth, account } = await newAccount(h, { plan: 'pro', credits: 1 });
    const id = await create(auth);
    const line = await waitFor('the process tree', async () =>
      procs.calls().find((c) => c.task === id && c.step === 'pids'),
    );
    const pids = line.extra!.split(',').map(Number);
    expect(pids.filter(isRunning)).toEqual(pids);
    const res = await h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/kill`, headers: auth });
    expect(res.statusCode).toBe(200);
    const killedAt = Date.now();
    await waitFor('every process of the task to die', async () => pids.filter(isRunning).length === 0, 1_000);
    expect(Date.now() - killedAt).toBeLessThanOrEqual(1_000);
    expect((await taskRow(h, id)).status).toBe('cancelled');
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(1);
    // the worker did not go on with the task
    await new Promise((r) => setTimeout(r, 500));
    expect(procs.calls().filter((c) => c.task === id && c.step === 'fixer')).toEqual([]);
  });

  it('runs 20 concurrent tasks across 2 worker processes with no step run twice', async () => {
    procs = await workerProcesses(h);
    const [w1, w2] = await Promise.all([
      procs.start({ STEPS: 'slow', CONCURRENCY: '3' }),
      procs.start({ STEPS: 'slow', CONCURRENCY: '3' }),
    ]);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const { auth } = await newAccount(h, { plan: 'scale', credits: 10 });
      for (let j = 0; j < 5; j++) ids.push(await create(auth, i * 5 + j));
    }
    for (const id of ids) await waitForStatus(h, id, 'done', 60_000);
    const calls = procs.calls();
    for (const id of ids) {
      expect(
        calls.filter((c) => c.task === id).map((c) => c.step),
        id,
      ).toEqual(['planner', 'locator', 'inspector', 'fixer', 'validator', 'pr']);
    }
    const byWorker = new Set(calls.map((c) => c.pid));
    expect(byWorker).toEqual(new Set([w1!.pid, w2!.pid]));
  });
});
