import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { setupFetch } from '../../src/sandbox/egress-fetch.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { detectTestRecipe } from '../../src/environments/detect.js';
import { prepareEnvironment } from '../../src/environments/environment.js';
import { ToolchainCache } from '../../src/environments/toolchain-cache.js';
import { validate } from '../../src/validator/validate.js';
import { GIT_ENV, fixtureRepo, fixtureSandbox, removeFixtureRepos } from '../support/fixture-repos.js';
import { oneDependencyLockfile, serveNpmRegistry } from '../support/npm-registry.js';
import { type PackageIndex, servePackageIndex } from '../support/python-index.js';
import { setupNetworkSandbox } from '../support/setup-network.js';

// The toolchains a repository needs, end to end in the real sandbox: Python dependencies from
// a package index the test serves on loopback, a node major fetched from the npm registry,
// npm's --before without a lockfile, and the verdict when a toolchain is missing.

/** Shared by test files and runs: node's tarball is ~40 MB, fetched once per machine. */
const TOOLCHAIN_CACHE = join(tmpdir(), 'emend-test-toolchains');

const js = (name: string, body: string) =>
  `const test = require('node:test');\nconst assert = require('node:assert');\ntest(${JSON.stringify(name)}, () => {\n${body}\n});\n`;

describe('toolchains for a repository', { timeout: 120_000 }, () => {
  let index: PackageIndex;
  let offline: Sandbox;
  let online: Sandbox;
  // Toolchains are fetched as the service fetches them: under the setup policy, with its defaults.
  const fetchToolchain = setupFetch(loadConfig({ EMEND_DATA_DIR: tmpdir() }).sandbox.setupAllow);
  beforeAll(async () => {
    index = await servePackageIndex([
      {
        name: 'emendfix-greet',
        version: '1.0',
        files: { 'emendfix_greet/__init__.py': 'def greet(name):\n    return "hello " + name\n' },
      },
      { name: 'emendfix-extra', version: '2.0', files: { 'emendfix_extra.py': 'EXTRA = 42\n' } },
    ]);
    offline = await fixtureSandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'off' });
    online = await setupNetworkSandbox([index.hostPort]);
  });
  afterAll(async () => {
    await index.close();
    removeFixtureRepos();
  });

  it('installs a Python repository’s declared dependencies from the index into a virtualenv its tests run in', async () => {
    const repo = fixtureRepo(
      {
        'requirements.txt': 'emendfix-greet==1.0\n',
        // a dependency group (PEP 735), without a [project]: nothing to build
        'pyproject.toml': '[dependency-groups]\ntest = ["emendfix-extra==2.0"]\n',
        'app.py': 'def shout(s):\n    return s.upper()\n',
        'test_app.py': [
          'import sys',
          'from emendfix_greet import greet',
          'from emendfix_extra import EXTRA',
          'from app import shout',
          '',
          'def test_shout():',
          '    assert shout(greet("x")) == "HELLO X" and EXTRA == 42',
          '',
          'def test_runs_in_the_venv():',
          '    assert sys.prefix.endswith("/.venv"), sys.prefix',
          '',
        ].join('\n'),
      },
      { 'app.py': 'def shout(s):\n    return str(s).upper()\n' },
    );
    const out = await validate(online, { dir: repo.dir, base: repo.base }, { setupEnv: { PIP_INDEX_URL: index.url } });
    expect(out.setup).toMatchObject({ exit_code: 0 });
    expect(out.setup!.command).toContain(`python3 -m venv --system-site-packages "$HOME/.venv"`);
    expect(out).toMatchObject({
      passed: true,
      new_failures: [],
      preexisting_failures: [],
      tests: { passed: 2, failed: 0 },
      baseline: { setup: 'ok', failures: [] },
    });
    expect(index.asked).toEqual(expect.arrayContaining(['emendfix-greet', 'emendfix-extra']));
  });

  it('installs no pytest where the sandbox’s python has it, and says which it found', async () => {
    const repo = fixtureRepo({ 'test_a.py': 'def test_a():\n    assert True\n' });
    const detected = detectTestRecipe(repo.dir)!;
    expect(detected.setup?.onlyFor).toBe('pytest');
    const env = await prepareEnvironment(online, detected);
    // python3-pytest is installed here (npm test's system check sees to it)
    expect(env.facts.pytest).toMatch(/^\d+\./);
    expect(env.recipe.setup).toBeNull();
    expect(env.missing).toBeUndefined();
  });

  it('runs node --test on the node major .nvmrc asks for, fetched from the npm registry and cached', async () => {
    const repo = fixtureRepo(
      {
        'package.json': JSON.stringify({ name: 'x', scripts: { test: 'node --test' } }),
        '.nvmrc': '18\n',
        'test/version.test.js': js('runs on node 18', "assert.equal(process.versions.node.split('.')[0], '18');"),
      },
      { 'index.js': 'module.exports = 1;\n' },
    );
    const cache = new ToolchainCache({ dir: TOOLCHAIN_CACHE, fetch: fetchToolchain });
    const started = performance.now();
    const out = await validate(offline, { dir: repo.dir, base: repo.base }, { toolchainCache: cache });
    // ~40 MB once per machine (about a second here), then the cache
    console.log(`node 18 validation: ${Math.round(performance.now() - started)} ms`);
    expect(out).toMatchObject({ passed: true, preexisting_failures: [], tests: { passed: 1, failed: 0 } });
    expect(out.message).toBeUndefined();
    expect(existsSync(join(TOOLCHAIN_CACHE, `node-linux-${process.arch}`))).toBe(true);

    // without the cache the sandbox's node runs it, and the note says so
    const without = await validate(offline, { dir: repo.dir, base: repo.base });
    expect(without.preexisting_failures).toEqual(['runs on node 18']);
    expect(without.message).toContain('node 18 (.nvmrc) is not fetched here');
  });

  it('runs pnpm at the version packageManager names, fetched from the npm registry', async () => {
    const repo = fixtureRepo({
      'package.json': JSON.stringify({ name: 'x', scripts: { test: 'node --test' }, packageManager: 'pnpm@9.1.0' }),
      'test/pm.test.js': js(
        'runs under pnpm 9.1.0',
        'assert.match(process.env.npm_config_user_agent, /^pnpm\\/9\\.1\\.0 /);',
      ),
    });
    const cache = new ToolchainCache({ dir: TOOLCHAIN_CACHE, fetch: fetchToolchain });
    const out = await validate(offline, { dir: repo.dir, base: repo.base }, { toolchainCache: cache });
    expect(out.command).toMatch(/^pnpm run test /);
    expect(out).toMatchObject({ passed: true, preexisting_failures: [], tests: { passed: 1, failed: 0 } });
  });

  it('resolves an install without a lockfile as of the base commit’s date (npm --before), without it where the registry has nothing that old, with npm 6’s peer resolution where npm refuses a conflict, and with npm install where the lockfile is out of step', async () => {
    const registry = await serveNpmRegistry({
      'emendfix-pick': [
        { version: '1.0.0', published: '2020-01-01T00:00:00.000Z', files: { 'index.js': 'module.exports = 1;\n' } },
        { version: '1.1.0', published: '2022-01-01T00:00:00.000Z', files: { 'index.js': 'module.exports = 2;\n' } },
      ],
      // wants emendfix-pick 2, which nobody has: npm 7+ refuses it (ERESOLVE), npm 6 installed it
      'emendfix-plugin': [
        {
          version: '1.0.0',
          published: '2020-01-01T00:00:00.000Z',
          files: { 'index.js': 'module.exports = "plugin";\n' },
          peerDependencies: { 'emendfix-pick': '^2.0.0' },
        },
      ],
    });
    // the local registry is reached through the egress proxy, named as an operator names one
    const throughProxy = await setupNetworkSandbox([new URL(registry.url).host]);
    const validateAsOf = (date: string, version: number, more: Record<string, string> = {}, lockfile?: string) => {
      const repo = fixtureRepo({
        'package.json': JSON.stringify({
          name: 'x',
          scripts: { test: 'node --test' },
          dependencies: { 'emendfix-pick': '^1.0.0', ...more },
        }),
        ...(lockfile ? { 'package-lock.json': lockfile } : {}),
        'test/pick.test.js': js('gets the version it should', `assert.equal(require('emendfix-pick'), ${version});`),
      });
      execFileSync('git', ['-C', repo.dir, 'commit', '-q', '--amend', '--no-edit'], {
        env: { ...GIT_ENV, GIT_COMMITTER_DATE: date },
      });
      const base = execFileSync('git', ['-C', repo.dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
      return validate(throughProxy, { dir: repo.dir, base }, { setupEnv: { npm_config_registry: registry.url } });
    };
    try {
      // the base commit as of 2021: the version of its time
      const asOf = await validateAsOf('2021-06-01T12:00:00Z', 1);
      expect(asOf.setup).toMatchObject({
        command: 'npm install --no-audit --no-fund --before=2021-06-01T12:00:00.000Z',
        exit_code: 0,
      });
      expect(asOf).toMatchObject({ passed: true, preexisting_failures: [], tests: { passed: 1, failed: 0 } });
      // as of 2019 the registry has no version (a mirror's publish dates are its own): npm says
      // ENOVERSIONS, and the newest version the range allows is installed instead
      const older = await validateAsOf('2019-06-01T12:00:00Z', 2);
      expect(older.setup).toMatchObject({ command: 'npm install --no-audit --no-fund', exit_code: 0 });
      expect(older).toMatchObject({ passed: true, preexisting_failures: [], tests: { passed: 1, failed: 0 } });
      // a peer dependency conflict npm 6 let through: installed with --legacy-peer-deps
      const peers = await validateAsOf('2021-06-01T12:00:00Z', 1, { 'emendfix-plugin': '^1.0.0' });
      expect(peers.setup).toMatchObject({
        command: 'npm install --no-audit --no-fund --before=2021-06-01T12:00:00.000Z --legacy-peer-deps',
        exit_code: 0,
      });
      expect(peers).toMatchObject({ passed: true, tests: { passed: 1, failed: 0 } });
      // a lockfile out of step with package.json: npm ci refuses it, npm install brings it up to date
      const stale = JSON.stringify({ name: 'x', lockfileVersion: 3, requires: true, packages: { '': { name: 'x' } } });
      const outOfStep = await validateAsOf('2021-06-01T12:00:00Z', 2, {}, stale);
      expect(outOfStep.setup).toMatchObject({ command: 'npm install --no-audit --no-fund', exit_code: 0 });
      expect(outOfStep).toMatchObject({ passed: true, tests: { passed: 1, failed: 0 } });
      // a lockfile pinning a version the registry does not serve (unpublished, or a mirror never
      // copied it): npm ci's 404, then the manifest's ranges resolved again without the lockfile
      const gone = oneDependencyLockfile('emendfix-pick', {
        version: '1.0.5',
        resolved: new URL('emendfix-pick/-/emendfix-pick-1.0.5.tgz', registry.url).href,
        integrity: `sha512-${Buffer.alloc(64).toString('base64')}`,
      });
      const unserved = await validateAsOf('2021-06-01T12:00:00Z', 2, {}, gone);
      expect(unserved.setup, unserved.setup?.log_tail).toMatchObject({
        command: 'rm -rf node_modules && npm install --no-package-lock --no-audit --no-fund',
        exit_code: 0,
      });
      expect(unserved.setup?.notes).toEqual([
        'the lockfile names emendfix-pick-1.0.5, which the registry does not serve (404); installed again with: npm install --no-package-lock --no-audit --no-fund',
      ]);
      expect(unserved).toMatchObject({ passed: true, tests: { passed: 1, failed: 0 } });
    } finally {
      await registry.close();
    }
  });

  it.skipIf(existsSync('/usr/bin/go'))(
    'names a missing toolchain and how to install it, instead of finding no tests',
    async () => {
      const repo = fixtureRepo({
        'go.mod': 'module example.com/x\n\ngo 1.22\n',
        'x_test.go': 'package x\n\nimport "testing"\n\nfunc TestX(t *testing.T) {}\n',
      });
      const out = await validate(offline, { dir: repo.dir, base: repo.base });
      expect(out).toMatchObject({
        passed: null,
        command: 'go test -json ./...',
        runner: 'go',
        message:
          'this repository needs go (go.mod), which the sandbox does not have: install it on the server ' +
          '(apt-get install golang-go); the change could not be validated',
      });
    },
  );
});
