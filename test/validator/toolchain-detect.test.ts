import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfinedDir } from '../../src/checkout/confined-fs.js';
import { type TestRecipe, detectTestRecipe } from '../../src/environments/detect.js';
import { nodeWants } from '../../src/environments/node-wants.js';
import { pythonDeclared } from '../../src/environments/python-deps.js';
import { pythonSetup } from '../../src/environments/python-setup.js';
import { describeMissing, missingToolchain, readFacts } from '../../src/environments/toolchains.js';
import { type Files, writeFiles } from '../support/fixture-repos.js';

// What a repository declares it needs, read from its files (no sandbox, nothing run), and
// what is missing given what the sandbox has.

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function tree(files: Files): string {
  const dir = mkdtempSync(join(tmpdir(), 'emend-toolchain-detect-'));
  dirs.push(dir);
  writeFiles(dir, files);
  return dir;
}
const declared = (files: Files) => pythonDeclared(new ConfinedDir(tree(files), { exclude: ['.git'] }));
const wants = (files: Files, pm: 'npm' | 'pnpm' | 'yarn' = 'npm') => {
  const dir = tree(files);
  return nodeWants(new ConfinedDir(dir), JSON.parse(files['package.json'] ?? '{}'), pm);
};

describe('a Python repository’s declared test dependencies', () => {
  it('reads pyproject test extras and dependency groups (with included groups), setup.cfg extras and tox deps', () => {
    const d = declared({
      'pyproject.toml': [
        '[project]',
        'name = "x"',
        '[project.optional-dependencies]',
        'test = ["hypothesis"]',
        'docs = ["sphinx"]',
        '[dependency-groups]',
        'lint = ["ruff"]',
        'test = ["coverage>=7", { include-group = "typing" }]',
        'typing = ["mypy"]',
      ].join('\n'),
      'setup.cfg': '[options.extras_require]\ntesting =\n    mock\nall = foo\n',
      'tox.ini':
        '[testenv]\ndeps =\n    pytest-xdist  # parallel\n    -rrequirements-ci.txt\n    {[base]deps}\n    --index-url=http://x\n' +
        // for some environments only: not the base test environment's, and pip refuses the syntax
        '    numpy: numpy\n    !py37,py38-click7: click<8\n    pexpect: pexpect\n',
      'requirements-dev.txt': 'flake8\n',
    });
    expect(d).toEqual({
      requirementFiles: ['requirements-dev.txt'],
      installable: true,
      extras: ['test', 'testing'],
      requirements: [['coverage>=7'], ['mypy'], ['pytest-xdist'], ['-r', 'requirements-ci.txt']],
    });
  });

  it('quotes what the repository wrote, so it never becomes shell syntax, and installs pytest where tests use it', () => {
    const setup = pythonSetup(
      { requirementFiles: [], installable: false, extras: [], requirements: [["x; rm -rf / #'"]] },
      true,
    );
    expect(setup?.command).toBe(
      'python3 -m venv --system-site-packages "$HOME/.venv" && "$HOME/.venv/bin/python" -m pip install --quiet ' +
        `'x; rm -rf / #'\\''' && { "$HOME/.venv/bin/python" -c 'import pytest' 2>/dev/null || ` +
        '"$HOME/.venv/bin/python" -m pip install --quiet pytest; }',
    );
    expect(setup?.onlyFor).toBeUndefined();
  });

  it('with nothing declared, plans a venv with pytest only for pytest tests, marked as needed only without pytest', () => {
    expect(detectTestRecipe(tree({ 'test_a.py': 'def test_a(): pass\n' }))?.setup).toEqual({
      command:
        `python3 -m venv --system-site-packages "$HOME/.venv" && { "$HOME/.venv/bin/python" -c 'import pytest' ` +
        '2>/dev/null || "$HOME/.venv/bin/python" -m pip install --quiet pytest; }',
      onlyFor: 'pytest',
    });
    expect(
      detectTestRecipe(
        tree({ 'test_a.py': 'import unittest\nclass T(unittest.TestCase):\n  def test_a(self): pass\n' }),
      )?.setup,
    ).toBeNull();
  });
});

