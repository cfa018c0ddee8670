import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadConfig } from '../../src/config/config.js';
import { createSandbox } from '../../src/sandbox/sandbox.js';
import type { Sandbox } from '../../src/sandbox/types.js';

/** Files of a tree: path → content; null in a change deletes the file. */
export type Files = Record<string, string | null>;

export interface FixtureRepo {
  dir: string;
  /** The commit holding the base files. */
  base: string;
}

const made: string[] = [];

/** The environment fixture repositories are made with: a fixed author, no system config. */
export const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Fixture',
  GIT_AUTHOR_EMAIL: 'fixture@example.com',
  GIT_COMMITTER_NAME: 'Fixture',
  GIT_COMMITTER_EMAIL: 'fixture@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
};

const git = (dir: string, args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], { env: GIT_ENV, encoding: 'utf8' }).trim();

export function writeFiles(dir: string, files: Files) {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    if (content === null) {
      rmSync(full, { force: true });
      continue;
    }
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

/** A git repository in a temp dir with `base` committed and `change` (if any) left in the working tree. */
export function fixtureRepo(base: Files, change: Files = {}): FixtureRepo {
  const dir = mkdtempSync(join(tmpdir(), 'emend-fixture-'));
  made.push(dir);
  git(dir, ['init', '-q', '-b', 'main']);
  writeFiles(dir, base);
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'base']);
  const commit = git(dir, ['rev-parse', 'HEAD']);
  writeFiles(dir, change);
  return { dir, base: commit };
}

/** The repository's working tree made the base commit's plus `change`: another change on the same base. */
export function changeTo(dir: string, change: Files): void {
  git(dir, ['checkout', '-q', '--', '.']);
  git(dir, ['clean', '-qfd']);
  writeFiles(dir, change);
}

/** Commits the working tree; returns the new commit. */
export function commitAll(dir: string, message = 'change'): string {
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', message]);
  return git(dir, ['rev-parse', 'HEAD']);
}

/**
 * Moves the repository's git directory out of its files, as a task's checkout has it
 * (src/checkout/checkout.ts), leaving a `.git` pointer file; returns the git directory.
 */
export function separateGitDir(repo: FixtureRepo): string {
  const gitDir = mkdtempSync(join(tmpdir(), 'emend-fixture-git-'));
  made.push(gitDir);
  rmSync(gitDir, { recursive: true });
  renameSync(join(repo.dir, '.git'), gitDir);
  execFileSync('git', ['--git-dir', gitDir, 'config', 'core.worktree', repo.dir]);
  writeFileSync(join(repo.dir, '.git'), `gitdir: ${gitDir}\n`);
  return gitDir;
}

