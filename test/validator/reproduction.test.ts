import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { NO_TEST_FILE } from '../../src/validator/reproduction.js';
import { validate } from '../../src/validator/validate.js';
import {
  type Files,
  commitAll,
  fixtureRepo,
  fixtureSandbox,
  removeFixtureRepos,
  writeFiles,
} from '../support/fixture-repos.js';

// The reproduction rule end to end (docs/validator.md, "Reproduction test"): fixture
// repositories with a bug, scripted changes (a correct fix with its test, the test alone, a
// wrong fix, a test that passes on the base, a fix without a test), every run in the real
// bubblewrap sandbox.

/** Python: mean() floors its result; the request is "mean([1, 2]) is 1.5". */
const PY_BASE: Files = {
  'pytest.ini': '[pytest]\ntestpaths = tests\n',
  'stats.py': 'def mean(xs):\n    return sum(xs) // len(xs)\n',
  'tests/test_stats.py': 'from stats import mean\n\n\ndef test_mean_even():\n    assert mean([2, 4]) == 3\n',
};
const PY_REPRO = 'tests/test_mean.py';
const PY_REPRO_ID = 'tests/test_mean.py::test_mean_halves';
const PY_REPRO_TEST = 'from stats import mean\n\n\ndef test_mean_halves():\n    assert mean([1, 2]) == 1.5\n';
const PY_FIX = { 'stats.py': 'def mean(xs):\n    return sum(xs) / len(xs)\n' };
const PY_WRONG_FIX = { 'stats.py': 'def mean(xs):\n    return round(sum(xs) / len(xs))\n' };

/** JavaScript, node --test: avg() floors; the change extends the existing test file. */
const JS_TESTS = `const test = require('node:test');
const assert = require('node:assert');
const { avg } = require('../src/avg.js');
test('averages evenly', () => assert.strictEqual(avg([2, 4]), 3));
`;
const JS_BASE: Files = {
  'package.json': JSON.stringify({ name: 'fixture', private: true, scripts: { test: 'node --test' } }),
  'src/avg.js': 'exports.avg = (xs) => Math.floor(xs.reduce((a, b) => a + b, 0) / xs.length);\n',
  'test/avg.test.js': JS_TESTS,
};
const JS_REPRO = { 'test/avg.test.js': `${JS_TESTS}test('halves', () => assert.strictEqual(avg([1, 2]), 1.5));\n` };
const JS_FIX = { 'src/avg.js': 'exports.avg = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;\n' };
const JS_WRONG_FIX = { 'src/avg.js': 'exports.avg = (xs) => Math.ceil(xs.reduce((a, b) => a + b, 0) / xs.length);\n' };

