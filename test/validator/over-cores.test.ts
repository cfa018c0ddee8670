import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import type { TestRecipe } from '../../src/environments/detect.js';
import { ValidatorOutput } from '../../src/step-contract/fix.js';
import type { TestRun } from '../../src/test-runs/run.js';
import { DbBaselineStore } from '../../src/validator/baseline-store.js';
import { notConclusive, overCoresCommand, overCoresRefusal } from '../../src/validator/over-cores.js';
import { TestRunSlots } from '../../src/validator/run-slots.js';
import { validate } from '../../src/validator/validate.js';
import { type Files, changeTo, fixtureRepo } from '../support/fixture-repos.js';
import { recordingSandbox } from '../support/recording-sandbox.js';
import { onlineProjects } from '../support/setup-network.js';
import { openTestDatabase } from '../support/test-db.js';

/*
 * The change's whole suite over the free cores (docs/validator.md, "One suite over several cores"):
 * the rules, then real mocha (installed from the npm registry through the egress proxy once, the
 * file's environment cache sharing the install) in the real bubblewrap sandbox, the kept baselines
 * in PGlite. What ran is read from the sandbox's record of its commands.
 */

const MOCHA: Pick<TestRecipe, 'perTest' | 'command'> = { perTest: { kind: 'mocha' }, command: 'npm test' };

describe('when the whole suite may run over several processes', () => {
  it('only under mocha 8 or later, started by the script itself, without an option that needs one process', () => {
    expect(overCoresRefusal(MOCHA, 'mocha --require test/env.js test/', 10)).toBeUndefined();
    expect(overCoresRefusal(MOCHA, 'npm run lint && NODE_ENV=test _mocha test/unit', 8)).toBeUndefined();
    expect(overCoresRefusal({ perTest: { kind: 'jest' } }, 'jest', 29)).toMatch(/only mocha/);
    expect(overCoresRefusal(MOCHA, 'mocha test/', 7)).toBe('mocha 7 has no --parallel (8.0 and later)');
    expect(overCoresRefusal(MOCHA, 'mocha test/', undefined)).toMatch(/version unknown/);
    expect(overCoresRefusal(MOCHA, 'mocha test/ && node check.js', 10)).toMatch(/last command is not mocha/);
    expect(overCoresRefusal(MOCHA, 'nyc mocha test/', 10)).toMatch(/last command is not mocha/);
    expect(overCoresRefusal(MOCHA, undefined, 10)).toMatch(/last command is not mocha/);
    for (const option of ['--bail', '-b', '--file=test/setup.js', '--sort', '--delay', '--parallel', '-j'])
      expect(overCoresRefusal(MOCHA, `mocha ${option} test/`, 10)).toBe(
        `the test script gives mocha ${option.replace(/=.*/, '')}, which runs in one process`,
      );
    // An option's value that only looks like one is not one.
    expect(overCoresRefusal(MOCHA, 'mocha --reporter spec-bail test/', 10)).toBeUndefined();
  });

  it("adds --parallel after the validator's own flags", () => {
    expect(overCoresCommand(MOCHA, 'npm test -- --timeout 60000', 3)).toBe(
      'npm test -- --timeout 60000 --parallel --jobs 3',
    );
    expect(overCoresCommand(MOCHA, 'npm test', 2)).toBe('npm test -- --parallel --jobs 2');
    expect(overCoresCommand({ command: 'mocha' }, 'mocha --timeout 5', 2)).toBe(
      'mocha --timeout 5 --parallel --jobs 2',
    );
  });

  it('stands for the run in one process only with every test of the base commit and no new failure', () => {
    const run = (tests: string[], failures: string[] = [], extra: Partial<TestRun> = {}): TestRun => ({
      outcome: {
        tests: new Map(tests.map((t) => [t, failures.includes(t) ? 'failed' : 'passed'])),
        failures,
        complete: true,
        details: new Map(),
      },
      exitCode: failures.length ? 1 : 0,
      timedOut: false,
      durationMs: 1,
      logTail: '',
      output: '',
      ...extra,
    });
    const base = {
      tests: new Map([
        ['a', 'passed'],
        ['b', 'failed'],
        ['c', 'passed'],
      ] as const),
      failures: ['b'],
    };
    expect(notConclusive(run(['a', 'b', 'c', 'd'], ['b']), base)).toBeUndefined();
    expect(notConclusive(run(['a', 'b', 'c'], ['b', 'c']), base)).toBe(
      '1 test(s) failed there that did not fail on the base commit',
    );
    expect(notConclusive(run(['a', 'b'], ['b']), base)).toBe(
      "1 test(s) of the base commit's run were not among its tests",
    );
    expect(notConclusive(run(['a', 'b', 'c'], ['b'], { timedOut: true }), base)).toBe('it timed out');
  });
});

/** Three test files; when `sharing`, b's test needs a root hook of a's file (a suite that only passes in one process). */
function project(sharing = false): Files {
  const head = "const assert = require('node:assert');\nconst { add, mul } = require('../src/math.js');\n";
  return {
    'package.json': JSON.stringify({
      name: 'mocha-cores',
      version: '1.0.0',
      private: true,
      scripts: { test: 'mocha' },
      devDependencies: { mocha: '10.8.2' },
    }),
    'src/math.js': 'exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n',
    // A root hook of a's file: in one process it runs around every file's tests, under --parallel
    // around its own file's only (mocha's documented difference).
    'test/a.test.js': `${head}${sharing ? 'beforeEach(() => { global.seen = add(1, 1); });\nafterEach(() => { delete global.seen; });\n' : ''}describe('add', () => { it('adds', () => assert.strictEqual(add(2, 3), 5)); });\n`,
    'test/b.test.js': `${head}describe('mul', () => { it('multiplies', () => assert.strictEqual(mul(2, 3), ${sharing ? 'global.seen * 3' : '6'})); });\n`,
    'test/c.test.js': `${head}describe('both', () => { it('adds then multiplies', () => assert.strictEqual(mul(add(1, 1), 2), 4)); });\n`,
  };
}