export function removeFixtureRepos() {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

const nodePackage = (script = 'node --test') =>
  JSON.stringify({ name: 'fixture', version: '1.0.0', private: true, scripts: { test: script } }, null, 2);

const ADD = 'exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n';

const ADD_TESTS = `const test = require('node:test');
const assert = require('node:assert');
const { add, mul } = require('../src/math.js');
test('adds', () => assert.strictEqual(add(2, 3), 5));
test('multiplies', () => assert.strictEqual(mul(2, 3), 6));
`;

/** JavaScript, node --test: the change breaks mul, so "multiplies" fails. */
export const jsFailingTest = () =>
  fixtureRepo(
    { 'package.json': nodePackage(), 'src/math.js': ADD, 'test/math.test.js': ADD_TESTS },
    { 'src/math.js': 'exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a + b;\n' },
  );

/** JavaScript whose test script checks with console.assert: a failure prints "Assertion failed" and exits 0. */
export const jsFailureExitsZero = () =>
  fixtureRepo(
    {
      'package.json': nodePackage('node test/check.js'),
      'src/math.js': ADD,
      'test/check.js':
        "const { add } = require('../src/math.js');\nconsole.assert(add(2, 2) === 4, 'add(2, 2) is " +
        "4');\nconsole.log('checks done');\n",
    },
    { 'src/math.js': 'exports.add = (a, b) => a - b;\nexports.mul = (a, b) => a * b;\n' },
  );

const CALC = 'def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n';
const CALC_TESTS =
  'from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_sub():\n    assert ' +
  'sub(5, 3) == 2\n';

/** Python with pytest: the change breaks sub. */
export const pythonPytest = () =>
  fixtureRepo(
    { 'calc.py': CALC, 'test_calc.py': CALC_TESTS, 'pytest.ini': '[pytest]\n' },
    { 'calc.py': CALC.replace('a - b', 'a + b') },
  );

const PRE_TESTS = `const test = require('node:test');
const assert = require('node:assert');
const { a, b } = require('../src/lib.js');
test('A', () => assert.strictEqual(a(), 'a'));
test('B', () => assert.strictEqual(b(), 'b'));
`;

/** Test A fails before any change; `change` decides what happens to A and B. */
export const jsPreexistingFailure = (change: Files) =>
  fixtureRepo(
    {
      'package.json': nodePackage(),
      'src/lib.js': "exports.a = () => 'not a';\nexports.b = () => 'b';\n",
      'test/lib.test.js': PRE_TESTS,
    },
    change,
  );

/** The change breaks B and leaves A failing. */
export const preexistingBreaksB = () =>
  jsPreexistingFailure({ 'src/lib.js': "exports.a = () => 'not a';\nexports.b = () => 'not b';\n" });
/** The change fixes A. */
export const preexistingFixesA = () =>
  jsPreexistingFailure({ 'src/lib.js': "exports.a = () => 'a';\nexports.b = () => 'b';\n" });

/** node --test, three test files; the change makes the one in test/slow.test.js hang. */
export const jsHangingTest = () =>
  fixtureRepo(
    {
      'package.json': nodePackage(),
      'src/math.js': ADD,
      'test/math.test.js': ADD_TESTS,
      'test/more.test.js':
        "const test = require('node:test');\nconst assert = require('node:assert');\ntest('more', () => " +
        'assert.ok(true));\n',
      'test/slow.test.js':
        "const test = require('node:test');\ntest('waits for the answer', async () => { await new Promise((r) " +
        '=> setTimeout(r, 10)); });\n',
    },
    {
      'test/slow.test.js':
        "const test = require('node:test');\ntest('waits for the answer', async () => { await new Promise((r) " +
        '=> setTimeout(r, 1e9)); });\n',
    },
  );

/**
 * pytest with a test that the change makes hang (no pytest-timeout here): the hang is in the
 * code, not in a test file, so the base commit's run (which gets the change's test files) does
 * not hang. `base` adds files to the base tree.
 */
export const pythonHangingTest = (base: Files = {}) =>
  fixtureRepo(
    {
      'calc.py': CALC,
      'test_calc.py': CALC_TESTS,
      'pytest.ini': '[pytest]\n',
      'slow.py': 'def answer():\n    return 42\n',
      'test_slow.py': 'from slow import answer\n\n\ndef test_slow():\n    assert answer() == 42\n',
      ...base,
    },
    { 'slow.py': 'import time\n\n\ndef answer():\n    time.sleep(1000)\n    return 42\n' },
  );

const SQRT = (condition: string) =>
  `def sqrt(x, epsilon):\n    approx = x / 2\n    while ${condition} > epsilon:\n        approx = 0.5 * ` +
  `(approx + x / approx)\n    return approx\n`;
/** QuixBugs' sqrt, and its bug: the loop compares x with approx instead of approx ** 2, and never ends for x != 1. */
const SQRT_RIGHT = SQRT('abs(x - approx ** 2)');
const SQRT_HANGS = SQRT('abs(x - approx)');

/**
 * The sqrt test that hangs on the bug. It names its process, and a helper process it starts
 * (as tests start servers), `marker` and `marker` + "c" (/proc/self/comm), so a test can
 * look for them on the host after the run.
 */
const sqrtTests = (marker: string) =>
  `import subprocess
import sys

from python_programs.sqrt import sqrt


def test_sqrt_one():
    assert abs(sqrt(1, 0.01) - 1) < 0.01


def test_sqrt_two():
    with open("/proc/self/comm", "w") as comm:
        comm.write("${marker}")
    helper = subprocess.Popen([sys.executable, "-c", "open('/proc/self/comm', 'w').write('${marker}c'); import ` +
  `time; time.sleep(600)"])
    try:
        assert abs(sqrt(2, 0.01) - 1.414) < 0.01
    finally:
        helper.kill()


def test_sqrt_nine():
    assert abs(sqrt(9, 0.01) - 3) < 0.01
`;

/**
 * QuixBugs-style Python (python_programs/, python_testcases/, pytest, no pytest-timeout):
 * nine tests, five before the sqrt test that hangs on the bug, three after it
 * (test_sqrt_nine, test_to_base.py's two). `bug` says which tree has the infinite loop.
 */
export const quixBugsHang = (bug: 'change' | 'baseline', marker: string) => {
  const files = (sqrt: string) => ({
    'python_programs/bitcount.py':
      'def bitcount(n):\n    count = 0\n    while n:\n        n &= n - 1\n        count += 1\n    return count\n',
    'python_programs/gcd.py': 'def gcd(a, b):\n    return a if b == 0 else gcd(b, a % b)\n',
    'python_programs/sqrt.py': sqrt,
    'python_programs/to_base.py':
      "import string\n\n\ndef to_base(num, b):\n    result = ''\n    alphabet = string.digits + " +
      'string.ascii_uppercase\n    while num > 0:\n        i = num % b\n        num = num // b\n        result ' +
      '= alphabet[i] + result\n    return result\n',
    'python_testcases/test_bitcount.py':
      'from python_programs.bitcount import bitcount\n\n\ndef test_zero():\n    assert bitcount(0) == ' +
      '0\n\n\ndef test_byte():\n    assert bitcount(127) == 7\n',
    'python_testcases/test_gcd.py':
      'from python_programs.gcd import gcd\n\n\ndef test_small():\n    assert gcd(35, 21) == 7\n\n\ndef ' +
      'test_coprime():\n    assert gcd(17, 13) == 1\n',
    'python_testcases/test_sqrt.py': sqrtTests(marker),
    'python_testcases/test_to_base.py':
      'from python_programs.to_base import to_base\n\n\ndef test_binary():\n    assert to_base(5, 2) == ' +
      "'101'\n\n\ndef test_hex():\n    assert to_base(255, 16) == 'FF'\n",
  });
  return bug === 'change'
    ? fixtureRepo(files(SQRT_RIGHT), { 'python_programs/sqrt.py': SQRT_HANGS })
    : fixtureRepo(files(SQRT_HANGS), { 'python_programs/sqrt.py': SQRT_RIGHT });
};

/** JavaScript with a dev dependency that is not installed and a lockfile; the sandbox has no network for setup. */
export const jsMissingDependency = () =>
  fixtureRepo(
    {
      'package.json': JSON.stringify({
        name: 'fixture',
        version: '1.0.0',
        private: true,
        scripts: { test: 'node --test' },
        devDependencies: { 'left-pad': '1.3.0' },
      }),
      'package-lock.json': JSON.stringify({
        name: 'fixture',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: {
          '': { name: 'fixture', version: '1.0.0', devDependencies: { 'left-pad': '1.3.0' } },
          'node_modules/left-pad': {
            version: '1.3.0',
            resolved: 'https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz',
            dev: true,
          },
        },
      }),
      'test/pad.test.js':
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst pad = " +
        "require('left-pad');\ntest('pads', () => assert.strictEqual(pad('1', 3, '0'), '001'));\n",
    },
    { 'README.md': '# now with a readme\n' },
  );

/**
 * JavaScript whose dev dependency is a local package (file:vendor/twice): `npm ci --offline`
 * installs it with no network. The change breaks the package.
 */
export const jsLocalDependency = () =>
  fixtureRepo(
    {
      'package.json': JSON.stringify({
        name: 'fixture',
        version: '1.0.0',
        private: true,
        scripts: { test: 'node --test' },
        devDependencies: { twice: 'file:vendor/twice' },
      }),
      'package-lock.json': JSON.stringify({
        name: 'fixture',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: {
          '': { name: 'fixture', version: '1.0.0', devDependencies: { twice: 'file:vendor/twice' } },
          'node_modules/twice': { resolved: 'vendor/twice', link: true },
          'vendor/twice': { version: '1.0.0', dev: true },
        },
      }),
      '.gitignore': 'node_modules/\n',
      'vendor/twice/package.json': JSON.stringify({ name: 'twice', version: '1.0.0', main: 'index.js' }),
      'vendor/twice/index.js': 'module.exports = (x) => x * 2;\n',
      'test/twice.test.js':
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst twice = " +
        "require('twice');\ntest('doubles', () => assert.strictEqual(twice(4), 8));\n",
    },
    { 'vendor/twice/index.js': 'module.exports = (x) => x * 3;\n' },
  );

/** A repository with nothing to test. */
export const noTests = () =>
  fixtureRepo({ 'README.md': '# notes\n', 'notes.txt': 'nothing to run here\n' }, { 'notes.txt': 'still nothing\n' });

/**
 * The real bubblewrap sandbox as the service builds it from its configuration, over a
 * data dir of its own (the sandbox refuses checkouts inside the data dir).
 */
export async function fixtureSandbox(env: Record<string, string> = {}): Promise<Sandbox> {
  const dataDir = mkdtempSync(join(tmpdir(), 'emend-fixture-data-'));
  made.push(dataDir);
  const config = loadConfig({ EMEND_DATA_DIR: dataDir, EMEND_SANDBOX: 'bubblewrap', ...env });
  // The browser the server would use (EMEND_CHROMIUM_PATH, /usr/bin/chromium by default).
  const sandbox = await createSandbox(config.sandbox, {
    protectedPaths: [dataDir],
    browserPath: config.site.chromiumPath,
  });
  const report = sandbox.report();
  if (report.kind !== 'bubblewrap')
    throw new Error(`the validator tests need bubblewrap; the sandbox is ${report.kind}: ${report.problem ?? ''}`);
  return sandbox;
}
