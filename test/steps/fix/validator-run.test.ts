import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { productionSteps } from '../../../src/runtime/step-registry.js';
import type { RegistryStep } from '../../../src/steps/step.js';
import { checkoutDiff } from '../../../src/checkout/diff.js';
import { type Worker, startWorker } from '../../../src/engine/worker.js';
import { createTask, recordingSteps, waitForStatus } from '../../support/engine.js';
import { type Harness, newAccount, startHarness } from '../../support/harness.js';
import { fixerOutput } from '../../support/step-outputs.js';

let h: Harness;
let worker: Worker;

beforeAll(async () => {
  h = await startHarness({}, { scm: 'fake' });
});
afterAll(async () => {
  await worker?.stop();
  await h.close();
});

const FILES = {
  'package.json': JSON.stringify({ name: 'calc', version: '1.0.0', scripts: { test: 'node --test' } }),
  'calc.js': 'exports.add = (a, b) => a + b;\n',
  'test/calc.test.js':
    "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = " +
    "require('../calc.js');\ntest('adds', () => assert.strictEqual(add(2, 2), 4));\n",
};

describe('the production validator in a run', { timeout: 120_000 }, () => {
  it(
    'runs the repository’s tests in the sandbox on the run’s checkout; a regression sends the fixer back, a ' +
      'good fix passes',
    async () => {
      h.github.createRepo('acme', 'calc', { files: FILES });
      let attempt = 0;
      const fixer: RegistryStep = async (_p, helpers) => {
        attempt++;
        const ws = await helpers.checkout();
        // first attempt breaks add(); the retry repairs it and adds a feature
        const body =
          attempt === 1
            ? 'exports.add = (a, b) => a - b;\n'
            : 'exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n';
        writeFileSync(join(ws.dir, 'calc.js'), body);
        const diff = await checkoutDiff({ dataDir: h.deps.config.dataDir, log: h.deps.log }, ws);
        return { output: fixerOutput(diff), patch: { changed: true, diffSummary: diff } };
      };
      const { steps, calls } = recordingSteps({ fixer, validator: productionSteps().validator });
      worker = await startWorker(h.deps, steps, {
        concurrency: 1,
        heartbeatMs: 500,
        staleMs: 10_000,
        maintenanceMs: 60_000,
      });
      const { auth } = await newAccount(h, { plan: 'pro', credits: 1 });
      const id = await createTask(h, auth, { prompt: 'add mul', repo_url: `${h.github.webUrl}/acme/calc` });
      const done = await waitForStatus(h, id, 'done', 100_000);
      expect(done.retryCount).toBe(1);
      expect(calls.map((c) => c.step)).toEqual([
        'planner',
        'locator',
        'inspector',
        'fixer',
        'validator',
        'fixer',
        'validator',
        'pr',
      ]);
      const logs = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().logs as {
        step: string;
        status: string;
        output: Record<string, unknown>;
      }[];
      const validations = logs.filter((l) => l.step === 'validator' && l.status !== 'running');
      expect(validations.map((l) => l.status)).toEqual(['failed', 'done']);
      expect(validations[0]!.output).toMatchObject({
        passed: false,
        new_failures: ['adds'],
        command: expect.stringContaining('npm test'),
      });
      expect(validations[1]!.output).toMatchObject({ passed: true, new_failures: [], preexisting_failures: [] });
      // the second fixer saw the first validation's failure
      expect(calls.filter((c) => c.step === 'fixer')[1]!.failure).toMatchObject({ new_failures: ['adds'] });
    },
  );
});
