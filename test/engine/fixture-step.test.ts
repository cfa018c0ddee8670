import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Worker, startWorker } from '../../src/engine/worker.js';
import { stepOutputComponents } from '../../src/http/step-output-schemas.js';
import { readProgress } from '../../src/step-contract/index.js';
import { logsOf, recordingSteps, waitForStatus } from '../support/engine.js';
import { CHECKER, WITH_CHECKER, withChecker } from '../support/fixture-step.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

let h: Harness;
let worker: Worker | undefined;
beforeAll(async () => {
  h = await startHarness();
  h.github.createRepo('psf', 'requests');
});
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
});
afterAll(() => h.close());

describe('a step added by its descriptor entry, its function and its registration', () => {
  it('runs in its place, its failed verdict sends the task back to the rework step, its output is stored', async () => {
    const { steps, calls } = recordingSteps();
    worker = await startWorker(h.deps, withChecker(steps), {
      concurrency: 1,
      heartbeatMs: 200,
      staleMs: 2_000,
      maintenanceMs: 60_000,
      pipeline: WITH_CHECKER,
    });
    const { auth } = await newAccount(h, { plan: 'pro', credits: 3 });
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: auth,
      payload: { prompt: 'fix the bug', repo_url: 'https://github.com/psf/requests' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const done = await waitForStatus(h, res.json().id, 'done');
    // The checker is no recording step: between the fixer's runs, the first sent back by it.
    expect(calls.map((c) => `${c.step}/${c.retry}`)).toEqual([
      'planner/0',
      'locator/0',
      'inspector/0',
      'fixer/0',
      'fixer/1',
      'validator/0',
      'pr/0',
    ]);
    expect(await logsOf(h, done.id)).toEqual([
      'planner:running',
      'planner:done',
      'locator:running',
      'locator:done',
      'inspector:running',
      'inspector:done',
      'fixer:running',
      'fixer:done',
      'checker:running',
      'checker:failed',
      'fixer:running',
      'fixer:done',
      'checker:running',
      'checker:done',
      'validator:running',
      'validator:done',
      'pr:running',
      'pr:done',
    ]);
    expect(done).toMatchObject({ retryCount: 1, error: null });
    expect(readProgress(done.progress, ['checker']).outputs.checker).toEqual({ checked: 1, verdict: true });
  });

  it('stays out of the OpenAPI document: the contract fixes the six steps', () => {
    const components = Object.keys(stepOutputComponents());
    expect(components).toHaveLength(9);
    expect(components).not.toContain(CHECKER.kinds.fix.component);
  });
});
