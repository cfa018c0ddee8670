import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestRecipe } from '../../src/environments/detect.js';
import { focusedCommand, selectFocus, shellWord } from '../../src/validator/focus.js';
import { focusIn, lastFailuresOf, mochaSpecIn } from '../../src/validator/focus-read.js';
import { fixtureRepo, removeFixtureRepos } from '../support/fixture-repos.js';

/*
 * The focused pass's choice of test files (docs/validator.md, "The focused pass"), on real trees read
 * through the locator's import graph, and the command that runs only them.
 */

const detected = (
  kind: TestRecipe['perTest']['kind'],
  command = 'npm test',
): Pick<TestRecipe, 'source' | 'perTest' | 'command'> => ({
  source: 'detected',
  perTest: { kind } as TestRecipe['perTest'],
  command,
});

describe('the focused pass: which test files', () => {
  afterAll(() => removeFixtureRepos());

  it('takes the test files the change touches, the files of last time’s failures, and the importers of a changed JS module', () => {
    const repo = fixtureRepo({
      'package.json': '{"name":"x","scripts":{"test":"node --test"}}',
      'src/index.js': "module.exports = { ...require('./lib/a.js'), ...require('./lib/b.js') };\n",
      'src/lib/a.js': 'exports.a = () => 1;\n',
      'src/lib/b.js': 'exports.b = () => 2;\n',
      'test/a.test.js': "require('node:test')('a', () => require('../src/lib/a.js').a());\n",
      'test/index.test.js': "require('node:test')('i', () => require('../src/index.js'));\n",
      'test/b.test.js': "require('node:test')('b', () => require('../src/lib/b.js').b());\n",
      'test/c.test.js': "require('node:test')('c', () => {});\n",
      'test/d.test.js': "require('node:test')('d', () => {});\n",
    });
    const focus = focusIn(repo.dir, {
      changed: ['src/lib/a.js', 'test/c.test.js'],
      lastFailures: [{ id: 'd fails', frame: 'test/d.test.js' }],
    });
    expect(focus.files).toEqual(['test/c.test.js', 'test/d.test.js', 'test/a.test.js', 'test/index.test.js']);
    expect(focus.reasons).toEqual({
      'test/c.test.js': 'changed',
      'test/d.test.js': 'failed last time',
      'test/a.test.js': 'imports a changed module',
      // Through src/index.js, which imports the changed module.
      'test/index.test.js': 'imports a changed module',
    });
    // b.test.js imports only what the change left alone.
    expect(focus.files).not.toContain('test/b.test.js');
  });

  it('finds the tests that import a changed Python module, and last time’s failures by their pytest ids', () => {
    const repo = fixtureRepo({
      'pkg/__init__.py': '',
      'pkg/core.py': 'def f():\n    return 1\n',
      'pkg/other.py': 'def g():\n    return 2\n',
      'tests/test_core.py': 'from pkg.core import f\n\ndef test_f():\n    assert f() == 1\n',
      'tests/test_other.py': 'from pkg import other\n\ndef test_g():\n    assert other.g() == 2\n',
      'tests/test_unrelated.py': 'def test_h():\n    assert True\n',
    });
    const focus = focusIn(repo.dir, {
      changed: ['pkg/core.py'],
      lastFailures: lastFailuresOf({
        command: 'python3 -m pytest',
        setup: null,
        passed: false,
        new_failures: ['tests/test_other.py::test_g', '(exit code 1)'],
        fixed: [],
        preexisting_failures: [],
        duration_ms: 1,
        log_tail: '',
      }),
    });
    expect(focus.files).toEqual(['tests/test_other.py', 'tests/test_core.py']);
    expect(focus.reasons['tests/test_core.py']).toBe('imports a changed module');
  });

  it('bounds the count, changed files first', () => {
    const testFiles = Array.from({ length: 60 }, (_, i) => `test/t${String(i).padStart(2, '0')}.test.js`);
    const imports = new Map(testFiles.map((t) => [t, ['src/m.js']]));
    const focus = selectFocus({
      changed: ['src/m.js', 'test/t59.test.js'],
      lastFailures: [],
      testFiles,
      imports,
      max: 10,
    });
    expect(focus.files).toHaveLength(10);
    expect(focus.files[0]).toBe('test/t59.test.js');
    expect(focus.leftOut).toBe(50);
  });

  it('leaves out names a runner would misread, and quotes every other one so no name reaches the shell', () => {
    const hostile = [
      "test/it's.test.js",
      'test/$(touch pwned).test.js',
      'test/a;touch pwned2;.test.js',
      'test/`touch pwned3`.test.js',
      '-rf.test.js',
      'test/sp ace.test.js',
    ];
    const misread = ['test/*.test.js', 'test/a\nb.test.js', 'tests/x.py::test_y'];
    const focus = selectFocus({
      changed: [...hostile, ...misread],
      lastFailures: [],
      testFiles: [...hostile, ...misread],
      imports: new Map(),
    });
    expect(focus.files).toEqual(hostile);
    expect(focus.unsafe).toEqual(misread);
    const built = focusedCommand(detected('pytest', 'python3 -m pytest'), "printf '[%s]\\n'", focus.files);
    if (!('command' in built)) throw new Error(built.refused);
    // Run by a real shell: every name arrives as one argument, as written, and nothing in it ran.
    const dir = mkdtempSync(join(tmpdir(), 'emend-focus-quote-'));
    try {
      const out = execFileSync('sh', ['-c', built.command], { cwd: dir, encoding: 'utf8' });
      expect(out.trim().split('\n')).toEqual(hostile.map((h) => `[${h.startsWith('-') ? `./${h}` : h}]`));
      expect(readdirSync(dir)).toEqual([]);
      expect(existsSync(join(dir, 'pwned'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(shellWord("a'b")).toBe(`'a'\\''b'`);
  });

  it('under a runner that reads a file as a part of a path (vitest), leaves out a file whose name picks others too', () => {
    const testFiles = [
      'test/a.test.js',
      'legacy/test/a.test.js',
      'test/A.test.jsx',
      'test/b.test.js',
      'test/c.test.js',
    ];
    const input = { changed: ['test/a.test.js', 'test/b.test.js'], lastFailures: [], testFiles, imports: new Map() };
    const vitest = selectFocus({ ...input, substrings: true });
    // `test/a.test.js` is part of legacy/test/a.test.js (and, case aside, of test/A.test.jsx).
    expect(vitest.files).toEqual(['test/b.test.js']);
    expect(vitest.ambiguous).toEqual(['test/a.test.js']);
    expect(selectFocus(input).files).toEqual(['test/a.test.js', 'test/b.test.js']);
  });
});

describe('the focused pass: the command', () => {
  const files = ['test/a.test.js'];
  it('appends the files where a runner takes them as "only these"', () => {
    expect(focusedCommand(detected('pytest', 'python3 -m pytest'), 'python3 -m pytest -v', ['t/test_a.py'])).toEqual({
      command: "python3 -m pytest -v 't/test_a.py'",
    });
    expect(focusedCommand(detected('jest'), 'npm test -- --verbose', files, 'jest --ci')).toEqual({
      command: "npm test -- --verbose --runTestsByPath 'test/a.test.js'",
    });
    expect(focusedCommand(detected('node-test'), 'npm test -- --test-reporter=tap', files, 'node --test')).toEqual({
      command: "npm test -- --test-reporter=tap 'test/a.test.js'",
    });
    expect(focusedCommand(detected('mocha'), 'npm test', files, 'mocha --require ./setup.js')).toEqual({
      command: "npm test -- 'test/a.test.js'",
    });
    expect(focusedCommand(detected('vitest'), 'npm test -- --reporter=verbose', files, 'vitest run')).toHaveProperty(
      'command',
    );
  });

  it('refuses where files are not "only these": a script naming its own, an override, another runner', () => {
    expect(focusedCommand(detected('mocha'), 'npm test -- --timeout 5', files, 'mocha', '.mocharc.json')).toEqual({
      refused: "mocha's configuration (.mocharc.json) names its own test files: more files would add to them",
    });
    expect(focusedCommand(detected('mocha'), 'npm test -- --timeout 5', files, 'mocha test/unit')).toEqual({
      refused: 'the test script names its own test files (test/unit): more files would add to them',
    });
    expect(focusedCommand({ ...detected('none'), source: 'setting' }, 'make check', files)).toHaveProperty('refused');
    expect(focusedCommand(detected('go', 'go test -json ./...'), 'go test -json ./...', ['a_test.go'])).toHaveProperty(
      'refused',
    );
    expect(focusedCommand(detected('pytest', 'python3 -m pytest'), 'python3 -m pytest', [])).toEqual({
      refused: 'no test file to focus on',
    });
  });
});

describe('the focused pass: a mocha configuration that names its own test files', () => {
  afterAll(() => removeFixtureRepos());
  const pkg = (extra: object = {}) => JSON.stringify({ name: 'x', scripts: { test: 'mocha' }, ...extra });

  it('is found in the first .mocharc mocha reads, the file --config names, or package.json', () => {
    const rc = fixtureRepo({
      'package.json': pkg(),
      '.mocharc.yml': 'spec:\n  - test/**/*.spec.js\n',
      '.mocharc.json': '{"timeout": 5}',
    });
    expect(mochaSpecIn(rc.dir, 'mocha')).toBe('.mocharc.yml');
    expect(mochaSpecIn(rc.dir, 'mocha --no-config')).toBeUndefined();
    const named = fixtureRepo({ 'package.json': pkg(), 'config/mocha.json': '{"spec": "test"}' });
    expect(mochaSpecIn(named.dir, 'mocha --config ./config/mocha.json')).toBe('config/mocha.json');
    expect(mochaSpecIn(named.dir, 'mocha')).toBeUndefined();
    const inPackage = fixtureRepo({ 'package.json': pkg({ mocha: { spec: ['test'] } }) });
    expect(mochaSpecIn(inPackage.dir, 'mocha')).toBe('package.json');
    expect(mochaSpecIn(inPackage.dir, 'mocha --no-package')).toBeUndefined();
    const none = fixtureRepo({ 'package.json': pkg({ mocha: { timeout: 5 } }), '.mocharc.json': '{"timeout": 5}' });
    expect(mochaSpecIn(none.dir, 'mocha')).toBeUndefined();
  });
});
