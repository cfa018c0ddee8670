import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Files, GIT_ENV, writeFiles } from './fixture-repos.js';

// SWE-bench-style instances on small repositories built here: a base commit with a bug, the gold
// patch that fixes it, a test patch adding the test that shows it. The repository is kept as a
// bare mirror under <mirrors>/<owner>+<name>, as `emend eval --mirrors` finds them.

const made: string[] = [];

const git = (dir: string, args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], { env: GIT_ENV, encoding: 'utf8' });

export interface EvalInstance {
  instance_id: string;
  repo: string;
  base_commit: string;
  problem_statement: string;
  patch: string;
  test_patch: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
}

/** A unified diff of `change` against the work tree's HEAD; the work tree is left at HEAD. */
function diffOf(dir: string, change: Files): string {
  writeFiles(dir, change);
  git(dir, ['add', '-A']);
  const diff = git(dir, ['diff', '--cached']);
  git(dir, ['reset', '-q', '--hard']);
  return diff;
}

export interface InstanceSpec {
  repo: string;
  base: Files;
  fix: Files;
  tests: Files;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
  /** The base commit's date (ISO 8601), as an old repository's; today's without it. */
  date?: string;
}

/** Builds the repository as a mirror in `mirrors` and returns its instance. */
export function buildInstance(mirrors: string, id: string, spec: InstanceSpec): EvalInstance {
  const dir = mkdtempSync(join(tmpdir(), 'emend-eval-src-'));
  made.push(dir);
  git(dir, ['init', '-q', '-b', 'main']);
  writeFiles(dir, spec.base);
  git(dir, ['add', '-A']);
  const dated = spec.date ? { GIT_AUTHOR_DATE: spec.date, GIT_COMMITTER_DATE: spec.date } : {};
  execFileSync('git', ['-C', dir, 'commit', '-q', '-m', 'base'], { env: { ...GIT_ENV, ...dated } });
  const base = git(dir, ['rev-parse', 'HEAD']).trim();
  const patch = diffOf(dir, spec.fix);
  const testPatch = diffOf(dir, spec.tests);
  mkdirSync(mirrors, { recursive: true });
  const mirror = join(mirrors, spec.repo.replace('/', '+'));
  execFileSync('git', ['clone', '-q', '--bare', dir, mirror], { env: GIT_ENV });
  return {
    instance_id: id,
    repo: spec.repo,
    base_commit: base,
    problem_statement: 'add() does not add',
    patch,
    test_patch: testPatch,
    FAIL_TO_PASS: spec.FAIL_TO_PASS,
    PASS_TO_PASS: spec.PASS_TO_PASS,
  };
}

export function removeEvalRepos() {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export const PY_CALC = 'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n';

/** acme/pycalc: add() subtracts; the test patch adds test_add to the existing test module. */
export const pythonSpec: InstanceSpec = {
  repo: 'acme/pycalc',
  base: {
    'calc.py': PY_CALC,
    'tests/test_calc.py': 'from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n',
  },
  fix: { 'calc.py': PY_CALC.replace('a - b', 'a + b') },
  tests: {
    'tests/test_calc.py':
      'from calc import add, mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n\n\n' +
      'def test_add():\n    assert add(2, 3) == 5\n',
  },
  FAIL_TO_PASS: ['tests/test_calc.py::test_add'],
  PASS_TO_PASS: ['tests/test_calc.py::test_mul'],
};

const JS_LIB = 'exports.add = (a, b) => a - b;\nexports.mul = (a, b) => a * b;\n';
const jsTest = (name: string, body: string) =>
  "const test = require('node:test');\nconst assert = require('node:assert');\n" +
  `const lib = require('../src/lib.js');\ntest('${name}', () => ${body});\n`;

/** acme/jscalc: node:test, the same bug; the test patch adds a test file. */
export const jsSpec: InstanceSpec = {
  repo: 'acme/jscalc',
  base: {
    'package.json': JSON.stringify({ name: 'jscalc', version: '1.0.0', scripts: { test: 'node --test' } }),
    'src/lib.js': JS_LIB,
    'test/mul.test.js': jsTest('multiplies', 'assert.strictEqual(lib.mul(2, 3), 6)'),
  },
  fix: { 'src/lib.js': JS_LIB.replace('a - b', 'a + b') },
  tests: { 'test/add.test.js': jsTest('adds', 'assert.strictEqual(lib.add(2, 3), 5)') },
  FAIL_TO_PASS: ['adds'],
  PASS_TO_PASS: ['multiplies'],
};

export function writeDataset(path: string, instances: unknown[]): void {
  writeFileSync(path, `${instances.map((i) => JSON.stringify(i)).join('\n')}\n`);
}

/** acme/srccalc: pythonSpec with the module under src/, importable only once a setup puts src/ on the path. */
export const pythonSrcSpec: InstanceSpec = {
  ...pythonSpec,
  repo: 'acme/srccalc',
  base: { 'src/calc.py': PY_CALC, 'tests/test_calc.py': pythonSpec.base['tests/test_calc.py']! },
  fix: { 'src/calc.py': PY_CALC.replace('a - b', 'a + b') },
};

/** The operator setup that points Python at src/: a .pth file in the user site, which HOME keeps for the tests. */
export const SRC_ON_PATH =
  'd=$(python3 -m site --user-site) && mkdir -p "$d" && echo "$PWD/src" > "$d/emend-eval-src.pth"';

/**
 * acme/datedcalc: the jscalc bug in a repository last committed in June 2020, whose test of the
 * fix also reads the wall clock (as dayjs's time-zone tests guess from today's offset): it
 * passes only at a date before 2021, so with the clock at the base commit's date. Another of
 * its tests, listed as passing before and after, passes only after 2020 (the data set recorded
 * it at a later date, as dayjs's locale tests that format the current month).
 */
export const datedSpec: InstanceSpec = {
  ...jsSpec,
  base: {
    ...jsSpec.base,
    'test/today.test.js': jsTest(
      'knows it is not 2020',
      '{ assert.ok(new Date().getUTCFullYear() > 2020, "the year is " + new Date().getUTCFullYear()); }',
    ),
  },
  PASS_TO_PASS: [...jsSpec.PASS_TO_PASS, 'knows it is not 2020'],
  repo: 'acme/datedcalc',
  date: '2020-06-15T12:00:00Z',
  tests: {
    'test/add.test.js': jsTest(
      'adds, this year',
      '{ assert.strictEqual(lib.add(2, 3), 5); assert.ok(new Date().getUTCFullYear() < 2021, "the year is " + new Date().getUTCFullYear()); }',
    ),
  },
  FAIL_TO_PASS: ['adds, this year'],
};
