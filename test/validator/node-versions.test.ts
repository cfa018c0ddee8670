import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { nativeBuildFailure } from '../../src/environments/native-build.js';
import { nodeCandidates } from '../../src/environments/node-versions.js';
import { ToolchainCache } from '../../src/environments/toolchain-cache.js';
import { setupFetch } from '../../src/sandbox/egress-fetch.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { validate } from '../../src/validator/validate.js';
import { fixtureRepo, fixtureSandbox, removeFixtureRepos } from '../support/fixture-repos.js';
import { type NpmRegistry, serveNpmRegistry } from '../support/npm-registry.js';
import { setupNetworkSandbox } from '../support/setup-network.js';

// Old and new node (issue 44, point 4): the npm of a node's era and of its lockfile's, the
// nearest node that runs where none asked for does, and a native module that does not build.

/** Shared with environments.test.ts: each toolchain is fetched once per machine. */
const TOOLCHAIN_CACHE = join(tmpdir(), 'emend-test-toolchains');
const ANCIENT = '3001.0001.0000-dev-harmony-fb';
/** As the registry lists it (esprima-fb's document says 3001.1.0-dev-harmony-fb). */
const NORMALISED = '3001.1.0-dev-harmony-fb';

/** A TAP line per check: node 8 has no node:test. */
const tap = (checks: Record<string, string>) =>
  [
    "const assert = require('assert');",
    "console.log('TAP version 13');",
    ...Object.entries(checks).map(
      ([name, body], i) =>
        `try { ${body}; console.log('ok ${i + 1} - ${name}'); } catch (e) { console.log('not ok ${i + 1} - ${name}'); console.log('  # ' + e.message); process.exitCode = 1; }`,
    ),
    `console.log('1..${Object.keys(checks).length}');`,
  ].join('\n');

