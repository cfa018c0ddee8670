import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, killAll, runCli } from '../cli/cli-process.js';
import {
  commitAll,
  fixtureRepo,
  jsFailingTest,
  noTests,
  preexistingFixesA,
  removeFixtureRepos,
  writeFiles,
} from '../support/fixture-repos.js';

// `emend validate` as a user runs it: the CLI process, the configured (bubblewrap) sandbox.
describe('emend validate', { timeout: 90_000, concurrent: true }, () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  // Made in beforeAll: the body of a skipped describe still runs, its hooks do not.
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'emend-validate-cli-'));
    env = cliEnv({ EMEND_DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await killAll();
    removeFixtureRepos();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints the result as JSON and exits 1 on a regression in the working tree', async () => {
    const repo = jsFailingTest();
    const exit = await runCli(['validate', '--repo', repo.dir, '--json'], env);
    expect(exit.code, exit.stderr).toBe(1);
    const out = JSON.parse(exit.stdout);
    expect(out).toMatchObject({
      passed: false,
      new_failures: ['multiplies'],
      fixed: [],
      preexisting_failures: [],
      setup: null,
      baseline: { commit: repo.base },
    });
    expect(Object.keys(out)).toEqual(
      expect.arrayContaining([
        'command',
        'setup',
        'passed',
        'new_failures',
        'fixed',
        'preexisting_failures',
        'duration_ms',
        'log_tail',
      ]),
    );
  });

  it('prints the counts pytest totals for a command from .emend/test, and says when nothing counts the tests', async () => {
    const repo = fixtureRepo(
      {
        '.emend/test': 'python3 -m pytest\n',
        'test_calc.py': 'def test_adds():\n    assert 1 + 1 == 2\n\ndef test_subtracts():\n    assert 2 - 1 == 1\n',
        'calc.py': 'X = 1\n',
      },
      { 'calc.py': 'X = 2\n' },
    );
    const exit = await runCli(['validate', '--repo', repo.dir], env);
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stdout).toContain('command:  python3 -m pytest  [repo-file, pytest]');
    expect(exit.stdout).toContain('tests:    2 passed, 0 failed, 0 skipped');
    // a command whose output counts nothing (.emend/test is read from the unmodified tree: a repository of its own)
    const quiet = fixtureRepo({ '.emend/test': "python3 -c 'print(1)'\n", 'a.py': 'A = 1\n' }, { 'a.py': 'A = 2\n' });
    const plain = await runCli(['validate', '--repo', quiet.dir], env);
    expect(plain.stdout).toContain('tests:    not counted (the output names no test and has no total a runner prints)');
  });

  it('prints a summary for a person and exits 0 when the change fixes a test', async () => {
    const repo = preexistingFixesA();
    const exit = await runCli(['validate', '--repo', repo.dir], env);
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stdout).toContain('result:   PASSED: no new failures, 1 fixed');
    expect(exit.stdout).toMatch(/fixed \(failing before, passing now\):\n {2}- A/);
    expect(exit.stdout).toMatch(/baseline: HEAD \([0-9a-f]{12}\), 1 failing/);
    expect(exit.stdout).toContain('repro:    no reproduction test: the change adds or modifies no test file');
  });

  it("exits 1 with the reason when the change's test does not fail on the base commit", async () => {
    const repo = preexistingFixesA();
    // a test that passes on the unmodified code as well: it reproduces nothing
    writeFiles(repo.dir, {
      'test/b.test.js':
        "const test = require('node:test');\nconst assert = require('node:assert');\n" +
        "const { b } = require('../src/lib.js');\ntest('B again', () => assert.strictEqual(b(), 'b'));\n",
    });
    const exit = await runCli(['validate', '--repo', repo.dir], env);
    expect(exit.code, exit.stderr).toBe(1);
    expect(exit.stdout).toContain(
      "result:   FAILED: the change's tests (test/b.test.js) pass on the base commit too: they do not reproduce",
    );
  });

  it('takes the baseline from --base', async () => {
    const repo = jsFailingTest();
    commitAll(repo.dir);
    const againstHead = await runCli(['validate', '--repo', repo.dir, '--json'], env);
    expect(againstHead.code, againstHead.stderr).toBe(0);
    expect(JSON.parse(againstHead.stdout)).toMatchObject({ passed: true, preexisting_failures: ['multiplies'] });
    const againstBase = await runCli(['validate', '--repo', repo.dir, '--base', repo.base], env);
    expect(againstBase.code, againstBase.stderr).toBe(1);
    expect(againstBase.stdout).toContain('result:   FAILED: 1 new failure');
    expect(againstBase.stdout).toContain('not ok 2 - multiplies');
  });

  it('says "no test command found" and exits 0 for a repository without tests', async () => {
    const repo = noTests();
    const exit = await runCli(['validate', '--repo', repo.dir, '--json'], env);
    expect(exit.code, exit.stderr).toBe(0);
    expect(JSON.parse(exit.stdout)).toMatchObject({ command: null, passed: null, message: 'no test command found' });
    const text = await runCli(['validate', '--repo', repo.dir], env);
    expect(text.stdout.trim()).toBe('no test command found: nothing to validate');
  });

  it('gives --setup-env variables to the setup phase only', async () => {
    const repo = fixtureRepo({
      'package.json': JSON.stringify({ name: 'fixture', private: true, scripts: { test: 'node --test' } }),
      // Setup fails without the variable; the test fails if the test phase has it.
      '.emend/setup': 'test "$REGISTRY_HINT" = "index-at-9" || { echo "REGISTRY_HINT missing" >&2; exit 3; }\n',
      'test/env.test.js':
        "const test = require('node:test');\nconst assert = require('node:assert');\n" +
        "test('test phase lacks it', () => assert.strictEqual(process.env.REGISTRY_HINT, undefined));\n",
    });
    const withIt = await runCli(
      ['validate', '--repo', repo.dir, '--json', '--setup-env', 'REGISTRY_HINT=index-at-9'],
      env,
    );
    expect(withIt.code, withIt.stderr).toBe(0);
    expect(JSON.parse(withIt.stdout)).toMatchObject({ passed: true, setup: { exit_code: 0 }, tests: { passed: 1 } });
    const without = await runCli(['validate', '--repo', repo.dir, '--json'], env);
    expect(JSON.parse(without.stdout)).toMatchObject({ setup: { exit_code: 3 } });
    const bad = await runCli(['validate', '--repo', repo.dir, '--setup-env', '1NOPE=x'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--setup-env wants NAME=VALUE, got "1NOPE=x"');
  });

  it('refuses what it cannot validate with a message', async () => {
    const notRepo = await runCli(['validate', '--repo', dataDir], env);
    expect(notRepo.code).toBe(1);
    expect(notRepo.stderr).toContain(`${dataDir} is not a git checkout`);
    const repo = noTests();
    const badRev = await runCli(['validate', '--repo', repo.dir, '--base', 'nope'], env);
    expect(badRev.code).toBe(1);
    expect(badRev.stderr).toContain('nope does not name a commit');
    const noRepo = await runCli(['validate', '--json'], env);
    expect(noRepo.code).toBe(2);
    expect(noRepo.stderr).toContain('validate needs --repo');
    expect(noRepo.stderr).toContain(
      'usage: emend validate --repo DIR [--base REV] [--json] [--setup-env NAME=VALUE]...',
    );
  });
});
