import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BILLING_PLANS } from '../../src/billing/billing-plan.js';
import { taskLogs } from '../../src/db/schema.js';
import { type StepLoop, type TaskStore, runLoop } from '../../src/engine/step-loop.js';
import { ProcessSet } from '../../src/processes/process-set.js';
import type { StepDescriptor } from '../../src/step-contract/index.js';
import { setupOutputToTaskLog } from '../../src/steps/fix/setup-stream.js';
import type { RegistryStep } from '../../src/steps/step.js';
import {
  createTask,
  insertJoblessTask,
  recordingSteps,
  taskRow,
  waitForStatus,
  workerPerTest,
} from '../support/engine.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { fixerOutput } from '../support/step-outputs.js';

let h: Harness;
const workers = workerPerTest(() => h);
beforeAll(async () => {
  h = await startHarness();
  h.github.createRepo('psf', 'requests');
});
afterAll(() => h.close());

/**
 * A step that reports as the validator and the agent fixer do: setup output through the setup
 * stream (a plain log line is not reported), then a record of its own once the stream is drained.
 */
const reportingStep =
  (output: () => Record<string, unknown>): RegistryStep =>
  async (_payload, helpers) => {
    const stream = setupOutputToTaskLog(helpers);
    stream.log('setup output', { text: 'first line\n' });
    stream.log('installing', { text: 'not a setup output record' });
    stream.log('setup output', { text: 'second line\n' });
    await stream.drain();
    await helpers.report({ agent_turn: { turn: 1, tool: 'submit' } });
    return { output: output() };
  };

const REPORTED = [
  { setup_output: 'first line\n' },
  { setup_output: 'second line\n' },
  { agent_turn: { turn: 1, tool: 'submit' } },
];

// Issue 43, point 4: a step's progress records go through the step loop's store (helpers.report),
// so a driver with its store in memory (the eval) gets them without a task log in a database.
describe("a step's reports", () => {
  it("reach the loop's store, between the step's start and end records, and write no task log", async () => {
    const REPORTER = {
      name: 'reporter',
      kinds: {
        fix: { output: z.object({ reported: z.number() }), component: 'ReporterOutput' },
        scaffold: { skip: 'not for sites' },
      },
      model: false,
    } as const satisfies StepDescriptor;
    const { workspace } = await newAccount(h, { plan: 'pro', credits: 1, scm: false });
    // A task row that no worker runs: a step writing the task's log itself would have its rows.
    const task = await taskRow(h, await insertJoblessTask(h, workspace.id, { status: 'running' }));
    const seen: string[] = [];
    const store: TaskStore = {
      save: async () => {},
      log: async (entry) => {
        seen.push(`${entry.step}:${entry.status}`);
      },
      report: async (record) => {
        seen.push(`${record.step} reported ${JSON.stringify(record.output)}`);
      },
      park: async () => {
        throw new Error('no gates here');
      },
      end: async (end) => {
        seen.push(`end:${end.status}`);
      },
    };
    const processes = new ProcessSet();
    const loop: StepLoop = {
      deps: h.deps,
      pipeline: [REPORTER],
      steps: { reporter: reportingStep(() => ({ reported: 3 })) },
      task,
      progress: { outputs: {}, next: 'reporter', approved: {} },
      signal: new AbortController().signal,
      spawn: processes.spawn,
      checkout: () => Promise.reject(new Error('no checkout here')),
      demo: false,
      limits: BILLING_PLANS.pro,
      billingPlan: 'pro',
      store,
    };
    expect(await runLoop(loop)).toBe('done');
    expect(seen).toEqual([
      'reporter:running',
      ...REPORTED.map((output) => `reporter reported ${JSON.stringify(output)}`),
      'reporter:done',
      'end:done',
    ]);
    expect(await h.deps.db.select().from(taskLogs).where(eq(taskLogs.taskId, task.id))).toEqual([]);
  });

  it("are the runner's `running` rows of the step, in order, before its end row, without the claim", async () => {
    const { steps } = recordingSteps({
      fixer: reportingStep(() => fixerOutput('--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n')),
    });
    await workers.start(steps, { concurrency: 1 });
    const { auth } = await newAccount(h, { plan: 'pro', credits: 1 });
    const id = await createTask(h, auth);
    await waitForStatus(h, id, 'done');
    const view = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json();
    const fixer = (view.logs as { step: string; status: string; input: object; output: object }[]).filter(
      (l) => l.step === 'fixer',
    );
    expect(fixer.map((l) => l.status)).toEqual(['running', 'running', 'running', 'running', 'done']);
    // The step's start row names the claim that ran it; the reports are the step's output alone.
    expect(fixer[0]!.input).toMatchObject({ retry: 0, round: 0, attempt: 1 });
    expect(fixer.slice(1, 4)).toEqual(REPORTED.map((output) => expect.objectContaining({ input: {}, output })));
  });
});
