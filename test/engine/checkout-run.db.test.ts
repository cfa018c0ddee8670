import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RegistryStep } from '../../src/steps/step.js';
import { checkoutDiff } from '../../src/checkout/diff.js';
import { type Worker, startWorker } from '../../src/engine/worker.js';
import { TEST_WORKER_TIMINGS, approveGate, createTask, recordingSteps, waitForStatus } from '../support/engine.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { fixerOutput, validatorOutput } from '../support/step-outputs.js';

let h: Harness;
let worker: Worker;
const seen: Record<string, unknown>[] = [];

beforeAll(async () => {
  h = await startHarness({}, { scm: 'fake' });
});
afterAll(async () => {
  await worker?.stop();
  await h.close();
});

describe('a run’s checkout', () => {
  it(
    'is checked out for the steps, carries the fixer’s diff across a gate to a new run on the same base commit, ' +
      'and is removed at the end',
    async () => {
      const { commit: base } = h.github.createRepo('acme', 'app', {
        files: { 'app.py': 'x = 1\n', 'README.md': '# app\n' },
      });
      const inspector: RegistryStep = async (_p, helpers) => {
        const ws = await helpers.checkout();
        seen.push({
          step: 'inspector',
          dir: ws.dir,
          baseCommit: ws.baseCommit,
          app: readFileSync(join(ws.dir, 'app.py'), 'utf8'),
        });
        return { output: {} };
      };
      const fixer: RegistryStep = async (_p, helpers) => {
        const ws = await helpers.checkout();
        writeFileSync(join(ws.dir, 'app.py'), 'x = 2\n');
        writeFileSync(join(ws.dir, 'new_test.py'), 'def test_x(): pass\n');
        const diff = await checkoutDiff({ dataDir: h.deps.config.dataDir, log: h.deps.log }, ws);
        return { output: fixerOutput(diff), patch: { changed: true, diffSummary: diff } };
      };
      const validator: RegistryStep = async (_p, helpers) => {
        const ws = await helpers.checkout();
        seen.push({
          step: 'validator',
          dir: ws.dir,
          baseCommit: ws.baseCommit,
          app: readFileSync(join(ws.dir, 'app.py'), 'utf8'),
          newFile: existsSync(join(ws.dir, 'new_test.py')),
          readme: readFileSync(join(ws.dir, 'README.md'), 'utf8'),
        });
        return { output: validatorOutput(), patch: { passed: true } };
      };
      const { steps } = recordingSteps({ inspector, fixer, validator });
      worker = await startWorker(h.deps, steps, { concurrency: 1, ...TEST_WORKER_TIMINGS });
      const { auth } = await newAccount(h, { plan: 'pro', credits: 1 });
      const id = await createTask(h, auth, {
        prompt: 'make x two',
        repo_url: `${h.github.webUrl}/acme/app`,
        approval_mode: 'manual',
      });
      await waitForStatus(h, id, 'awaiting_plan');
      await approveGate(h, auth, id, { stage: 'plan' });
      const waiting = await waitForStatus(h, id, 'awaiting_diff');
      expect(waiting.diffSummary).toContain('+x = 2');
      const workDir = join(h.deps.config.dataDir, 'work', id);
      // no worker holds the task at the gate: its checkout is gone
      expect(existsSync(workDir)).toBe(false);
      // meanwhile the base branch moves on
      h.github.commit('acme', 'app', { branch: 'main', files: { 'README.md': '# app, changed upstream\n' } });
      await approveGate(h, auth, id, { stage: 'diff' });
      await waitForStatus(h, id, 'done');
      expect(seen[0]).toMatchObject({ step: 'inspector', baseCommit: base, app: 'x = 1\n' });
      expect(seen[1]).toMatchObject({
        step: 'validator',
        baseCommit: base,
        app: 'x = 2\n',
        newFile: true,
        readme: '# app\n',
      });
      expect(existsSync(workDir)).toBe(false);
    },
  );

  it('a worker starting up removes checkouts of tasks that no longer run', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', credits: 1 });
    const id = await createTask(h, auth, { prompt: 'left behind', repo_url: `${h.github.webUrl}/acme/app` });
    await waitForStatus(h, id, 'done');
    const orphan = join(h.deps.config.dataDir, 'work', id, 'tree');
    mkdirSync(orphan, { recursive: true });
    writeFileSync(join(orphan, 'left.txt'), 'from a worker that died\n');
    await worker.stop();
    worker = await startWorker(h.deps, recordingSteps().steps, { concurrency: 1, ...TEST_WORKER_TIMINGS });
    expect(existsSync(join(h.deps.config.dataDir, 'work', id))).toBe(false);
  });
});