describe('node versions, npm of their era, native builds', { timeout: 180_000 }, () => {
  let registry: NpmRegistry;
  let online: Sandbox;
  const fetchToolchain = setupFetch(loadConfig({ EMEND_DATA_DIR: tmpdir() }).sandbox.setupAllow);
  beforeAll(async () => {
    registry = await serveNpmRegistry({
      // an ancient version string npm 7 and later refuse in a lockfileVersion 1 lockfile ("Invalid Version")
      'emendfix-ancient': [
        {
          version: NORMALISED,
          published: '2014-01-01T00:00:00.000Z',
          files: { 'index.js': 'module.exports = "old";\n' },
        },
      ],
      // what depends on it, as jstransform depended on esprima-fb
      'emendfix-uses-ancient': [
        {
          version: '1.0.0',
          published: '2014-01-01T00:00:00.000Z',
          files: { 'index.js': 'module.exports = require("emendfix-ancient");\n' },
        },
      ],
      // a native module whose build fails as node-gyp's does: its words, its exit
      'emendfix-native': [
        {
          version: '1.0.0',
          published: '2020-01-01T00:00:00.000Z',
          files: {
            'index.js': 'module.exports = require("./build/Release/native.node");\n',
            'build.js': [
              "console.log('gyp info it worked if it ends with ok');",
              "console.error('../src/native.cc:1:10: fatal error: nan.h: No such file or directory');",
              "console.error('gyp ERR! build error');",
              "console.error('gyp ERR! stack Error: `make` failed with exit code: 2');",
              "console.error('gyp ERR! cwd ' + process.cwd());",
              "console.error('gyp ERR! not ok');",
              'process.exit(1);',
            ].join('\n'),
          },
          scripts: { install: 'node build.js' },
        },
      ],
    });
    online = await setupNetworkSandbox([new URL(registry.url).host]);
  });
  afterAll(async () => {
    await registry.close();
    removeFixtureRepos();
  });

  /** npm 6's lockfile of a package depending on emendfix-uses-ancient 1.0.0, which pins the ancient version. */
  const lockfileV1 = () =>
    JSON.stringify({
      name: 'x',
      version: '1.0.0',
      lockfileVersion: 1,
      requires: true,
      dependencies: {
        'emendfix-ancient': { version: ANCIENT, ...registry.dist('emendfix-ancient', NORMALISED) },
        'emendfix-uses-ancient': {
          version: '1.0.0',
          ...registry.dist('emendfix-uses-ancient', '1.0.0'),
          requires: { 'emendfix-ancient': ANCIENT },
        },
      },
    });

  it('installs a lockfileVersion 1 lockfile with npm 6 under the node 8 the repository asks for, and runs its tests there', async () => {
    const repo = fixtureRepo(
      {
        'package.json': JSON.stringify({
          name: 'x',
          version: '1.0.0',
          engines: { node: '8.x' },
          scripts: { test: 'node test.js' },
          dependencies: { 'emendfix-uses-ancient': '1.0.0' },
        }),
        'package-lock.json': lockfileV1(),
        'test.js': tap({
          'runs on node 8': "assert.strictEqual(process.versions.node.split('.')[0], '8')",
          'under npm 6':
            'assert.ok(/^npm\\/6\\./.test(process.env.npm_config_user_agent), process.env.npm_config_user_agent)',
          'has its dependency': "assert.strictEqual(require('emendfix-uses-ancient'), 'old')",
        }),
      },
      { 'index.js': 'module.exports = 1;\n' },
    );
    const cache = new ToolchainCache({ dir: TOOLCHAIN_CACHE, fetch: fetchToolchain });
    const started = performance.now();
    const out = await validate(
      online,
      { dir: repo.dir, base: repo.base },
      { toolchainCache: cache, setupEnv: { npm_config_registry: registry.url } },
    );
    // node 8 (~13 MB) and npm 6 (~5 MB) once per machine, then the cache
    console.log(`node 8 + npm 6 validation: ${Math.round(performance.now() - started)} ms`);
    expect(out.setup).toMatchObject({ command: 'npm ci --no-audit --no-fund', exit_code: 0 });
    expect(out).toMatchObject({ passed: true, preexisting_failures: [], tests: { passed: 3, failed: 0 } });
  });

  it('installs a lockfileVersion 1 lockfile holding an ancient version string with npm 6 where today’s npm says Invalid Version', async () => {
    const repo = fixtureRepo({
      'package.json': JSON.stringify({
        name: 'x',
        version: '1.0.0',
        scripts: { test: 'node test.js' },
        dependencies: { 'emendfix-uses-ancient': '1.0.0' },
      }),
      'package-lock.json': lockfileV1(),
      'test.js': tap({
        'under npm 6':
          'assert.ok(/^npm\\/6\\./.test(process.env.npm_config_user_agent), process.env.npm_config_user_agent)',
        'has its dependency': "assert.strictEqual(require('emendfix-uses-ancient'), 'old')",
      }),
    });
    const cache = new ToolchainCache({ dir: TOOLCHAIN_CACHE, fetch: fetchToolchain });
    const out = await validate(
      online,
      { dir: repo.dir, base: repo.base },
      { toolchainCache: cache, setupEnv: { npm_config_registry: registry.url } },
    );
    expect(out.setup).toMatchObject({ exit_code: 0 });
    expect(out).toMatchObject({ passed: true, preexisting_failures: [], tests: { passed: 2, failed: 0 } });
  });

  it('names a native module that fails to build, and the node it was built under, instead of failed tests', async () => {
    const repo = fixtureRepo({
      'package.json': JSON.stringify({
        name: 'x',
        scripts: { test: 'node test.js' },
        dependencies: { 'emendfix-native': '1.0.0' },
      }),
      'test.js': tap({ 'loads the native module': "require('emendfix-native')" }),
    });
    const out = await validate(
      online,
      { dir: repo.dir, base: repo.base },
      { setupEnv: { npm_config_registry: registry.url } },
    );
    // The install goes through again without dependencies' scripts (the native module is then
    // missing, its test fails on both trees); the module and the node are still named.
    expect(out.setup).toMatchObject({
      exit_code: 0,
      native_build: {
        package: 'emendfix-native',
        error: '../src/native.cc:1:10: fatal error: nan.h: No such file or directory',
      },
    });
    expect(out.setup?.notes?.join(' ')).toMatch(/installed again without dependencies' scripts/);
    expect(out.message).toMatch(
      /native module emendfix-native failed to build under node \d+\.\d+\.\d+: \.\.\/src\/native\.cc:1:10: fatal error: nan\.h: No such file or directory/,
    );
    expect(out.preexisting_failures).toEqual(['loads the native module']);
  });

  it('runs the nearest node that runs where the registry has none for the range asked, and says so', async () => {
    const arch = `node-linux-${process.arch}`;
    // 4.9.1 is a binary that cannot start here; 6.17.1 one that can (the sandbox's node, as a stand-in)
    const nodes = await serveNpmRegistry({
      [arch]: [
        { version: '4.9.1', published: '2018-01-01T00:00:00.000Z', files: { 'bin/node': 'not a binary\n' } },
        {
          version: '6.17.1',
          published: '2019-01-01T00:00:00.000Z',
          files: { 'bin/node': '#!/bin/sh\nexec /usr/bin/node "$@"\n' },
          executable: ['bin/node'],
        },
      ],
    });
    const dir = mkdtempSync(join(tmpdir(), 'emend-fake-nodes-'));
    try {
      const offline = await fixtureSandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'off' });
      const repo = fixtureRepo({
        'package.json': JSON.stringify({ name: 'x', scripts: { test: 'node test.js' } }),
        '.nvmrc': '3\n',
        'test.js': tap({ runs: 'assert.ok(true)' }),
      });
      const cache = new ToolchainCache({ dir, fetch, registry: nodes.url });
      const out = await validate(offline, { dir: repo.dir, base: repo.base }, { toolchainCache: cache });
      expect(out).toMatchObject({ passed: true, tests: { passed: 1, failed: 0 } });
      expect(out.message).toBe(
        `node 3 (.nvmrc): no ${arch} version on the registry satisfies it; node 4.9.1 does not run here; ` +
          'the nearest that runs here, node 6.17.1, ran the tests',
      );
    } finally {
      await nodes.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('orders the node versions to try: the newest satisfying, then the nearest majors', () => {
    const available = ['4.9.1', '6.17.1', '8.17.0', '8.16.0', '20.20.2', '22.1.0'];
    expect(nodeCandidates(available, '8')).toEqual([
      { version: '8.17.0', satisfies: true },
      { version: '6.17.1', satisfies: false },
      { version: '4.9.1', satisfies: false },
    ]);
    expect(nodeCandidates(available, '21').map((c) => c.version)).toEqual(['22.1.0', '20.20.2', '8.17.0']);
  });

  it('reads the package of a failed native build as npm 6, npm 10, yarn 1 and pnpm name it', () => {
    const gyp = 'gyp ERR! build error\ngyp ERR! stack Error: `make` failed with exit code: 2\n';
    expect(nativeBuildFailure(`${gyp}npm ERR! Failed at the fibers@1.0.15 install script.\n`)?.package).toBe('fibers');
    expect(nativeBuildFailure(`${gyp}npm error path /workspace/repo/node_modules/@scope/bcrypt\n`)?.package).toBe(
      '@scope/bcrypt',
    );
    expect(nativeBuildFailure(`${gyp}error /workspace/repo/node_modules/sharp: Command failed.\n`)?.package).toBe(
      'sharp',
    );
    expect(
      nativeBuildFailure(`${gyp}node_modules/.pnpm/x@1.0.0/node_modules/deasync: Running install script, failed\n`)
        ?.package,
    ).toBe('deasync');
    expect(nativeBuildFailure(gyp)?.error).toBe('Error: `make` failed with exit code: 2');
    expect(nativeBuildFailure('npm error code ETARGET\n')).toBeUndefined();
  });
});