describe('the validator asks for a reproduction test', { timeout: 60_000 }, () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await fixtureSandbox();
  });
  afterAll(() => removeFixtureRepos());

  const run = async (base: Files, change: Files) => {
    const repo = fixtureRepo(base, change);
    const logs: string[] = [];
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base }, { log: (m) => logs.push(m) });
    return { repo, out, logs };
  };

  it('pytest: a correct fix with its test passes, the test named as the reproduction', async () => {
    const { out } = await run(PY_BASE, { [PY_REPRO]: PY_REPRO_TEST, ...PY_FIX });
    expect(out).toMatchObject({ passed: true, new_failures: [], fixed: [PY_REPRO_ID] });
    expect(out.reproduction).toEqual({
      rule: 'reproduction',
      test_files: [PY_REPRO],
      failed_on_base: [PY_REPRO_ID],
      now_passing: [PY_REPRO_ID],
      still_failing: [],
      note: `reproduced: ${PY_REPRO_ID} failed on the base commit and pass with the change`,
    });
    // the test ran on the base commit's code: that run failed it
    expect(out.baseline).toMatchObject({ failures: [PY_REPRO_ID], test_file_failures: [PY_REPRO_ID] });
  });

  it('pytest: the test alone (an empty fix) does not pass: it still fails, shown as a new failure', async () => {
    const { out } = await run(PY_BASE, { [PY_REPRO]: PY_REPRO_TEST });
    expect(out).toMatchObject({ passed: false, new_failures: [PY_REPRO_ID], preexisting_failures: [] });
    expect(out.reproduction).toMatchObject({
      rule: 'reproduction',
      failed_on_base: [PY_REPRO_ID],
      now_passing: [],
      still_failing: [PY_REPRO_ID],
      note: `the change's own tests still fail with the change: ${PY_REPRO_ID}`,
    });
    // the fixer is shown why, as for any new failure
    expect(out.failure_details?.[0]).toMatchObject({ test: PY_REPRO_ID, test_file: PY_REPRO });
    expect(out.failure_details?.[0]?.message).toContain('assert 1 == 1.5');
  });

  it('pytest: a wrong fix with the test does not pass', async () => {
    const { out } = await run(PY_BASE, { [PY_REPRO]: PY_REPRO_TEST, ...PY_WRONG_FIX });
    expect(out).toMatchObject({ passed: false, new_failures: [PY_REPRO_ID] });
    expect(out.reproduction).toMatchObject({ still_failing: [PY_REPRO_ID], now_passing: [] });
    expect(out.failure_details?.[0]?.message).toContain('assert 2 == 1.5');
  });

  it('pytest: a test that passes on the base commit too reproduces nothing, so the change does not pass', async () => {
    const passesOnBase = 'from stats import mean\n\n\ndef test_mean_odd():\n    assert mean([3, 5, 7]) == 5\n';
    const { out, logs } = await run(PY_BASE, { [PY_REPRO]: passesOnBase, ...PY_FIX });
    expect(out).toMatchObject({ passed: false, new_failures: [], fixed: [] });
    expect(out.reproduction).toMatchObject({ rule: 'reproduction', failed_on_base: [], now_passing: [] });
    expect(out.reproduction?.note).toBe(
      `the change's tests (${PY_REPRO}) pass on the base commit too: they do not reproduce the request`,
    );
    expect(logs).toContain(out.reproduction!.note);
  });

  it('pytest: a test module that does not import on the base commit (the function is new) reproduces', async () => {
    const test = 'from stats import median\n\n\ndef test_median():\n    assert median([3, 1, 2]) == 2\n';
    const median = 'def median(xs):\n    return sorted(xs)[len(xs) // 2]\n';
    const { out } = await run(PY_BASE, {
      'tests/test_median.py': test,
      'stats.py': `${PY_BASE['stats.py']}\n\n${median}`,
    });
    expect(out.reproduction).toMatchObject({
      rule: 'reproduction',
      failed_on_base: ['tests/test_median.py'],
      now_passing: ['tests/test_median.py'],
      still_failing: [],
    });
    expect(out.passed).toBe(true);
    // the base run went on past the module that did not import (--continue-on-collection-errors)
    expect(out.baseline).toMatchObject({ failures: ['tests/test_median.py'], tests: 2 });
  });

  it('a change with no test file is judged by no new failures alone, and says so in the log', async () => {
    const { out, logs } = await run(PY_BASE, PY_FIX);
    expect(out.passed).toBe(true);
    expect(out.reproduction).toEqual({
      rule: 'no-new-failures',
      test_files: [],
      failed_on_base: [],
      now_passing: [],
      still_failing: [],
      note: NO_TEST_FILE,
    });
    expect(logs).toContain(NO_TEST_FILE);
    expect(out.baseline?.test_files_digest).toBeUndefined();
  });

  it('node --test: a correct fix extending the test file passes; the test alone and a wrong fix do not', async () => {
    const correct = await run(JS_BASE, { ...JS_REPRO, ...JS_FIX });
    expect(correct.out).toMatchObject({ passed: true, fixed: ['halves'] });
    expect(correct.out.reproduction).toMatchObject({
      test_files: ['test/avg.test.js'],
      failed_on_base: ['halves'],
      now_passing: ['halves'],
      still_failing: [],
    });

    const empty = await run(JS_BASE, JS_REPRO);
    expect(empty.out).toMatchObject({ passed: false, new_failures: ['halves'] });
    expect(empty.out.reproduction).toMatchObject({ now_passing: [], still_failing: ['halves'] });

    const wrong = await run(JS_BASE, { ...JS_REPRO, ...JS_WRONG_FIX });
    expect(wrong.out).toMatchObject({ passed: false, new_failures: ['halves'] });
    expect(wrong.out.reproduction).toMatchObject({ still_failing: ['halves'] });
  });

  // A test file the change extends can hold a test failing before the change for its own reasons
  // (a date in a snapshot, the network): failing before and after in lines the change did not
  // touch, it is the file's pre-existing failure, not the change's test still failing.
  const STALE = "test('stamps the year', () => {\n  assert.strictEqual(new Date(0).getUTCFullYear(), 1971);\n});\n";
  const STALE_BASE: Files = { ...JS_BASE, 'test/avg.test.js': `${JS_TESTS}${STALE}` };
  const HALVES = "test('halves', () => assert.strictEqual(avg([1, 2]), 1.5));\n";

  it('node --test: an old failure in lines the change did not touch is pre-existing, the fix passes', async () => {
    const { out, logs } = await run(STALE_BASE, { 'test/avg.test.js': `${JS_TESTS}${STALE}${HALVES}`, ...JS_FIX });
    expect(out).toMatchObject({ passed: true, new_failures: [], preexisting_failures: ['stamps the year'] });
    expect(out.reproduction).toMatchObject({
      failed_on_base: ['halves', 'stamps the year'],
      now_passing: ['halves'],
      still_failing: [],
      untouched_failing: ['stamps the year'],
    });
    expect(
      logs.some((l) => l.includes('stamps the year failed before and after, in lines the change did not touch')),
    ).toBe(true);
    // the test alone still fails the change: its own test is touched by it
    const empty = await run(STALE_BASE, { 'test/avg.test.js': `${JS_TESTS}${STALE}${HALVES}` });
    expect(empty.out).toMatchObject({ passed: false, new_failures: ['halves'] });
    expect(empty.out.reproduction).toMatchObject({ still_failing: ['halves'], untouched_failing: ['stamps the year'] });
  });

  it('node --test: an old failure the change touched, or a touched line outside every test, still counts', async () => {
    const edited = STALE.replace('{\n', '{\n  // the year the snapshot was taken\n');
    const inTest = await run(STALE_BASE, { 'test/avg.test.js': `${JS_TESTS}${edited}${HALVES}`, ...JS_FIX });
    expect(inTest.out).toMatchObject({ passed: false, new_failures: ['stamps the year'] });
    expect(inTest.out.reproduction).toMatchObject({ now_passing: ['halves'], still_failing: ['stamps the year'] });
    expect(inTest.out.reproduction?.untouched_failing).toBeUndefined();

    // a line between the tests (a shared constant) may be why any test of the file fails
    const shared = `${JS_TESTS}const YEAR = 1971;\n${STALE}${HALVES}`;
    const outside = await run(STALE_BASE, { 'test/avg.test.js': shared, ...JS_FIX });
    expect(outside.out).toMatchObject({ passed: false, new_failures: ['stamps the year'] });
    expect(outside.out.reproduction?.untouched_failing).toBeUndefined();
  });

  it('pytest: an old failure in a test function the change did not touch is pre-existing', async () => {
    const old = '\n\ndef test_old_failure():\n    assert mean([1]) == 2\n';
    const base = { ...PY_BASE, 'tests/test_stats.py': `${PY_BASE['tests/test_stats.py']}${old}` };
    const halves = '\n\ndef test_mean_halves():\n    assert mean([1, 2]) == 1.5\n';
    const { out } = await run(base, { 'tests/test_stats.py': `${base['tests/test_stats.py']}${halves}`, ...PY_FIX });
    expect(out).toMatchObject({ passed: true, preexisting_failures: ['tests/test_stats.py::test_old_failure'] });
    expect(out.reproduction).toMatchObject({
      now_passing: ['tests/test_stats.py::test_mean_halves'],
      still_failing: [],
      untouched_failing: ['tests/test_stats.py::test_old_failure'],
    });
  });

  it('never copies a test file through a directory that is a link in the base commit', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'emend-outside-'));
    const repo = fixtureRepo({ 'pytest.ini': '[pytest]\n', 'stats.py': PY_BASE['stats.py']! });
    symlinkSync(outside, join(repo.dir, 'tests'));
    const base = commitAll(repo.dir, 'tests is a link');
    rmSync(join(repo.dir, 'tests'));
    writeFiles(repo.dir, { [PY_REPRO]: PY_REPRO_TEST, ...PY_FIX });
    const logs: string[] = [];
    const out = await validate(sandbox, { dir: repo.dir, base }, { log: (m) => logs.push(m) });
    expect(readdirSync(outside)).toEqual([]);
    expect(logs).toContain('test files not copied to the base commit (a link on their way there)');
    // the test did not run on the base, so nothing shows it reproduces the request
    expect(out).toMatchObject({ passed: false, reproduction: { test_files: [PY_REPRO], failed_on_base: [] } });
    rmSync(outside, { recursive: true });
  });

  it('a kept baseline is reused while the test files are the same, and run again when they change', async () => {
    const { repo, out: first } = await run(PY_BASE, { [PY_REPRO]: PY_REPRO_TEST });
    expect(first.passed).toBe(false);
    // the retry fixes the code and keeps the test: the base run (which had the test) still applies
    writeFiles(repo.dir, PY_FIX);
    const logs: string[] = [];
    const second = await validate(
      sandbox,
      { dir: repo.dir, base: repo.base, cachedBaseline: first.baseline },
      { log: (m) => logs.push(m) },
    );
    expect(logs).toContain('baseline reused');
    expect(second).toMatchObject({ passed: true, baseline: first.baseline });
    expect(second.reproduction?.now_passing).toEqual([PY_REPRO_ID]);
    // a retry that changes its test: the base commit runs again, with the new test
    writeFiles(repo.dir, { [PY_REPRO]: PY_REPRO_TEST.replace('[1, 2]) == 1.5', '[1, 4]) == 2.5') });
    logs.length = 0;
    const third = await validate(
      sandbox,
      { dir: repo.dir, base: repo.base, cachedBaseline: second.baseline },
      { log: (m) => logs.push(m) },
    );
    expect(logs).toContain('baseline run');
    expect(logs).not.toContain('baseline reused');
    expect(third.baseline?.test_files_digest).not.toBe(first.baseline?.test_files_digest);
    expect(third).toMatchObject({ passed: true, reproduction: { now_passing: [PY_REPRO_ID] } });
  });
});