describe('a Node repository’s toolchain', () => {
  it('takes volta’s pin, then .nvmrc, then .node-version, then engines.node; passes over nvm aliases', () => {
    const pkg = (o: object) => JSON.stringify({ name: 'x', ...o });
    expect(wants({ 'package.json': pkg({ volta: { node: '18.20.8' } }), '.nvmrc': '20\n' }).node).toEqual({
      range: '18.20.8',
      from: 'package.json volta.node',
    });
    expect(wants({ 'package.json': pkg({ engines: { node: '>=20' } }), '.nvmrc': 'v18\n' }).node).toEqual({
      range: '18',
      from: '.nvmrc',
    });
    expect(wants({ 'package.json': pkg({}), '.nvmrc': 'lts/*\n', '.node-version': '22.1' }).node).toEqual({
      range: '22.1',
      from: '.node-version',
    });
    expect(wants({ 'package.json': pkg({ engines: { node: '>=18 <21' } }) }).node?.range).toBe('>=18 <21');
    expect(wants({ 'package.json': pkg({ engines: { node: 'node' } }) })).toEqual({});
  });

  it('without a version in package.json or a version file, takes the versions its own CI tests on where a lockfile pins what CI installed', () => {
    const pkg = JSON.stringify({ name: 'x' });
    const lock = { 'package-lock.json': JSON.stringify({ lockfileVersion: 2 }) };
    // Travis's node_js as a block list, as dayjs's: any of them, the newest where the sandbox's is not one
    const travis = "language: node_js\nnode_js:\n  - '14'\n  - '12'\n  - node\n  - 10 # old\ninstall:\n  - npm i\n";
    expect(wants({ ...lock, 'package.json': pkg, '.travis.yml': travis }).node).toEqual({
      range: '14 || 12 || 10',
      from: '.travis.yml node_js',
    });
    expect(wants({ ...lock, 'package.json': pkg, '.travis.yml': 'node_js: [8, "10"]\n' }).node?.range).toBe('8 || 10');
    // GitHub Actions: a matrix the setup-node step names, or a literal version
    const matrix =
      'jobs:\n  test:\n    strategy:\n      matrix:\n        node-version: [16.x, 18.x]\n    steps:\n' +
      `      - uses: actions/setup-node@v4\n        with:\n          node-version: $\{{ matrix.node-version }}\n`;
    expect(wants({ ...lock, 'package.json': pkg, '.github/workflows/ci.yml': matrix }).node).toEqual({
      range: '16.x || 18.x',
      from: '.github/workflows/ci.yml node-version',
    });
    const literal =
      'jobs:\n  t:\n    steps:\n      - uses: actions/setup-node@v4\n        with:\n          node-version: "lts/*"\n';
    expect(wants({ ...lock, 'package.json': pkg, '.github/workflows/ci.yml': literal }).node).toBeUndefined();
    // engines.node is a range the package works with: the CI's versions within it come first (as
    // eslint's `^10.12.0 || >=12.0.0` tested on 15.x … 10.x), and engines alone where none is within
    const eslint = 'jobs:\n  t:\n    strategy:\n      matrix:\n        node: [15.x, 14.x, 10.x, "10.12.0"]\n';
    expect(
      wants({
        ...lock,
        'package.json': JSON.stringify({ name: 'x', engines: { node: '^10.12.0 || >=12.0.0' } }),
        '.github/workflows/ci.yml': eslint,
      }).node,
    ).toEqual({
      range: '15.x || 14.x || 10.x || 10.12.0',
      from: '.github/workflows/ci.yml node-version (within package.json engines.node)',
    });
    expect(
      wants({
        ...lock,
        'package.json': JSON.stringify({ name: 'x', engines: { node: '>=18' } }),
        '.travis.yml': travis,
      }).node,
    ).toEqual({ range: '>=18', from: 'package.json engines.node' });
    // a version file someone wrote comes before both
    expect(wants({ ...lock, 'package.json': pkg, '.nvmrc': '16\n', '.travis.yml': travis }).node?.from).toBe('.nvmrc');
    // yarn's and pnpm's lockfiles pin it too
    expect(wants({ 'package.json': pkg, 'yarn.lock': '', '.travis.yml': travis }, 'yarn').node?.range).toBe(
      '14 || 12 || 10',
    );
    // without a lockfile the install resolves today's packages, written for today's Node: CI's
    // Node of the time is passed over (github-readme-stats' CI Node 12 cannot parse a 2024
    // dependency's optional chaining), and engines.node still counts
    expect(wants({ 'package.json': pkg, '.travis.yml': travis }).node).toBeUndefined();
    expect(wants({ 'package.json': pkg, '.github/workflows/ci.yml': matrix }).node).toBeUndefined();
    expect(
      wants({ 'package.json': JSON.stringify({ name: 'x', engines: { node: '>=18' } }), '.travis.yml': travis }).node,
    ).toEqual({ range: '>=18', from: 'package.json engines.node' });
  });

  it('takes pnpm and yarn at the version packageManager names, else a major for the lockfile', () => {
    const pkg = (o: object) => JSON.stringify({ name: 'x', ...o });
    expect(wants({ 'package.json': pkg({ packageManager: 'pnpm@9.1.0+sha512.abc' }) }, 'pnpm').packageManager).toEqual({
      name: 'pnpm',
      version: '9.1.0',
      from: 'package.json packageManager',
    });
    expect(
      wants({ 'package.json': pkg({}), 'pnpm-lock.yaml': "lockfileVersion: '6.0'\n" }, 'pnpm').packageManager,
    ).toMatchObject({ name: 'pnpm', version: '8' });
    expect(wants({ 'package.json': pkg({}), 'yarn.lock': '' }, 'yarn').packageManager).toMatchObject({
      name: 'yarn',
      version: '1',
    });
    expect(wants({ 'package.json': pkg({}), '.yarnrc.yml': '' }, 'yarn').packageManager?.version).toBe('4');
    // npm is the sandbox's own
    expect(wants({ 'package.json': pkg({ packageManager: 'npm@10.0.0' }) }, 'npm')).toEqual({});
  });
});