describe('the change alone beside a kept baseline, with real mocha', { timeout: 240_000 }, () => {
  const online = onlineProjects('https://git.example/mocha-cores');
  const KEY = randomBytes(32);
  const WORKSPACE = randomUUID();
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database?.close();
  });

  /** Validates the repository's working tree, the base commit's run kept in the store; returns what ran. */
  async function validated(dir: string, base: string) {
    const recorded = recordingSandbox(online.sandbox());
    const baselines = new DbBaselineStore({
      db: database.db,
      secretKey: KEY,
      workspace: WORKSPACE,
      repository: 'https://git.example/mocha-cores',
      maxBytes: 16 * 1024 * 1024,
      now: () => new Date(),
    });
    // Two cores whatever the machine: the change's run may take the second.
    const runSlots = new TestRunSlots({
      machine: { cores: 2, memoryBytes: 64 * 2 ** 30 },
      runMemoryBytes: 2 ** 30,
      mode: 'auto',
      isolated: true,
    });
    const logs: string[] = [];
    const out = await validate(
      recorded.sandbox,
      { dir, base },
      { environments: online.environments(), baselines, runSlots, log: (m) => logs.push(m) },
    );
    expect(out.setup, out.log_tail).toMatchObject({ exit_code: 0 });
    expect(ValidatorOutput.parse(JSON.parse(JSON.stringify(out)))).toEqual(out);
    const tests = recorded.runs.filter((r) => r.command.includes('npm test'));
    return { out, change: tests.filter((r) => r.tree === 'change').map((r) => r.command), tests, logs };
  }

  it('runs the change over two processes once the base is kept, and the verdict reads that run', async () => {
    const repo = fixtureRepo(project(), {
      'src/math.js': 'exports.add = (a, b) => b + a;\nexports.mul = (a, b) => a * b;\n',
    });
    const first = await validated(repo.dir, repo.base);
    // The base commit ran here, beside the change: no core was left for more.
    expect(first.out).toMatchObject({ passed: true, baseline: { tests: 3 } });
    expect(first.out.baseline?.reused).toBeUndefined();
    expect(first.tests.map((t) => t.command).join('\n')).not.toContain('--parallel');

    changeTo(repo.dir, { 'src/math.js': 'exports.add = (a, b) => a + b + 0;\nexports.mul = (a, b) => a * b;\n' });
    const second = await validated(repo.dir, repo.base);
    expect(second.out, second.out.log_tail).toMatchObject({
      passed: true,
      new_failures: [],
      tests: { passed: 3, failed: 0 },
      baseline: { reused: { from: 'store' } },
    });
    expect(second.out.message).toContain("the change's whole suite ran in 2 mocha processes at once (--parallel)");
    expect(second.change).toHaveLength(1);
    expect(second.change[0]).toMatch(/ --parallel --jobs 2$/);
    // Nothing ran in the baseline's tree, so the cached environment was never laid there.
    expect(second.tests.filter((t) => t.tree === 'baseline')).toEqual([]);
    expect(second.logs).toContain('environment from the cache');
    expect(second.logs).not.toContain('environment from the cache laid into the baseline tree');
    // The verdict's command stays the suite's own: what a retry's kept baseline is matched by.
    expect(second.out.command).not.toContain('--parallel');

    // A new failure there is not taken from it: the suite runs again in one process, whose failure is the verdict's.
    changeTo(repo.dir, { 'src/math.js': 'exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a - b;\n' });
    const third = await validated(repo.dir, repo.base);
    expect(third.out).toMatchObject({ passed: false, tests: { passed: 1, failed: 2 } });
    expect(third.out.new_failures).toEqual(['both › adds then multiplies', 'mul › multiplies']);
    expect(third.out.message).toContain(
      "the change's run in 2 mocha processes at once was not conclusive (2 test(s) failed there that did not fail on the base commit), so the suite ran again in one",
    );
    // Each new failure failed in both runs of the change's tree: they are its two runs, no third.
    expect(third.change).toHaveLength(2);
    expect(third.change[0]).toMatch(/ --parallel --jobs 2$/);
    expect(third.change[1]).not.toContain('--parallel');
    expect(third.out.reruns).toEqual([
      { test: 'both › adds then multiplies', change: ['failed', 'failed'], baseline: ['passed'] },
      { test: 'mul › multiplies', change: ['failed', 'failed'], baseline: ['passed'] },
    ]);
    expect(third.out.flaky).toEqual([]);
  });

  it('runs a suite again in one process when its files need each other', async () => {
    const repo = fixtureRepo(project(true));
    await validated(repo.dir, repo.base);
    changeTo(repo.dir, { 'src/math.js': 'exports.add = (a, b) => a + b + 0;\nexports.mul = (a, b) => a * b;\n' });
    const { out, change } = await validated(repo.dir, repo.base);
    // b's test reads what a's root hook sets: under --parallel the hook is a's alone, so one process decides.
    expect(out, out.log_tail).toMatchObject({ passed: true, new_failures: [], tests: { passed: 3, failed: 0 } });
    expect(out.message).toContain(
      "the change's run in 2 mocha processes at once was not conclusive (1 test(s) failed there that did not fail on the base commit), so the suite ran again in one",
    );
    expect(change).toHaveLength(2);
    expect(change[0]).toMatch(/--parallel/);
    expect(change[1]).not.toMatch(/--parallel/);
  });
});
