import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import type { Deps } from '../../src/deps.js';
import { createOutbound } from '../../src/outbound/outbound.js';
import type { FixPayload, StepHelpers } from '../../src/steps/step.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import type { Task } from '../../src/tasks/service.js';
import { type ValidatorCheckout, validatorStep } from '../../src/steps/fix/validator.js';
import {
  fixtureSandbox,
  jsFailingTest,
  noTests,
  preexistingFixesA,
  removeFixtureRepos,
  separateGitDir,
} from '../support/fixture-repos.js';

/** A fix payload; `retryCount` is the task's retries so far (two is the last the step loop allows). */
function payload(outputs: FixPayload['outputs'] = {}, retryCount = 0): FixPayload {
  return { kind: 'fix', task: { id: 'task-1', retryCount } as Task, outputs, retry: retryCount };
}

/** The helpers a step gets from the runner, with the sandbox and the configuration in deps and the run's checkout. */
function helpers(
  sandbox: Sandbox,
  checkout: ValidatorCheckout,
  signal = new AbortController().signal,
  env: Record<string, string> = {},
) {
  const logged: string[] = [];
  const h = {
    // outbound: the toolchain cache fetches through it (nothing here asks for another node)
    deps: { sandbox, config: loadConfig(env), outbound: createOutbound([]) } as unknown as Deps,
    signal,
    log: (message: string) => logged.push(message),
    spawn: () => {
      throw new Error('the validator starts nothing outside the sandbox');
    },
    checkout: async () => checkout,
    limits: { maxRetries: 2 },
  } as unknown as StepHelpers;
  return { h, logged };
}

describe('the validator step', { timeout: 60_000 }, () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await fixtureSandbox();
  });
  afterAll(() => removeFixtureRepos());

  it(
    'fails the step on a regression in a task checkout (git dir outside the files), and reuses the baseline on ' +
      'a retry',
    async () => {
      const repo = jsFailingTest();
      const gitDir = separateGitDir(repo);
      const checkout = { dir: repo.dir, gitDir, baseCommit: repo.base };
      const step = validatorStep();
      const first = helpers(sandbox, checkout);
      const result = await step(payload(), first.h);
      expect(result.patch).toEqual({ passed: false });
      expect(result.output).toMatchObject({
        passed: false,
        new_failures: ['multiplies'],
        baseline: { commit: repo.base },
      });
      // the per-test timeout is the configured one (EMEND_VALIDATOR_TEST_TIMEOUT_S, 60 s by default)
      expect(result.output.command).toContain('--test-timeout=60000');
      expect(first.logged).toContain('baseline run');

      // The fixer's last retry: the runner hands the previous validator output back in outputs. No
      // retry can follow, so the whole suite runs (no focused pass), on the baseline kept from before.
      const retry = helpers(sandbox, checkout);
      const again = await step(payload({ validator: result.output }, 2), retry.h);
      expect(again.output).toMatchObject({ passed: false, new_failures: ['multiplies'] });
      expect(again.output.pass).toBeUndefined();
      expect(retry.logged).toContain('baseline reused');
      expect(retry.logged).not.toContain('baseline run');

      // A retry another may follow: the focused pass first, whose failure is the verdict.
      const early = helpers(sandbox, checkout);
      const focused = await step(payload({ validator: result.output }, 1), early.h);
      expect(focused.patch).toEqual({ passed: false });
      expect(focused.output).toMatchObject({
        pass: 'focused',
        passed: false,
        new_failures: ['multiplies'],
        focus: { files: [{ path: 'test/math.test.js' }] },
      });
      expect(early.logged).toContain('focused pass');
    },
  );

  it('uses the git dir it is given, whatever `.git` the files hold', async () => {
    const repo = preexistingFixesA();
    const gitDir = separateGitDir(repo);
    // Something that ran on the files replaced the pointer with a repository of its own.
    rmSync(join(repo.dir, '.git'));
    mkdirSync(join(repo.dir, '.git'));
    writeFileSync(join(repo.dir, '.git', 'HEAD'), 'ref: refs/heads/elsewhere\n');
    writeFileSync(join(repo.dir, '.git', 'config'), '[core]\n\tfsmonitor = touch pwned\n');
    const result = await step(validatorStep(), sandbox, { dir: repo.dir, gitDir, baseCommit: repo.base });
    expect(result).toMatchObject({ patch: { passed: true }, output: { passed: true, fixed: ['A'], new_failures: [] } });
    expect(existsSync(join(repo.dir, 'pwned'))).toBe(false);
  });

  it('leaves passed out when there is nothing to validate, so the runner goes on', async () => {
    const repo = noTests();
    const result = await step(validatorStep(), sandbox, { dir: repo.dir, baseCommit: repo.base });
    expect(result.patch).toBeUndefined();
    expect(result.output).toMatchObject({ passed: null, message: 'no test command found', command: null });
  });

  it('passes the remembered test command through its context', async () => {
    const repo = noTests();
    const contextOf = () => ({
      sandbox,
      checkout: { dir: repo.dir, baseCommit: repo.base },
      testCommand: 'cat notes.txt',
    });
    const result = await validatorStep(contextOf)(
      payload(),
      helpers(sandbox, { dir: repo.dir, baseCommit: repo.base }).h,
    );
    expect(result).toMatchObject({
      patch: { passed: true },
      output: { command: 'cat notes.txt', source: 'memory', passed: true },
    });
    expect(result.output.log_tail).toContain('still nothing');
  });

  it('gives each test the configured timeout (EMEND_VALIDATOR_TEST_TIMEOUT_S)', async () => {
    const repo = jsFailingTest();
    const configured = helpers(sandbox, { dir: repo.dir, baseCommit: repo.base }, undefined, {
      EMEND_VALIDATOR_TEST_TIMEOUT_S: '7',
    });
    const result = await validatorStep()(payload(), configured.h);
    expect(result.output.command).toContain('--test-timeout=7000');
  });

  it('stops when the task is killed', async () => {
    const repo = jsFailingTest();
    const kill = new AbortController();
    kill.abort();
    await expect(
      validatorStep()(payload(), helpers(sandbox, { dir: repo.dir, baseCommit: repo.base }, kill.signal).h),
    ).rejects.toThrow('the validator was stopped (task killed)');
  });
});

function step(fn: ReturnType<typeof validatorStep>, sandbox: Sandbox, checkout: ValidatorCheckout) {
  return fn(payload(), helpers(sandbox, checkout).h);
}
