import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { ValidatorOutput } from '../../src/step-contract/fix.js';
import { type ValidateOptions, validate } from '../../src/validator/validate.js';
import { type Files, fixtureRepo, fixtureSandbox, removeFixtureRepos } from '../support/fixture-repos.js';
import { recordingSandbox } from '../support/recording-sandbox.js';

/*
 * The focused pass on a fixer retry (docs/validator.md, "The focused pass"), end to end in the real
 * bubblewrap sandbox on a node --test fixture: which test runs happened is read from the sandbox's
 * record of its commands.
 */

const pkg = JSON.stringify({ name: 'fixture', version: '1.0.0', private: true, scripts: { test: 'node --test' } });
const BASE: Files = {
  'package.json': pkg,
  'src/math.js': 'exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n',
  'src/words.js': 'exports.upper = (s) => s.toUpperCase();\n',
  'test/math.test.js':
    "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add, mul } = require('../src/math.js');\n" +
    "test('adds', () => assert.strictEqual(add(2, 3), 5));\ntest('multiplies', () => assert.strictEqual(mul(2, 3), 6));\n",
  'test/words.test.js':
    "const test = require('node:test');\nconst assert = require('node:assert');\nconst { upper } = require('../src/words.js');\n" +
    "test('uppers', () => assert.strictEqual(upper('a'), 'A'));\n",
  // Reads the module as text, imports nothing: only the whole suite sees it.
  'test/size.test.js':
    "const test = require('node:test');\nconst assert = require('node:assert');\nconst fs = require('node:fs');\n" +
    "test('math stays small', () => assert.ok(fs.readFileSync(__dirname + '/../src/math.js', 'utf8').length < 100));\n",
};

describe('the focused pass on a fixer retry', { timeout: 90_000 }, () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await fixtureSandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'off' });
  });
  afterAll(() => removeFixtureRepos());

  async function run(change: Files, options: ValidateOptions) {
    const repo = fixtureRepo(BASE, change);
    const recorded = recordingSandbox(sandbox);
    const out = await validate(recorded.sandbox, { dir: repo.dir, base: repo.base }, options);
    expect(ValidatorOutput.parse(JSON.parse(JSON.stringify(out)))).toEqual(out);
    // The test runs: the commands that ran the test script, per tree.
    const tests = recorded.runs.filter((r) => r.command.includes('npm test'));
    return { out, tests };
  }

  it('gives the focused verdict when the files the change touches fail, and never runs the whole suite', async () => {
    const { out, tests } = await run(
      { 'src/math.js': 'exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a + b;\n' },
      { pass: 'focused', lastFailures: [{ id: 'uppers', file: 'test/words.test.js' }] },
    );
    expect(out).toMatchObject({
      pass: 'focused',
      passed: false,
      new_failures: ['multiplies'],
      focus: {
        files: [
          { path: 'test/words.test.js', reason: 'failed last time' },
          { path: 'test/math.test.js', reason: 'imports a changed module' },
        ],
        passed: false,
      },
    });
    expect(out.command).toContain("'test/math.test.js'");
    expect(out.message).toContain(
      'focused pass: 2 test file(s) the change touches first failed, so the whole suite was not run',
    );
    // The focused command on each tree (and the suspect's re-run on each), and nothing else: the
    // whole suite (math stays small) never ran.
    expect(tests.map((t) => t.tree).sort()).toEqual(['baseline', 'baseline', 'change', 'change']);
    for (const t of tests) expect(t.command).toContain("'test/words.test.js' 'test/math.test.js'");
    expect(out.tests).toEqual({ passed: 2, failed: 1, skipped: 0 });
    expect(out.baseline?.tests).toBe(3);
  });

  it('goes on to the whole suite when the focused pass passes, and that verdict decides', async () => {
    const { out, tests } = await run(
      {
        'src/math.js':
          'exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n// a comment long enough to make this module larger than its size test allows, which only the whole suite sees\n',
      },
      { pass: 'focused' },
    );
    expect(out).toMatchObject({
      pass: 'full',
      passed: false,
      new_failures: ['math stays small'],
      focus: { files: [{ path: 'test/math.test.js', reason: 'imports a changed module' }], passed: true },
    });
    expect(out.message).toContain('focused pass: 1 test file(s) the change touches first passed; the whole suite ran');
    expect(out.tests).toEqual({ passed: 3, failed: 1, skipped: 0 });
    // The focused run on each tree, then the whole suite (and the suspect's re-run) on them.
    const focused = tests.filter((t) => t.command.includes("'test/math.test.js'"));
    const whole = tests.filter((t) => !t.command.includes("'test/math.test.js'"));
    expect(focused.map((t) => t.tree).sort()).toEqual(['baseline', 'change']);
    expect(whole.filter((t) => t.tree === 'change').length).toBeGreaterThanOrEqual(1);
    expect(whole.filter((t) => t.tree === 'baseline').length).toBeGreaterThanOrEqual(1);
  });

  it('without a focused pass asked for, runs the whole suite and says no pass', async () => {
    const { out, tests } = await run(
      { 'src/math.js': 'exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a + b;\n' },
      {},
    );
    expect(out.pass).toBeUndefined();
    expect(out.focus).toBeUndefined();
    expect(out.new_failures).toEqual(['multiplies']);
    expect(tests.every((t) => !t.command.includes("'test/"))).toBe(true);
  });
});
