import { afterEach, describe, expect, it } from 'vitest';
import { waitFor, waitForStatus } from '../support/engine.js';
import { CALC_REPO, scriptCalcRun } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, postFixTask, runFixTask, startModelService } from '../support/model-service.js';

let svc: ModelService;
let calcUrl: string;

async function start() {
  svc = await startModelService();
  svc.h.github.createRepo('acme', 'calc', { files: CALC_REPO });
  calcUrl = `${svc.h.github.webUrl}/acme/calc`;
  return svc;
}

afterEach(async () => {
  await svc?.close();
});

describe('a kill during a model call', { timeout: 120_000 }, () => {
  it('aborts the call: the task is cancelled at once and the worker is free for the next task', async () => {
    await start();
    const { h, model } = svc;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    // the first planner call never answers until the test ends
    model.enqueue(async () => {
      await held;
      return { status: 500 };
    });
    scriptCalcRun(model);
    const { auth } = await newAccount(h, { plan: 'free' });
    const id = await postFixTask(h, auth, calcUrl);
    await waitFor('the planner to call the model', async () => model.calls.length > 0);
    const started = performance.now();
    const kill = await h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/kill`, headers: auth });
    expect(kill.statusCode, kill.body).toBe(200);
    await waitForStatus(h, id, 'cancelled', 5_000);
    expect(performance.now() - started).toBeLessThan(2_000);
    await waitFor('the run to leave this process', async () => !h.deps.runs.has(id), 5_000);
    // concurrency 1: the next task can only run if the killed one let go of its slot
    const next = await runFixTask(h, auth, calcUrl, 'done');
    expect(next.task.status).toBe('done');
    release();
  });
});
