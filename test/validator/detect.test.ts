import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type TestRecipe,
  commandWithTimeouts,
  detectTestRecipe,
  readProbe,
  runnableCommand,
  scriptTimeoutStyle,
} from '../../src/environments/detect.js';
import { type Files, writeFiles } from '../support/fixture-repos.js';

const dirs: string[] = [];
function tree(files: Files): string {
  const dir = mkdtempSync(join(tmpdir(), 'emend-detect-'));
  dirs.push(dir);
  writeFiles(dir, files);
  return dir;
}
const pkg = (o: Record<string, unknown>) => JSON.stringify({ name: 'x', ...o });
const detect = (files: Files, testCommand?: string) => detectTestRecipe(tree(files), { testCommand });

describe('test command detection', () => {
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('takes package.json’s test script, through the package manager its lockfile names', () => {
    expect(detect({ 'package.json': pkg({ scripts: { test: 'node --test' } }) })).toMatchObject({
      runner: 'node',
      command: 'npm test',
      setup: null,
      perTest: { kind: 'node-test' },
    });
    expect(detect({ 'package.json': pkg({ scripts: { test: 'jest' } }), 'pnpm-lock.yaml': '' })?.command).toBe(
      'pnpm run test',
    );
    expect(detect({ 'package.json': pkg({ scripts: { test: 'mocha' } }), 'yarn.lock': '' })?.command).toBe(
      'yarn run test',
    );
    // npm init's placeholder is no test script
    expect(
      detect({ 'package.json': pkg({ scripts: { test: 'echo "Error: no test specified" && exit 1' } }) }),
    ).toBeUndefined();
  });

  it('builds before the tests where the entry point package.json names is not in the tree, as a CI does', () => {
    // a failed build is said and the tests run on: many load their sources, not the build
    const NPM_BUILD = "|| npm run build || echo 'emend: npm run build failed (above); the tests run without it' >&2; }";
    const YARN_BUILD =
      "|| yarn run build || echo 'emend: yarn run build failed (above); the tests run without it' >&2; }";
    const built = { main: './build/index.js', scripts: { build: 'node tools/build.js', test: 'mocha test' } };
    const recipe = detect({ 'package.json': pkg(built) });
    const build = `{ [ -e 'build/index.js' ] ${NPM_BUILD}`;
    expect(recipe?.build).toBe(build);
    expect(runnableCommand(recipe!)).toBe(`${build} && npm test`);
    // the timeout flags still go to the test script, after the build
    expect(commandWithTimeouts(recipe!, 60, 600, {})).toBe(`${build} && npm test -- --timeout 60000`);
    expect(
      detect({ 'package.json': pkg({ ...built, main: undefined, exports: { '.': './dist/x.js' } }), 'yarn.lock': '' })
        ?.build,
    ).toBe(`{ [ -e 'dist/x.js' ] ${YARN_BUILD}`);
    // the entry point is there, the tests build already, there is no build, or the path leaves the package: none
    expect(detect({ 'package.json': pkg(built), 'build/index.js': '' })?.build).toBeUndefined();
    expect(
      detect({ 'package.json': pkg({ ...built, scripts: { ...built.scripts, pretest: 'npm run build' } }) })?.build,
    ).toBeUndefined();
    expect(detect({ 'package.json': pkg({ ...built, scripts: { test: 'mocha test' } }) })?.build).toBeUndefined();
    expect(detect({ 'package.json': pkg({ ...built, main: '../outside.js' }) })?.build).toBeUndefined();
    // a path is quoted for the shell whatever it holds
    expect(detect({ 'package.json': pkg({ ...built, main: "it's $(here).js" }) })?.build).toBe(
      `{ [ -e 'it'\\''s $(here).js' ] ${NPM_BUILD}`,
    );
    // a command the repository or the workspace chose is run as it is
    expect(detect({ 'package.json': pkg(built), '.emend/test': 'npm test\n' })?.build).toBeUndefined();
  });

  it('gives a jasmine script the helper that names every spec, whatever its flags', () => {
    const recipe = detect({ 'package.json': pkg({ scripts: { test: 'jasmine --config=jasmine.json' } }) });
    expect(recipe?.perTest).toEqual({ kind: 'jasmine' });
    expect(commandWithTimeouts(recipe!, 60, 600, {})).toBe(
      'npm test -- --helper=/workspace/emend/emend-jasmine-specs.js',
    );
    // jasmine 4.0 to 4.5 crash on --helper; from 4 it is loaded with --require
    expect(readProbe('jasmine 4.1.0\n')).toMatchObject({ jasmineVersion: [4, 1] });
    expect(commandWithTimeouts(recipe!, 60, 600, readProbe('jasmine 4.1.0\n'))).toBe(
      'npm test -- --require=/workspace/emend/emend-jasmine-specs.js',
    );
    expect(commandWithTimeouts(recipe!, 60, 600, readProbe('jasmine 3.10.0\n'))).toMatch(/--helper=/);
    // a script whose last command is not jasmine gets nothing
    expect(detect({ 'package.json': pkg({ scripts: { test: 'jasmine && eslint .' } }) })?.perTest).toEqual({
      kind: 'none',
    });
  });

  it('installs dependencies only when there are some and node_modules is not there', () => {
    const withDeps = { 'package.json': pkg({ scripts: { test: 'jest' }, devDependencies: { jest: '^29' } }) };
    expect(detect({ ...withDeps, 'package-lock.json': '{}' })?.setup).toEqual({
      command: 'npm ci --no-audit --no-fund',
      offlineCommand: 'npm ci --offline --no-audit --no-fund',
    });
    // without a lockfile the install resolves as of the base commit's date (validate adds --before)
    expect(detect(withDeps)?.setup).toEqual({ command: 'npm install --no-audit --no-fund', resolveAsOf: true });
    expect(detect({ ...withDeps, 'node_modules/jest/package.json': '{}' })?.setup).toBeNull();
    expect(detect({ 'package.json': pkg({ scripts: { test: 'node --test' }, dependencies: {} }) })?.setup).toBeNull();
  });

  it('adds per-test timeouts only to scripts whose shape it knows', () => {
    expect(scriptTimeoutStyle('node --test')).toEqual({ kind: 'node-test' });
    expect(scriptTimeoutStyle('NODE_ENV=test node --import tsx --test')).toEqual({ kind: 'node-test' });
    // node reads no options after a file argument
    expect(scriptTimeoutStyle('node --test test/')).toEqual({ kind: 'none' });
    expect(scriptTimeoutStyle('jest --ci')).toEqual({ kind: 'jest' });
    expect(scriptTimeoutStyle('vitest run')).toEqual({ kind: 'vitest' });
    expect(scriptTimeoutStyle('vitest watch')).toEqual({ kind: 'none' });
    expect(scriptTimeoutStyle('mocha')).toEqual({ kind: 'mocha' });
    // npm appends the arguments to the script's end: they reach its last command
    expect(scriptTimeoutStyle('npm run build && node --test')).toEqual({ kind: 'node-test' });
    expect(scriptTimeoutStyle('TZ=Europe/London npm run test-tz && npm run lint && jest')).toEqual({ kind: 'jest' });
    expect(scriptTimeoutStyle('npm run lint; mocha')).toEqual({ kind: 'mocha' });
    expect(scriptTimeoutStyle('jest && npm run lint')).toEqual({ kind: 'none' });
    expect(scriptTimeoutStyle('sh -c "npm run build && jest"')).toEqual({ kind: 'none' });
    expect(scriptTimeoutStyle('jest > out.txt')).toEqual({ kind: 'none' });
    expect(scriptTimeoutStyle('(npm run build && jest)')).toEqual({ kind: 'none' });
    expect(scriptTimeoutStyle('npm run build && $(npm bin)/jest')).toEqual({ kind: 'none' });
    // a runner's entry point started by node
    expect(scriptTimeoutStyle('node --experimental-vm-modules node_modules/jest/bin/jest.js --coverage')).toEqual({
      kind: 'jest',
    });
    expect(scriptTimeoutStyle('node node_modules/.bin/_mocha test/')).toEqual({ kind: 'mocha' });
    expect(scriptTimeoutStyle('node scripts/test.js')).toEqual({ kind: 'none' });
  });

  it('builds the command with timeout flags the sandbox’s tools support', () => {
    const node: TestRecipe = {
      runner: 'node',
      source: 'detected',
      command: 'npm test',
      perTest: { kind: 'node-test' },
      setup: null,
    };
    expect(commandWithTimeouts(node, 30, 600, { nodeVersion: [20, 20] })).toBe(
      'npm test -- --test-reporter=tap --test-timeout=30000 --test-force-exit',
    );
    expect(commandWithTimeouts(node, 30, 600, { nodeVersion: [20, 12] })).toBe(
      'npm test -- --test-reporter=tap --test-timeout=30000',
    );
    expect(commandWithTimeouts(node, 30, 600, { nodeVersion: [18, 19] })).toBe('npm test -- --test-reporter=tap');
    expect(commandWithTimeouts(node, 30, 600, { nodeVersion: [22, 1] })).toContain('--test-force-exit');
    const pytest: TestRecipe = {
      runner: 'pytest',
      source: 'detected',
      command: 'python3 -m pytest',
      perTest: { kind: 'pytest' },
      setup: null,
    };
    expect(commandWithTimeouts(pytest, 30, 600, { pytestTimeout: false })).toBe(
      'python3 -m pytest -v -rA -p no:cacheprovider --continue-on-collection-errors -o faulthandler_timeout=30',
    );
    expect(commandWithTimeouts(pytest, 30, 600, { pytestTimeout: true })).toContain(' -o timeout=30');
    expect(commandWithTimeouts(pytest, 30, 600, { pytestTimeout: false }, { pytestProgress: true })).toBe(
      'python3 -m pytest -v -rA -p no:cacheprovider --continue-on-collection-errors -p emend_progress -o faulthandler_timeout=30',
    );
    expect(commandWithTimeouts(node, 30, 600, { nodeVersion: [20, 20] }, { pytestProgress: true })).not.toContain(
      'emend_progress',
    );
    const go: TestRecipe = {
      runner: 'go',
      source: 'detected',
      command: 'go test -json ./...',
      perTest: { kind: 'go' },
      setup: null,
    };
    expect(commandWithTimeouts(go, 30, 600, {})).toBe('go test -timeout 540s -json ./...');
    const yarnJest: TestRecipe = {
      runner: 'node',
      source: 'detected',
      command: 'yarn run test',
      perTest: { kind: 'jest' },
      setup: null,
    };
    expect(commandWithTimeouts(yarnJest, 5, 600, {})).toBe('yarn run test --testTimeout=5000 --verbose');
    // jest before 24.9 refuses the whole run for --testTimeout
    expect(commandWithTimeouts(yarnJest, 5, 600, { jestVersion: [22, 4] })).toBe('yarn run test --verbose');
    expect(commandWithTimeouts(yarnJest, 5, 600, { jestVersion: [29, 7] })).toBe(
      'yarn run test --testTimeout=5000 --verbose',
    );
    expect(readProbe('jest 22.4.3\n')).toMatchObject({ jestVersion: [22, 4], nodeVersion: undefined });
    expect(readProbe('no-jest\n').jestVersion).toBeUndefined();
  });

  it('detects pytest, unittest and tox', () => {
    expect(detect({ 'pytest.ini': '[pytest]\n', 'test_a.py': 'def test_a(): pass\n' })).toMatchObject({
      runner: 'pytest',
      command: 'python3 -m pytest',
    });
    expect(detect({ 'tests/test_a.py': 'import pytest\n' })?.runner).toBe('pytest');
    expect(
      detect({ 'tests/test_a.py': 'import unittest\nclass T(unittest.TestCase):\n    def test_a(self): pass\n' }),
    ).toMatchObject({
      runner: 'unittest',
      command: 'python3 -m unittest discover -v',
    });
    expect(detect({ 'tox.ini': '[tox]\nenvlist = py3\n[testenv]\ncommands = python -m unittest\n' })?.runner).toBe(
      'tox',
    );
    expect(detect({ 'tox.ini': '[tox]\n[testenv]\ncommands = pytest\n', 'test_a.py': '' })?.runner).toBe('pytest');
    expect(detect({ 'requirements.txt': 'requests\n', 'test_a.py': 'def test_a(): pass\n' })?.setup).toEqual({
      command:
        'python3 -m venv --system-site-packages "$HOME/.venv" && "$HOME/.venv/bin/python" -m pip install --quiet ' +
        `-r 'requirements.txt' && { "$HOME/.venv/bin/python" -c 'import pytest' 2>/dev/null || ` +
        '"$HOME/.venv/bin/python" -m pip install --quiet pytest; }',
    });
  });

  it('detects go, cargo, Maven, Gradle and make', () => {
    expect(detect({ 'go.mod': 'module ex\n\ngo 1.22\n' })).toMatchObject({ runner: 'go', setup: null });
    expect(detect({ 'go.mod': 'module ex\n\nrequire golang.org/x/text v0.3.0\n' })?.setup).toEqual({
      command: 'go mod download',
    });
    expect(detect({ 'Cargo.toml': '[package]\nname = "x"\n' })).toMatchObject({
      runner: 'cargo',
      command: 'cargo test --offline',
      setup: { command: 'cargo fetch' },
    });
    expect(detect({ 'pom.xml': '<project/>' })).toMatchObject({ runner: 'maven', command: 'mvn -B test' });
    expect(detect({ 'build.gradle.kts': '', gradlew: '#!/bin/sh\n' })).toMatchObject({
      runner: 'gradle',
      command: './gradlew --no-daemon --offline test',
    });
    expect(detect({ Makefile: 'build:\n\tcc x.c\n\ntest: build\n\t./run-tests\n' })).toMatchObject({
      runner: 'make',
      command: 'make test',
    });
    expect(detect({ Makefile: 'build:\n\tcc x.c\n' })).toBeUndefined();
  });

  it(
    'lets .emend/test win over the remembered command, which wins over detection; setup still comes from ' +
      'detection',
    () => {
      const files = {
        'package.json': pkg({ scripts: { test: 'jest' }, devDependencies: { jest: '^29' } }),
        'package-lock.json': '{}',
      };
      expect(detect(files, 'npm run test:unit')).toMatchObject({
        source: 'memory',
        command: 'npm run test:unit',
        perTest: { kind: 'none' },
        setup: { command: 'npm ci --no-audit --no-fund' },
      });
      // Detection's own command as the validator ran it (repo memory keeps the flags): detection's
      // recipe, which adds the flags again, not the command run as written.
      for (const remembered of ['npm test', 'npm test -- --testTimeout=60000 --verbose'])
        expect(detect(files, remembered)).toMatchObject({
          source: 'detected',
          command: 'npm test',
          perTest: { kind: 'jest' },
          setup: { command: 'npm ci --no-audit --no-fund' },
        });
      expect(detect(files, 'npm testing')).toMatchObject({ source: 'memory', command: 'npm testing' });
      const withFile = {
        ...files,
        '.emend/test': '# how to test this repository\n\nnpm run test:ci -- --runInBand\nignored second line\n',
      };
      expect(detect(withFile, 'npm run test:unit')).toMatchObject({
        source: 'repo-file',
        command: 'npm run test:ci -- --runInBand',
        runner: 'node',
      });
      expect(detect({ 'README.md': '' }, './check.sh')).toMatchObject({
        source: 'memory',
        command: './check.sh',
        runner: undefined,
        setup: null,
      });
      expect(detect({ 'README.md': '', '.emend/test': '# nothing yet\n' })).toBeUndefined();
    },
  );

  it('takes the test command from the setting, .emend/test, memory, then detection, in that order', () => {
    const files = {
      'package.json': pkg({ scripts: { test: 'jest' }, devDependencies: { jest: '^29' } }),
      'package-lock.json': '{}',
      '.emend/test': 'npm run test:ci\n',
    };
    const dir = tree(files);
    const settings = { testCommand: 'npm run test:setting' };
    expect(detectTestRecipe(dir, { testCommand: 'npm run test:memory', settings })).toMatchObject({
      source: 'setting',
      command: 'npm run test:setting',
      setup: { command: 'npm ci --no-audit --no-fund' },
    });
    expect(detectTestRecipe(dir, { testCommand: 'npm run test:memory' })).toMatchObject({ source: 'repo-file' });
    const noFile = tree({ ...files, '.emend/test': '# none\n' });
    expect(detectTestRecipe(noFile, { testCommand: 'npm run test:memory' })).toMatchObject({ source: 'memory' });
    expect(detectTestRecipe(noFile, {})).toMatchObject({ source: 'detected', command: 'npm test' });
    // a setting names a test command even where nothing is detected
    expect(detectTestRecipe(tree({ 'README.md': '' }), { settings: { testCommand: 'make check' } })).toMatchObject({
      source: 'setting',
      command: 'make check',
      setup: null,
    });
  });

  it('runs .emend/setup after the detected install, or instead of it when its first line says so', () => {
    const files = {
      'package.json': pkg({ scripts: { test: 'jest' }, devDependencies: { jest: '^29' } }),
      'package-lock.json': '{}',
    };
    expect(detect({ ...files, '.emend/setup': 'npm run build\n' })).toMatchObject({
      setup: { command: 'npm ci --no-audit --no-fund' },
      extraSetup: ['sh .emend/setup'],
    });
    expect(
      detect({ ...files, '.emend/setup': '# emend: replace-detected-setup\nnpm ci --ignore-scripts\n' }),
    ).toMatchObject({ setup: null, extraSetup: ['sh .emend/setup'] });
    // the account's setup setting runs last
    expect(
      detectTestRecipe(tree({ ...files, '.emend/setup': 'npm run build\n' }), {
        settings: { setupCommand: './scripts/fetch-fixtures' },
      }),
    ).toMatchObject({ extraSetup: ['sh .emend/setup', './scripts/fetch-fixtures'] });
    expect(detect(files)?.extraSetup).toBeUndefined();
  });

  it('finds nothing in a repository without tests', () => {
    mkdirSync(join(tree({ 'README.md': '# hi\n' }), 'docs'));
    expect(detect({ 'README.md': '# hi\n', 'src/main.py': 'print(1)\n' })).toBeUndefined();
  });
});
