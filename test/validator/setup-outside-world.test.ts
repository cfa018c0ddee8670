import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { ToolchainCache } from '../../src/environments/toolchain-cache.js';
import { setupFetch } from '../../src/sandbox/egress-fetch.js';
import { createSandbox } from '../../src/sandbox/sandbox.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { validate } from '../../src/validator/validate.js';
import { fakeDns } from '../support/fake-dns.js';
import { fixtureRepo, removeFixtureRepos } from '../support/fixture-repos.js';
import { type NpmRegistry, oneDependencyLockfile, serveNpmRegistry } from '../support/npm-registry.js';

// Setup against the outside world (docs/environments.md): a dependency's install script that
// downloads from outside the registries, the refusals a failed setup's verdict names, an
// operator's registry mirror serving the lockfiles' public URLs, yarn 1's lockfile without a
// mirror, and a git dependency written for ssh. The public registries and github.com resolve to
// loopback here, which the proxy refuses before connecting: nothing leaves the machine, and an
// install that succeeds was served by the mirror on loopback.

/** Shared with the other toolchain tests: yarn 1 is fetched from the npm registry once per machine. */
const TOOLCHAIN_CACHE = join(tmpdir(), 'emend-test-toolchains');

const PUBLIC = ['registry.npmjs.org', 'registry.yarnpkg.com', 'github.com', 'codeload.github.com'];
const toLoopback = () => fakeDns(Object.fromEntries(PUBLIC.map((h) => [h, ['127.0.0.1']])));

/** An install script that fetches a browser through the setup's proxy, from a place it refuses. */
const download = (skipVariable?: string) =>
  [
    ...(skipVariable
      ? [`if (process.env.${skipVariable}) { console.log('skipping the download'); process.exit(0); }`]
      : []),
    "const http = require('node:http');",
    'const proxy = new URL(process.env.HTTP_PROXY);',
    "http.get({ host: proxy.hostname, port: proxy.port, path: 'http://127.0.0.1:9/chrome-linux.zip' }, (res) => {",
    "  console.error('downloading the browser: HTTP ' + res.statusCode);",
    '  process.exit(res.statusCode === 200 ? 0 : 1);',
    "}).on('error', (err) => { console.error('downloading the browser: ' + err.message); process.exit(1); });",
  ].join('\n');

const test = (name: string, body: string) =>
  `const test = require('node:test');\nconst assert = require('node:assert');\nconst fs = require('node:fs');\ntest(${JSON.stringify(name)}, () => {\n${body}\n});\n`;

const at = (name: string) => ({ version: '1.0.0', published: '2020-01-01T00:00:00.000Z', name });
const tarball = (registry: string, name: string) => `${registry}${name}/-/${name}-1.0.0.tgz`;