describe('a missing toolchain', () => {
  const recipe = (o: Partial<TestRecipe>): TestRecipe => ({
    runner: 'pytest',
    source: 'detected',
    command: 'python3 -m pytest',
    perTest: { kind: 'pytest' },
    setup: null,
    ...o,
  });
  const venvSetup = { command: 'python3 -m venv …' };

  it('names the toolchain and the command that installs it', () => {
    const go = recipe({ runner: 'go', command: 'go test -json ./...', perTest: { kind: 'go' } });
    const missing = missingToolchain(go, readFacts('python=3.11.2\n', ['python', 'go']), true);
    expect(missing).toEqual({ toolchain: 'go', because: 'go.mod', install: 'apt-get install golang-go' });
    expect(describeMissing(missing!)).toBe(
      'this repository needs go (go.mod), which the sandbox does not have: install it on the server ' +
        '(apt-get install golang-go); the change could not be validated',
    );
    expect(missingToolchain(go, { go: '1.22.1' }, true)).toBeUndefined();
  });

  it('asks for python3-venv only when a setup will make a virtualenv, and pytest only when nothing can provide it', () => {
    const declared = recipe({ setup: venvSetup });
    expect(missingToolchain(declared, { python: '3.11.2', pytest: '7.2.1' }, true)?.install).toBe(
      'apt-get install python3-venv',
    );
    // without network for setup there is no install, so no virtualenv either
    expect(missingToolchain(declared, { python: '3.11.2', pytest: '7.2.1' }, false)).toBeUndefined();
    // no pytest: the setup installs it where it can make a venv and reach an index
    expect(missingToolchain(declared, { python: '3.11.2', venv: 'yes' }, true)).toBeUndefined();
    expect(missingToolchain(declared, { python: '3.11.2', venv: 'yes' }, false)?.install).toBe(
      'apt-get install python3-pytest',
    );
    expect(missingToolchain(recipe({}), {}, true)?.install).toBe('apt-get install python3');
  });
});
