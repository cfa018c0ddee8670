import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTask, logsOf, recordingSteps, waitForStatus, workerPerTest } from '../support/engine.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { fixerOutput, prOutput } from '../support/step-outputs.js';

let h: Harness;
const workers = workerPerTest(() => h);
beforeAll(async () => {
  h = await startHarness();
  h.github.createRepo('psf', 'requests');
});
afterAll(() => h.close());

async function start(overrides: Parameters<typeof recordingSteps>[0]) {
  const rec = recordingSteps(overrides);
  await workers.start(rec.steps, { concurrency: 1 });
  return rec;
}

describe('the runner and the step contract', () => {
  it('applies a step’s task patch whichever step returns it, and nothing a step does not ask for', async () => {
    // The locator here says what only the fixer and the pr step say in production: the runner
    // sets the columns from the patch, not from the step's name or its output's fields.
    const url = 'https://github.com/psf/requests/pull/42';
    await start({
      locator: async () => ({
        output: { files: [], selected: [], reranked: false, index: { cache: 'off', files: 0, ms: 0 } },
        patch: { prUrl: url, diffSummary: 'the locator’s summary' },
      }),
      fixer: async () => ({ output: fixerOutput('--- a/a.py\n+++ b/a.py\n') }),
      pr: async () => ({ output: prOutput('https://github.com/psf/requests/pull/7') }),
    });
    const { auth } = await newAccount(h, { plan: 'pro', credits: 1 });
    const id = await createTask(h, auth);
    const done = await waitForStatus(h, id, 'done');
    expect(done.prUrl).toBe(url);
    expect(done.diffSummary).toBe('the locator’s summary');
    expect((await logsOf(h, id)).at(-1)).toBe('pr:done');
  });

  it('hands later steps only outputs that keep their contract; one that does not is absent, yet logged', async () => {
    const { calls } = await start({
      // A planner output without most of the plan's fields: stored and shown, not passed on.
      planner: async () => ({ output: { summary: 'only a summary' } }),
    });
    const { auth } = await newAccount(h, { plan: 'pro', credits: 1 });
    const id = await createTask(h, auth);
    await waitForStatus(h, id, 'done');
    const locator = calls.find((c) => c.step === 'locator')!;
    expect(locator.outputs).not.toHaveProperty('planner.summary');
    expect(locator.outputs.planner).toBeUndefined();
    // the fixer's output keeps its contract: the validator sees it
    expect(calls.find((c) => c.step === 'validator')!.outputs).toHaveProperty('fixer.diff');
    const view = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json();
    expect(
      view.logs.find((l: { step: string; status: string }) => l.step === 'planner' && l.status === 'done').output,
    ).toEqual({
      summary: 'only a summary',
    });
  });
});