describe('setup that survives the outside world', { timeout: 120_000 }, () => {
  let mirror: NpmRegistry;
  let withMirror: Sandbox;
  let withoutMirror: Sandbox;
  const cache = new ToolchainCache({
    dir: TOOLCHAIN_CACHE,
    fetch: setupFetch(loadConfig({ EMEND_DATA_DIR: tmpdir() }).sandbox.setupAllow),
  });

  const sandbox = async (env: Record<string, string>) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'emend-fixture-data-'));
    const config = loadConfig({ EMEND_DATA_DIR: dataDir, EMEND_SANDBOX: 'bubblewrap', ...env });
    return createSandbox(config.sandbox, { protectedPaths: [dataDir], lookup: toLoopback() });
  };

  beforeAll(async () => {
    const { name: _p, ...pick } = at('emendfix-pick');
    const { name: _b, ...browser } = at('emendfix-browser');
    const { name: _d, ...binary } = at('emendfix-binary');
    mirror = await serveNpmRegistry({
      'emendfix-pick': [{ ...pick, files: { 'index.js': 'module.exports = 1;\n' } }],
      // puppeteer's way: the download is skipped where PUPPETEER_SKIP_DOWNLOAD says so
      'emendfix-browser': [
        {
          ...browser,
          files: { 'index.js': 'module.exports = "browser";\n', 'download.js': download('PUPPETEER_SKIP_DOWNLOAD') },
          scripts: { postinstall: 'node download.js' },
        },
      ],
      // phantomjs's way: no variable skips it
      'emendfix-binary': [
        {
          ...binary,
          files: { 'index.js': 'module.exports = "binary";\n', 'download.js': download() },
          scripts: { install: 'node download.js' },
        },
      ],
    });
    // The operator's mirror (EMEND_NPM_REGISTRY) is reached as a named destination; nothing else is added.
    withMirror = await sandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'proxy', EMEND_NPM_REGISTRY: mirror.url });
    withoutMirror = await sandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'proxy' });
  });
  afterAll(async () => {
    await mirror?.close();
    removeFixtureRepos();
  });

  it('skips a browser download by the variable its package documents', async () => {
    const repo = fixtureRepo({
      'package.json': JSON.stringify({
        name: 'x',
        scripts: { test: 'node --test' },
        dependencies: { 'emendfix-browser': '^1.0.0' },
      }),
      'test/a.test.js': test('loads', "assert.equal(require('emendfix-browser'), 'browser');"),
    });
    const out = await validate(withMirror, { dir: repo.dir, base: repo.base });
    expect(out.setup).toMatchObject({ exit_code: 0 });
    expect(out.setup?.notes).toBeUndefined();
    expect(out.setup?.connections?.filter((c) => !c.allowed)).toEqual([]);
    expect(out).toMatchObject({ passed: true, tests: { passed: 1, failed: 0 } });
  });

  it('installs again without dependencies’ scripts when one fails, runs the repository’s own, and says so', async () => {
    const repo = fixtureRepo({
      'package.json': JSON.stringify({
        name: 'x',
        scripts: {
          test: 'node --test',
          postinstall: "node -e \"require('fs').writeFileSync('built.txt', 'yes')\"",
        },
        dependencies: { 'emendfix-binary': '^1.0.0', 'emendfix-pick': '^1.0.0' },
      }),
      'test/a.test.js': test(
        'has its dependencies and its own postinstall ran',
        "assert.equal(require('emendfix-pick'), 1);\nassert.equal(require('emendfix-binary'), 'binary');\nassert.equal(fs.readFileSync('built.txt', 'utf8'), 'yes');",
      ),
    });
    const logged: string[] = [];
    const out = await validate(
      withMirror,
      { dir: repo.dir, base: repo.base },
      { log: (message, data) => message === 'setup output' && logged.push(String(data?.text)) },
    );
    expect(out.setup).toMatchObject({ exit_code: 0 });
    expect(out.setup?.command).toMatch(/^npm install .* --ignore-scripts && npm run --ignore-scripts postinstall$/);
    const said =
      "emendfix-binary's install script failed (node download.js); installed again without dependencies' scripts";
    expect(out.setup?.notes).toEqual([said]);
    expect(out.message).toContain(said);
    expect(logged.join('\n')).toContain(
      "emend: emendfix-binary's install script failed (node download.js); installing again with: npm install",
    );
    // the first attempt's refusal is still in the record
    expect(out.setup?.connections).toContainEqual(
      expect.objectContaining({ host: '127.0.0.1', port: 9, allowed: false }),
    );
    expect(out).toMatchObject({ passed: true, tests: { passed: 1, failed: 0 } });
  });

  it('names the refused connections in a failed setup’s verdict', async () => {
    const repo = fixtureRepo({
      'package.json': JSON.stringify({
        name: 'x',
        // the repository's own script fails: no retry, a setup failure as before
        scripts: { test: 'node --test', postinstall: 'node download.js' },
        dependencies: { 'emendfix-pick': '^1.0.0' },
      }),
      'download.js': download(),
      'test/a.test.js': test('runs', 'assert.ok(true);'),
    });
    const out = await validate(withMirror, { dir: repo.dir, base: repo.base });
    expect(out.setup?.exit_code).not.toBe(0);
    expect(out.setup?.notes).toBeUndefined();
    const refused = 'refused: 127.0.0.1:9 (an address (127.0.0.1) not named with its port in EMEND_SETUP_ALLOW)';
    expect(out.setup?.unreached).toEqual([refused]);
    expect(out.setup?.log_tail).toContain(`emend: ${refused}`);
    expect(out.message).toContain(refused);
  });

  it('fetches a package-lock’s and a yarn 1 lockfile’s public registry URLs from the operator’s mirror, and without one yarn 1’s from the npm registry, never yarn’s', async () => {
    const dist = mirror.dist('emendfix-pick', '1.0.0');
    const manifest = JSON.stringify({
      name: 'x',
      scripts: { test: 'node --test' },
      dependencies: { 'emendfix-pick': '^1.0.0' },
    });
    const picked = test('gets its dependency', "assert.equal(require('emendfix-pick'), 1);");
    const npmRepo = fixtureRepo({
      'package.json': manifest,
      'package-lock.json': oneDependencyLockfile('emendfix-pick', {
        version: '1.0.0',
        resolved: tarball('https://registry.npmjs.org/', 'emendfix-pick'),
        integrity: dist.integrity,
      }),
      'test/a.test.js': picked,
    });
    const npm = await validate(withMirror, { dir: npmRepo.dir, base: npmRepo.base });
    expect(npm.setup).toMatchObject({ command: 'npm ci --no-audit --no-fund', exit_code: 0 });
    expect(npm).toMatchObject({ passed: true, tests: { passed: 1, failed: 0 } });
    expect(npm.setup?.connections?.map((c) => c.host)).not.toContain('registry.npmjs.org');

    const yarnLock = (host: string) =>
      [
        '# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.',
        '# yarn lockfile v1',
        '',
        '',
        'emendfix-pick@^1.0.0:',
        '  version "1.0.0"',
        `  resolved "${tarball(host, 'emendfix-pick')}#${dist.shasum}"`,
        `  integrity ${dist.integrity}`,
        '',
      ].join('\n');
    const yarnRepo = fixtureRepo({
      'package.json': manifest,
      'yarn.lock': yarnLock('https://registry.yarnpkg.com/'),
      'test/a.test.js': picked,
    });
    const yarn = await validate(withMirror, { dir: yarnRepo.dir, base: yarnRepo.base }, { toolchainCache: cache });
    expect(yarn.setup?.exit_code, yarn.setup?.log_tail).toBe(0);
    expect(yarn.setup?.command).toContain('yarn install --frozen-lockfile');
    expect(yarn).toMatchObject({ passed: true, tests: { passed: 1, failed: 0 } });
    expect(yarn.setup?.connections?.map((c) => c.host)).not.toContain('registry.yarnpkg.com');

    // Without a mirror, yarn's registry host is not asked: its URLs go to the npm registry (here
    // on loopback, so refused, and the setup fails naming it).
    const plain = await validate(withoutMirror, { dir: yarnRepo.dir, base: yarnRepo.base }, { toolchainCache: cache });
    const hosts = plain.setup?.connections?.map((c) => `${c.host}:${c.port}`) ?? [];
    expect(hosts).toContain('registry.npmjs.org:443');
    expect(hosts).not.toContain('registry.yarnpkg.com:443');
    expect(plain.message).toContain('refused: registry.npmjs.org:443');
  });

  it('fetches a git dependency written for ssh over HTTPS through the proxy, and names it when the code host is not reached', async () => {
    const spec = 'git+ssh://git@github.com/emend-test/gitdep.git';
    const repo = fixtureRepo({
      'package.json': JSON.stringify({
        name: 'x',
        scripts: { test: 'node --test' },
        dependencies: { 'emendfix-gitdep': spec, 'emendfix-pick': '^1.0.0' },
      }),
      'test/a.test.js': test('runs', 'assert.ok(true);'),
    });
    const out = await validate(withMirror, { dir: repo.dir, base: repo.base });
    expect(out.setup?.exit_code).not.toBe(0);
    expect(out.setup?.connections).toContainEqual(
      expect.objectContaining({ host: 'github.com', port: 443, allowed: false }),
    );
    // git itself takes the ssh spelling over HTTPS: its request reaches the proxy (and is refused there)
    const bare = fixtureRepo({
      'package.json': JSON.stringify({ name: 'x', scripts: { test: 'node --test' } }),
      '.emend/setup': 'git ls-remote git@github.com:emend-test/other.git\n',
      'test/a.test.js': test('runs', 'assert.ok(true);'),
    });
    const direct = await validate(withMirror, { dir: bare.dir, base: bare.base });
    expect(direct.setup?.command).toBe('sh .emend/setup');
    expect(direct.setup?.connections).toContainEqual(
      expect.objectContaining({ host: 'github.com', port: 443, allowed: false }),
    );
    expect(out.message).toMatch(
      new RegExp(
        `dependency emendfix-gitdep \\(${spec.replace(/[.+]/g, '\\$&')}\\) needs github\\.com, which setup could not reach \\(refused: github\\.com resolves to 127\\.0\\.0\\.1`,
      ),
    );
  });
});
