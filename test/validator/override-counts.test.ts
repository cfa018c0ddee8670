import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { validate } from '../../src/validator/validate.js';
import { fixtureRepo, fixtureSandbox, removeFixtureRepos } from '../support/fixture-repos.js';

// A test command from the repository's settings or `.emend/test` runs as written, without the flags
// that make a runner name each test: its counts come from the runner's own totals, or are unknown.
describe('test counts of a command that was not detected', { timeout: 60_000 }, () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await fixtureSandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'off' });
  });
  afterAll(() => removeFixtureRepos());

  const pytestRepo = (extra: Record<string, string> = {}) =>
    fixtureRepo(
      {
        'test_calc.py': 'def test_adds():\n    assert 1 + 1 == 2\n\ndef test_subtracts():\n    assert 2 - 1 == 1\n',
        'calc.py': 'X = 1\n',
        ...extra,
      },
      { 'calc.py': 'X = 2\n' },
    );

  it("counts a 2-test pytest repository's tests from pytest's totals with the command from the settings", async () => {
    const repo = pytestRepo();
    const out = await validate(sandbox, {
      dir: repo.dir,
      base: repo.base,
      settings: { testCommand: 'python3 -m pytest' },
    });
    expect(out.log_tail).toMatch(/2 passed/);
    expect(out).toMatchObject({ source: 'setting', passed: true, command: 'python3 -m pytest' });
    expect(out.tests).toEqual({ passed: 2, failed: 0, skipped: 0 });
  });

  it('counts from .emend/test too, a failure among the passes included', async () => {
    const repo = pytestRepo({ '.emend/test': 'python3 -m pytest -q\n' });
    // the change breaks one of the two tests
    writeFileSync(
      `${repo.dir}/test_calc.py`,
      'def test_adds():\n    assert 1 + 1 == 3\n\ndef test_subtracts():\n    assert 2 - 1 == 1\n',
    );
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base });
    expect(out).toMatchObject({ source: 'repo-file', passed: false });
    expect(out.tests).toEqual({ passed: 1, failed: 1, skipped: 0 });
  });

  it("counts a node repository's tests where its output names or totals them, and leaves the counts out where nothing does", async () => {
    const tests =
      "const test = require('node:test');\nconst assert = require('node:assert');\n" +
      "test('one', () => assert.ok(true));\ntest('two', () => assert.ok(true));\ntest.skip('three', () => {});\n";
    const repo = fixtureRepo(
      { 'package.json': '{"name":"f","scripts":{"test":"node --test"}}', 'test/a.test.js': tests, 'lib.js': '1;\n' },
      { 'lib.js': '2;\n' },
    );
    // node's TAP totals (`# pass 2`) beside ids the tap parser reads: the same count
    const tap = await validate(sandbox, {
      dir: repo.dir,
      base: repo.base,
      settings: { testCommand: 'node --test --test-reporter=tap' },
    });
    expect(tap).toMatchObject({ source: 'setting', passed: true });
    expect(tap.tests).toEqual({ passed: 2, failed: 0, skipped: 1 });

    // the dot reporter names no test and prints no total: unknown, which is not zero
    const dots = await validate(sandbox, {
      dir: repo.dir,
      base: repo.base,
      settings: { testCommand: 'node --test --test-reporter=dot' },
    });
    expect(dots.log_tail).toContain('...');
    expect(dots).toMatchObject({ source: 'setting', passed: true });
    expect(dots.tests).toBeUndefined();

    // a plain script that prints nothing countable: unknown, which is not zero
    const plain = await validate(sandbox, {
      dir: repo.dir,
      base: repo.base,
      settings: { testCommand: "node -e \"require('assert').ok(true); console.log('all good')\"" },
    });
    expect(plain).toMatchObject({ source: 'setting', passed: true });
    expect(plain.tests).toBeUndefined();
  });
});
