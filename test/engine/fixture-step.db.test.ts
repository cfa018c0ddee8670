import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stepOutputComponents } from '../../src/http/step-output-schemas.js';
import { readProgress } from '../../src/step-contract/index.js';
import { createTask, logsOf, recordingSteps, waitForStatus, workerPerTest } from '../support/engine.js';
import { CHECKER, WITH_CHECKER, withChecker } from '../support/fixture-step.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

let h: Harness;
const workers = workerPerTest(() => h);
beforeAll(async () => {
  h = await startHarness();
  h.github.createRepo('psf', 'requests');
});
afterAll(() => h.close());

describe('a step added by its descriptor entry, its function and its registration', () => {
  it('runs in its place, its failed verdict sends the task back to the rework step, its output is stored', async () => {
    const { steps, calls } = recordingSteps();
    await workers.start(withChecker(steps), { concurrency: 1, pipeline: WITH_CHECKER });
    const { auth } = await newAccount(h, { plan: 'pro', credits: 3 });
    const done = await waitForStatus(h, await createTask(h, auth), 'done');
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
