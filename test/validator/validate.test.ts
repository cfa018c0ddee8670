import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { NotACheckoutError } from '../../src/environments/copies.js';
import { ValidatorOutput } from '../../src/step-contract/fix.js';
import { validate as validateOnly } from '../../src/validator/validate.js';
import {
  commitAll,
  fixtureRepo,
  fixtureSandbox,
  jsFailingTest,
  jsFailureExitsZero,
  jsHangingTest,
  jsLocalDependency,
  jsMissingDependency,
  noTests,
  preexistingBreaksB,
  preexistingFixesA,
  pythonHangingTest,
  pythonPytest,
  quixBugsHang,
  removeFixtureRepos,
  writeFiles,
} from '../support/fixture-repos.js';

// The validator end to end: fixture repositories in temp dirs, every command in the real
// bubblewrap sandbox. No database: the pglite project runs these once.

/** Host processes whose name (/proc/PID/comm) or command line holds `marker`. */
function processesMarked(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const comm = readFileSync(`/proc/${pid}/comm`, 'utf8');
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (comm.includes(marker) || cmdline.includes(marker)) found.push(`${pid}: ${comm.trim()} ${cmdline}`);
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/** Runs `validate` while looking for the marked processes every 100 ms: were they there, and are they gone after? */
async function validateWatchingProcesses(marker: string, run: () => ReturnType<typeof validate>) {
  const seen = new Set<string>();
  const look = setInterval(() => {
    for (const p of processesMarked(marker)) seen.add(p.split(' ')[1]!);
  }, 100);
  const started = performance.now();
  try {
    const out = await run();
    return { out, elapsedMs: performance.now() - started, seen, left: processesMarked(marker) };
  } finally {
    clearInterval(look);
  }
}

/**
 * Every validation here is also read back as the fixer's retry and the task's presenter read it
 * (the step contract's parse): what the validator reports must come back whole, so a field it
 * reports without the contract's schema (which the parse would drop) fails whichever test made it.
 */
async function validate(...args: Parameters<typeof validateOnly>) {
  const out = await validateOnly(...args);
  expect(ValidatorOutput.parse(JSON.parse(JSON.stringify(out)))).toEqual(out);
  return out;
}

describe('the validator on fixture repositories', { timeout: 60_000 }, () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    // Setup without network: these fixtures show the offline installs (the proxy's: test/sandbox/egress*).
    sandbox = await fixtureSandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'off' });
  });
  afterAll(() => removeFixtureRepos());

  it('reports the test a change breaks in a JavaScript repository (node --test)', async () => {
    const repo = jsFailingTest();
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base });
    expect(out).toMatchObject({
      passed: false,
      new_failures: ['multiplies'],
      fixed: [],
      preexisting_failures: [],
      setup: null,
      source: 'detected',
      runner: 'node',
      tests: { passed: 1, failed: 1, skipped: 0 },
      baseline: { commit: repo.base, failures: [], tests: 2, exit_code: 0 },
    });
    expect(out.command).toMatch(/^npm test -- --test-reporter=tap --test-timeout=\d+/);
    expect(out.log_tail).toContain('not ok 2 - multiplies');
    // paths in the output are the checkout's, not the sandbox's or the temp copy's
    expect(out.log_tail).not.toMatch(/\/workspace|emend-validate-/);
    expect(out.duration_ms).toBeGreaterThan(0);
    // the checkout itself is left as it was
    expect(readFileSync(join(repo.dir, 'src/math.js'), 'utf8')).toContain('a + b;\n');
  });

  it("builds the package before its tests where they load the build, in each tree, from that tree's sources", async () => {
    // As highlight.js's tests `require('../build')`: the entry point is made by `npm run build`.
    const base = {
      'package.json': JSON.stringify({
        name: 'built',
        main: './build/index.js',
        scripts: { build: 'node tools/build.js', test: 'node --test test/' },
      }),
      '.gitignore': 'build/\n',
      'tools/build.js':
        "const fs = require('node:fs');\nfs.mkdirSync('build', { recursive: true });\n" +
        "fs.copyFileSync('src/index.js', 'build/index.js');\n",
      'src/index.js': 'exports.add = (a, b) => a + b;\n',
      'test/add.test.js':
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../build');\n" +
        "test('adds', () => assert.strictEqual(add(1, 2), 3));\n",
    };
    const broken = fixtureRepo(base, { 'src/index.js': 'exports.add = (a, b) => a - b;\n' });
    const out = await validate(sandbox, { dir: broken.dir, base: broken.base });
    expect(out.command).toMatch(
      /^\{ \[ -e 'build\/index\.js' \] \|\| npm run build \|\| echo '[^']*' >&2; \} && npm test\b/,
    );
    expect(out, out.log_tail).toMatchObject({
      passed: false,
      new_failures: ['adds'],
      baseline: { failures: [], tests: 1 },
    });
    const fine = fixtureRepo(base, { 'src/index.js': 'exports.add = (a, b) => b + a;\n' });
    expect(await validate(sandbox, { dir: fine.dir, base: fine.base })).toMatchObject({
      passed: true,
      tests: { passed: 1, failed: 0, skipped: 0 },
    });
  });

  it('runs the tests when the build before them fails, saying so: they load the sources', async () => {
    // As dayjs's: its entry point is the bundle, its build a bundler that fails on today's Node,
    // its tests require('../src').
    const base = {
      'package.json': JSON.stringify({
        name: 'bundled',
        main: 'bundle.min.js',
        scripts: { build: 'node tools/bundle.js', test: 'node --test test/' },
      }),
      'tools/bundle.js':
        "console.error('Error: error:0308010C:digital envelope routines::unsupported');\nprocess.exit(1);\n",
      'src/index.js': 'exports.add = (a, b) => a + b;\n',
      'test/add.test.js':
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('../src');\n" +
        "test('adds', () => assert.strictEqual(add(1, 2), 3));\n",
    };
    const broken = fixtureRepo(base, { 'src/index.js': 'exports.add = (a, b) => a - b;\n' });
    const out = await validate(sandbox, { dir: broken.dir, base: broken.base });
    expect(out, out.log_tail).toMatchObject({ passed: false, new_failures: ['adds'], baseline: { failures: [] } });
    expect(out.log_tail).toContain('emend: npm run build failed (above); the tests run without it');
    const fine = fixtureRepo(base, { 'src/index.js': 'exports.add = (a, b) => b + a;\n' });
    expect(await validate(sandbox, { dir: fine.dir, base: fine.base })).toMatchObject({
      passed: true,
      tests: { passed: 1, failed: 0, skipped: 0 },
    });
  });

  it('fails a run that prints "Assertion failed" and exits 0', async () => {
    const repo = jsFailureExitsZero();
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base });
    expect(out).toMatchObject({
      passed: false,
      command: 'npm test',
      new_failures: ['(output) Assertion failed: add(2, 2) is 4'],
    });
    expect(out.log_tail).toContain('checks done');
  });

  it('runs pytest on a Python repository', async () => {
    const repo = pythonPytest();
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base });
    expect(out).toMatchObject({
      passed: false,
      runner: 'pytest',
      new_failures: ['test_calc.py::test_sub'],
      tests: { passed: 1, failed: 1 },
    });
    expect(out.command).toMatch(/^python3 -m pytest -v -rA/);
  });

  it('reports a failure present before the change as pre-existing, not as a regression', async () => {
    const repo = preexistingBreaksB();
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base });
    expect(out).toMatchObject({
      passed: false,
      new_failures: ['B'],
      preexisting_failures: ['A'],
      fixed: [],
      baseline: { failures: ['A'] },
    });
  });

  it('does not count as new a failure the base commit’s chained script never reached, and says so', async () => {
    // `npm test` chains two runs with &&: on the base commit the first fails (the bug), so the
    // second never runs there; the fix lets the chain reach it, and its old failure shows.
    const test = (name: string, body: string) =>
      `const test = require('node:test');\nconst assert = require('node:assert');\n` +
      `const { add } = require('../src/add.js');\ntest('${name}', () => { ${body} });\n`;
    const repo = fixtureRepo(
      {
        'package.json': JSON.stringify({
          name: 'chained',
          private: true,
          scripts: { test: 'node --test test/first.test.js && node --test test/second.test.js' },
        }),
        'src/add.js': 'exports.add = (a, b) => a - b;\n',
        // A passing test too: the baseline lists passes, so a test it does not list did not run.
        'test/first.test.js': `${test('adds', 'assert.strictEqual(add(2, 2), 4);')}test('adds zero', () => assert.strictEqual(add(2, 0), 2));\n`,
        'test/second.test.js': test('old failure', 'assert.strictEqual(1, 2);'),
      },
      { 'src/add.js': 'exports.add = (a, b) => a + b;\n' },
    );
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base });
    expect(out).toMatchObject({
      passed: true,
      new_failures: [],
      fixed: ['adds'],
      baseline: { failures: ['adds'] },
    });
    expect(out.message).toBe(
      '1 failing test(s) never ran on the base commit, whose test run stopped at its own failures, so they are not counted as new: old failure',
    );

    // The same failure where the base commit's run reached it is compared as usual: pre-existing.
    writeFiles(repo.dir, {
      'package.json': JSON.stringify({ name: 'chained', private: true, scripts: { test: 'node --test' } }),
      'src/add.js': 'exports.add = (a, b) => a - b;\n',
    });

    const base = commitAll(repo.dir, 'one run');
    writeFiles(repo.dir, { 'src/add.js': 'exports.add = (a, b) => a + b;\n' });
    const whole = await validate(sandbox, { dir: repo.dir, base });
    expect(whole).toMatchObject({ passed: true, preexisting_failures: ['old failure'], fixed: ['adds'] });
    expect(whole.message).toBeUndefined();
  });

  it('reports a test the change makes pass as fixed', async () => {
    const repo = preexistingFixesA();
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base });
    expect(out).toMatchObject({
      passed: true,
      new_failures: [],
      preexisting_failures: [],
      fixed: ['A'],
      tests: { passed: 2, failed: 0 },
    });
  });

  it('fails a hanging test at its timeout and still reports the other tests (node --test --test-timeout)', async () => {
    const repo = jsHangingTest();
    const out = await validate(
      sandbox,
      { dir: repo.dir, base: repo.base },
      { limits: { testTimeoutMs: 2_000, runTimeoutMs: 40_000 } },
    );
    expect(out).toMatchObject({ passed: false, new_failures: ['test/slow.test.js'], tests: { passed: 3, failed: 1 } });
    expect(out.log_tail).toContain('test timed out after 2000ms');
    // the per-test timeout ended it, not the run's
    expect(out.baseline!.timed_out).toBe(false);
    expect(out.duration_ms).toBeLessThan(30_000);
  });

  it('fails a hang the runner cannot time out at the run’s timeout, naming the test it was in', async () => {
    // A command from .emend/test is not watched (its shape is unknown): the run's own limit ends it.
    const repo = pythonHangingTest({ '.emend/test': 'python3 -m pytest -v\n' });
    const out = await validate(
      sandbox,
      { dir: repo.dir, base: repo.base },
      { limits: { testTimeoutMs: 1_000, runTimeoutMs: 4_000 } },
    );
    expect(out.passed).toBe(false);
    expect(out.new_failures).toEqual(['(run) timed out after 4 s', 'test_slow.py::test_slow']);
    expect(out.hung).toBeUndefined();
    // the tests that ran before the hang are still reported
    expect(out.tests).toMatchObject({ passed: 2 });
  });

  it('watches a remembered command that names the progress plugin (repo memory keeps the command as run)', async () => {
    const repo = pythonHangingTest();
    // Not detection's own command (that runs as detection's recipe): one run as written.
    const remembered =
      'PYTHONDONTWRITEBYTECODE=1 python3 -m pytest -v -rA -p no:cacheprovider -p emend_progress -o faulthandler_timeout=1';
    const out = await validate(
      sandbox,
      { dir: repo.dir, base: repo.base, testCommand: remembered },
      { limits: { testTimeoutMs: 1_000, runTimeoutMs: 30_000 } },
    );
    expect(out).toMatchObject({
      command: remembered,
      source: 'memory',
      passed: false,
      new_failures: ['test_slow.py::test_slow'],
      tests: { passed: 2, failed: 1 },
      hung: { id: 'test_slow.py::test_slow', reason: 'timed out after 1 s (killed)', not_run: 0 },
    });
  });

  describe('a QuixBugs program with an infinite loop, pytest without pytest-timeout', () => {
    const TEST_TIMEOUT_MS = 5_000;
    const HUNG = 'python_testcases/test_sqrt.py::test_sqrt_two';
    const BEFORE = [
      'test_bitcount.py::test_zero',
      'test_bitcount.py::test_byte',
      'test_gcd.py::test_small',
      'test_gcd.py::test_coprime',
      'test_sqrt.py::test_sqrt_one',
    ].map((t) => `python_testcases/${t}`);

    it(
      'stops the hung test at the per-test timeout, fails it by name, keeps the tests before it, and leaves no ' +
        'process behind: a regression',
      async () => {
        expect(() => execFileSync('/usr/bin/python3', ['-c', 'import pytest_timeout'], { stdio: 'ignore' })).toThrow();
        const marker = `qx${randomBytes(4).toString('hex')}`;
        const repo = quixBugsHang('change', marker);
        const { out, elapsedMs, seen, left } = await validateWatchingProcesses(marker, () =>
          validate(sandbox, { dir: repo.dir, base: repo.base }, { limits: { testTimeoutMs: TEST_TIMEOUT_MS } }),
        );
        // A bound on the hang, not a speed measure: the run limit (600 s by default) is not waited for.
        expect(elapsedMs).toBeLessThan(TEST_TIMEOUT_MS + 10_000);
        expect(out).toMatchObject({
          passed: false,
          runner: 'pytest',
          new_failures: [HUNG],
          preexisting_failures: [],
          fixed: [],
          tests: { passed: 5, failed: 1, skipped: 0 },
          hung: { id: HUNG, reason: 'timed out after 5 s (killed)', not_run: 3 },
          baseline: { failures: [], tests: 9, timed_out: false },
        });
        expect(out.command).toContain('-p emend_progress');
        expect(out.baseline!.hung).toBeUndefined();
        expect(out.message).toBe(
          `the change's run was stopped: ${HUNG} timed out after 5 s (killed); 3 test(s) after it did not run`,
        );
        for (const id of BEFORE) expect(out.log_tail).toContain(`${id} PASSED`);
        expect(out.log_tail).not.toContain('test_sqrt_nine');
        // faulthandler's dump at the timeout shows where it was stuck; the validator's note ends the log
        expect(out.log_tail).toMatch(/File "python_programs\/sqrt.py", line \d in sqrt/);
        expect(out.log_tail.trimEnd().split('\n').at(-1)).toBe(
          `emend: ${HUNG} timed out after 5 s (killed); 3 test(s) after it did not run`,
        );
        // the hung pytest and the helper process its test started were there, and are gone
        expect(seen).toContain(marker);
        expect(seen).toContain(`${marker}c`);
        expect(left).toEqual([]);
      },
    );

    it('reports a change that removes the infinite loop as a fix', async () => {
      const marker = `qx${randomBytes(4).toString('hex')}`;
      const repo = quixBugsHang('baseline', marker);
      const { out, elapsedMs, left } = await validateWatchingProcesses(marker, () =>
        validate(sandbox, { dir: repo.dir, base: repo.base }, { limits: { testTimeoutMs: TEST_TIMEOUT_MS } }),
      );
      expect(elapsedMs).toBeLessThan(TEST_TIMEOUT_MS + 10_000);
      expect(out).toMatchObject({
        passed: true,
        new_failures: [],
        preexisting_failures: [],
        fixed: [HUNG],
        tests: { passed: 9, failed: 0 },
        baseline: {
          failures: [HUNG],
          tests: 6,
          hung: { id: HUNG, reason: 'timed out after 5 s (killed)', not_run: 3 },
        },
      });
      expect(out.hung).toBeUndefined();
      expect(out.message).toMatch(
        /^the unmodified checkout's run was stopped: .*test_sqrt_two timed out after 5 s \(killed\); 3 test\(s\) after it did not run/,
      );
      expect(left).toEqual([]);
    });
  });

  it('installs dependencies in the setup phase of each run (npm ci, offline here)', async () => {
    const repo = jsLocalDependency();
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base });
    expect(out.setup).toMatchObject({ command: 'npm ci --offline --no-audit --no-fund', network: false, exit_code: 0 });
    expect(out).toMatchObject({ passed: false, new_failures: ['doubles'], baseline: { setup: 'ok', failures: [] } });
    // the install happened in the copies, not in the checkout
    expect(existsSync(join(repo.dir, 'node_modules'))).toBe(false);
  });

  it(
    'installs dependencies in the setup phase, and passes nothing when they cannot be installed and the tests ' +
      'fail without them',
    async () => {
      const repo = jsMissingDependency();
      const out = await validate(sandbox, { dir: repo.dir, base: repo.base });
      // no network for setup here: npm ci --offline has no cache to install from
      expect(out.setup).toMatchObject({ command: 'npm ci --offline --no-audit --no-fund', network: false });
      expect(out.setup!.exit_code).not.toBe(0);
      expect(out.setup!.log_tail).toBeTruthy();
      expect(out.passed).toBeNull();
      expect(out.message).toMatch(
        /^the dependencies were not installed \(npm ci --offline --no-audit --no-fund: exit code \d+\) and the unmodified checkout fails 2 test\(s\) without them/,
      );
      expect(out.new_failures).toEqual([]);
      expect(out.preexisting_failures).toEqual([
        '(setup) npm ci --offline --no-audit --no-fund exited with code 1',
        'test/pad.test.js',
      ]);
      expect(out.baseline).toMatchObject({ setup: 'failed' });
    },
  );

  it('runs the repository’s .emend/setup in the setup phase of each run, and its tests see what it made', async () => {
    const test = (body: string) =>
      `const test = require('node:test');\nconst assert = require('node:assert');\n${body}\n`;
    const repo = fixtureRepo(
      {
        'package.json': JSON.stringify({ name: 'f', version: '1.0.0', scripts: { test: 'node --test' } }),
        // generated code the tests import, as a build step would make it
        '.emend/setup': "printf 'module.exports = (a, b) => a + b;\\n' > generated.js\n",
        'test/add.test.js': test("test('adds', () => assert.strictEqual(require('../generated.js')(2, 3), 5));"),
        'test/more.test.js': test("test('adds more', () => assert.strictEqual(require('../generated.js')(4, 3), 7));"),
      },
      {
        'test/more.test.js': test("test('adds more', () => assert.strictEqual(require('../generated.js')(4, 3), 7));"),
      },
    );
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base });
    expect(out.setup).toMatchObject({ command: 'sh .emend/setup', exit_code: 0 });
    expect(out).toMatchObject({ passed: true, new_failures: [], baseline: { setup: 'ok', failures: [] } });
    expect(out.tests).toEqual({ passed: 2, failed: 0, skipped: 0 });
    // made in the copies, not in the checkout
    expect(existsSync(join(repo.dir, 'generated.js'))).toBe(false);
  });

  it('says "no test command found" for a repository without tests, and passes nothing', async () => {
    const repo = noTests();
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base });
    expect(out).toMatchObject({
      command: null,
      passed: null,
      setup: null,
      new_failures: [],
      fixed: [],
      preexisting_failures: [],
      message: 'no test command found',
    });
    expect(out.log_tail).toBe('no test command found');
  });

  it('runs .emend/test over detection, and the remembered command when the repository has no such file', async () => {
    const repo = jsFailingTest();
    writeFiles(repo.dir, { 'check.js': "console.log('custom check ran');\n" });
    const remembered = await validate(sandbox, { dir: repo.dir, base: repo.base, testCommand: 'node check.js' });
    // check.js is untracked: only the change has it, so the baseline's run fails and the change's passes
    expect(remembered).toMatchObject({
      command: 'node check.js',
      source: 'memory',
      passed: true,
      fixed: ['(run) exited with code 1'],
    });
    expect(remembered.log_tail).toContain('custom check ran');

    const withFile = fixtureRepo({
      '.emend/test': '# our tests\nnode check.js\n',
      'check.js': "console.log('from .emend/test');\n",
      'package.json': '{"scripts":{"test":"node --test"}}',
    });
    const fromFile = await validate(sandbox, { dir: withFile.dir, base: withFile.base, testCommand: 'node other.js' });
    expect(fromFile).toMatchObject({ command: 'node check.js', source: 'repo-file', passed: true, runner: 'node' });
    expect(fromFile.log_tail).toContain('from .emend/test');
  });

  it('takes the baseline from --base: a committed change validated against the commit before it', async () => {
    const repo = jsFailingTest();
    const head = commitAll(repo.dir);
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base });
    expect(out).toMatchObject({ passed: false, new_failures: ['multiplies'], baseline: { commit: repo.base } });
    // against HEAD, the change (nothing in the working tree) brings nothing new
    const same = await validate(sandbox, { dir: repo.dir, base: 'HEAD' });
    expect(same).toMatchObject({
      passed: true,
      new_failures: [],
      preexisting_failures: ['multiplies'],
      baseline: { commit: head },
    });
  });

  it('reuses a baseline of the same commit and command instead of running it again', async () => {
    const repo = jsFailingTest();
    const first = await validate(sandbox, { dir: repo.dir, base: repo.base });
    // a doctored cached baseline shows that it was used rather than re-run
    const cached = { ...first.baseline!, failures: ['multiplies'], duration_ms: -1 };
    const second = await validate(sandbox, { dir: repo.dir, base: repo.base, cachedBaseline: cached });
    expect(second).toMatchObject({
      passed: true,
      new_failures: [],
      preexisting_failures: ['multiplies'],
      baseline: { duration_ms: -1 },
    });
    const otherCommit = await validate(sandbox, {
      dir: repo.dir,
      base: repo.base,
      cachedBaseline: { ...cached, commit: '0'.repeat(40) },
    });
    expect(otherCommit).toMatchObject({ passed: false, new_failures: ['multiplies'] });
  });

  it('never copies ignored files through a directory that is a link in the base commit', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'emend-outside-'));
    const repo = pythonPytest();
    writeFiles(repo.dir, { '.gitignore': 'cache/sub/\n' });
    symlinkSync(outside, join(repo.dir, 'cache'));
    const base = commitAll(repo.dir, 'cache is a link');
    rmSync(join(repo.dir, 'cache'));
    // the change makes cache a directory, with an ignored subdirectory git lists on its own
    writeFiles(repo.dir, { 'cache/keep.txt': 'kept\n', 'cache/sub/data.txt': 'ignored\n' });
    const out = await validate(sandbox, { dir: repo.dir, base });
    expect(out.command).not.toBeNull();
    expect(readdirSync(outside)).toEqual([]);
    rmSync(outside, { recursive: true });
  });

  it('validates the whole repository when pointed into a subdirectory of it', async () => {
    const repo = jsFailingTest();
    const out = await validate(sandbox, { dir: join(repo.dir, 'src'), base: repo.base });
    expect(out).toMatchObject({ passed: false, new_failures: ['multiplies'] });
  });

  it('refuses a directory that is not a checkout, and a revision that names no commit', async () => {
    const repo = noTests();
    await expect(validate(sandbox, { dir: repo.dir, base: 'no-such-branch' })).rejects.toThrow(NotACheckoutError);
    await expect(validate(sandbox, { dir: join(repo.dir, '.git', 'objects'), base: 'HEAD' })).rejects.toThrow(
      /is not a git checkout/,
    );
    await expect(validate(sandbox, { dir: tmpdir(), base: 'HEAD' })).rejects.toThrow(/is not a git checkout/);
  });

  it('stops when aborted', async () => {
    const repo = pythonHangingTest();
    const abort = new AbortController();
    const running = validate(
      sandbox,
      { dir: repo.dir, base: repo.base },
      { signal: abort.signal, limits: { runTimeoutMs: 30_000 } },
    );
    setTimeout(() => abort.abort(), 1_500);
    await expect(running).rejects.toThrow('validation aborted');
  });
});
