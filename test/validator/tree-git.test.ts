import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvironmentCache } from '../../src/environments/env-cache.js';
import { giveTreeGit, packBase } from '../../src/environments/tree-git.js';
import { prepareWorkTree } from '../../src/environments/work-tree.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { validate } from '../../src/validator/validate.js';
import {
  type Files,
  type FixtureRepo,
  GIT_ENV,
  fixtureRepo,
  fixtureSandbox,
  removeFixtureRepos,
  separateGitDir,
} from '../support/fixture-repos.js';

// Every tree a repository's code runs in holds a .git of its own (docs/validator.md, "The
// copies' git"): a husky-style `prepare` can install its hooks, and tests can call git on their
// repository; none of it reaches the checkout's git directory or the environment cache.

const git = (dir: string, args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], { env: GIT_ENV, encoding: 'utf8' }).trim();

/** A local dev dependency (file:vendor/dep), so `npm ci --offline` installs, and runs `prepare`, with no network. */
const lockfile = JSON.stringify({
  name: 'fixture',
  version: '1.0.0',
  lockfileVersion: 3,
  requires: true,
  packages: {
    '': { name: 'fixture', version: '1.0.0', devDependencies: { dep: 'file:vendor/dep' } },
    'node_modules/dep': { resolved: 'vendor/dep', link: true },
    'vendor/dep': { version: '1.0.0', dev: true },
  },
});

/** What husky does: find the git directory, point core.hooksPath at its hooks, write one; no git, no hooks. */
const HOOK_INSTALLER = `const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const gitDir = execFileSync('git', ['rev-parse', '--git-dir'], { encoding: 'utf8' }).trim();
if (!fs.existsSync(gitDir)) throw new Error(".git can't be found");
if (!fs.existsSync('.husky')) throw new Error("husky - can't create hook, .husky directory doesn't exist");
fs.mkdirSync('.husky/_', { recursive: true });
fs.writeFileSync('.husky/_/.gitignore', '*\\n');
fs.writeFileSync('.husky/_/pre-commit', '#!/bin/sh\\nsh .husky/pre-commit\\n', { mode: 0o755 });
execFileSync('git', ['config', 'core.hooksPath', '.husky/_']);
console.log('hooks installed in ' + gitDir);
`;

const HUSKY: Files = {
  'package.json': JSON.stringify({
    name: 'fixture',
    version: '1.0.0',
    private: true,
    scripts: { prepare: 'node scripts/install-hooks.js', test: 'node --test' },
    devDependencies: { dep: 'file:vendor/dep' },
  }),
  '.gitignore': 'node_modules/\n',
  'vendor/dep/package.json': JSON.stringify({ name: 'dep', version: '1.0.0', main: 'index.js' }),
  'vendor/dep/index.js': 'module.exports = 1;\n',
  'package-lock.json': lockfile,
  '.husky/pre-commit': 'npm test\n',
  'scripts/install-hooks.js': HOOK_INSTALLER,
  'lib.js': 'module.exports = 1;\n',
  'test/hooks.test.js': `const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
test('the hooks were installed', () => assert.ok(fs.existsSync('.husky/_/pre-commit')));
`,
};

/** Tests that ask git about their repository; lib.js's value says which tree they run in. */
const GIT_TESTS = `const test = require('node:test');
const assert = require('node:assert');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const sh = (...args) => execFileSync('git', args, { encoding: 'utf8' });
const onBase = require('../lib.js') === 1;
test('ls-files lists the tracked files', () => assert.ok(sh('ls-files').split('\\n').includes('lib.js')));
test('describe names the tag on the base commit', () => assert.strictEqual(sh('describe', '--tags', '--always').trim(), 'v1.0.0'));
test('HEAD is the base commit', () => assert.strictEqual(sh('rev-parse', 'HEAD').trim(), process.env.BASE_COMMIT));
test('status: clean on the base commit, the change uncommitted', () =>
  assert.strictEqual(sh('status', '--porcelain').replace(/\\n$/, ''), onBase ? '' : ' M lib.js'));
test('no alternates, no remote, no token anywhere in .git', () => {
  assert.ok(!fs.existsSync('.git/objects/info/alternates'));
  assert.strictEqual(sh('remote').trim(), '');
  const walk = (dir) => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]);
  for (const file of walk('.git')) assert.ok(!fs.readFileSync(file).includes('SECRET-TOKEN'), file);
});
test('writes into its own .git: a config, a hook, a commit', () => {
  sh('config', 'emend.test', 'wrote');
  fs.writeFileSync('.git/hooks/post-commit', '#!/bin/sh\\n');
  sh('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--no-verify', '--allow-empty', '-m', 'from a test');
});
`;

const GIT_REPO: Files = {
  ...HUSKY,
  // The files are written with LF: a clean status needs the attributes respected.
  '.gitattributes': '* text eol=crlf\n',
  'test/git.test.js': GIT_TESTS,
};

/**
 * The git-commands repository as a task's checkout has it: its objects reached through an
 * alternates file (a mirror), a remote URL with a token, a tag on the base commit.
 */
function checkoutWithMirror(at: string): FixtureRepo & { gitDir: string } {
  const mirror = fixtureRepo(GIT_REPO);
  git(mirror.dir, ['tag', '-a', '-m', 'first', 'v1.0.0']);
  const repo = { dir: join(at, 'checkout') };
  execFileSync('git', ['clone', '-q', '--shared', mirror.dir, repo.dir], { env: GIT_ENV });
  git(repo.dir, ['remote', 'set-url', 'origin', 'https://x-access-token:SECRET-TOKEN@git.example/fixture.git']);
  writeFileSync(join(repo.dir, 'lib.js'), 'module.exports = 2;\n');
  const gitDir = separateGitDir({ dir: repo.dir, base: mirror.base });
  expect(existsSync(join(gitDir, 'objects/info/alternates'))).toBe(true);
  return { dir: repo.dir, base: mirror.base, gitDir };
}

/** What a git directory holds that a write through a copy could change. */
const snapshot = (gitDir: string) => ({
  config: readFileSync(join(gitDir, 'config'), 'utf8'),
  refs: execFileSync('git', ['--git-dir', gitDir, 'for-each-ref'], { encoding: 'utf8' }),
  head: execFileSync('git', ['--git-dir', gitDir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }),
  hooks: readdirSync(join(gitDir, 'hooks')).sort(),
});

const allFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? allFiles(join(dir, e.name)) : [join(dir, e.name)],
  );

describe('the copies’ git', { timeout: 120_000 }, () => {
  let sandbox: Sandbox;
  let root: string;
  beforeAll(async () => {
    sandbox = await fixtureSandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'off' });
    root = mkdtempSync(join(tmpdir(), 'emend-tree-git-test-'));
  });
  afterAll(() => {
    removeFixtureRepos();
    rmSync(root, { recursive: true, force: true });
  });

  it('a prepare script that installs git hooks the way husky does succeeds in both trees', async () => {
    const repo = fixtureRepo(HUSKY, { 'lib.js': 'module.exports = 2;\n' });
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base });
    expect(out.setup).toMatchObject({ command: 'npm ci --offline --no-audit --no-fund', exit_code: 0 });
    expect(out).toMatchObject({
      passed: true,
      tests: { passed: 1, failed: 0 },
      baseline: { setup: 'ok', failures: [] },
    });
    // The hook installer wrote into the copy's git, not the checkout's.
    expect(() => git(repo.dir, ['config', '--get', 'core.hooksPath'])).toThrow();
  });

  it('tests calling git ls-files, describe, rev-parse and status see a fresh clone of the base commit with the change uncommitted; their writes reach neither the checkout nor the cache', async () => {
    const repo = checkoutWithMirror(root);
    const before = snapshot(repo.gitDir);
    const cache = new EnvironmentCache({ dir: join(root, 'cache'), maxBytes: 64 * 1024 * 1024 });
    const run = () =>
      validate(
        sandbox,
        { dir: repo.dir, base: repo.base, gitDir: repo.gitDir },
        {
          env: { BASE_COMMIT: repo.base },
          environments: { cache, workspace: 'team-a', repository: 'https://git.example/fixture' },
        },
      );
    const first = await run();
    expect(first).toMatchObject({
      passed: true,
      new_failures: [],
      tests: { passed: 7, failed: 0 },
      baseline: { failures: [], setup: 'ok' },
    });
    expect(first.setup?.environment).toMatchObject({ cache: 'built' });
    const [entry] = await cache.list();
    // The hooks the setup made are part of the environment; the copy's .git is not.
    expect(entry!.paths).toEqual(['.husky/_', 'node_modules']);
    const cached = allFiles(entry!.dir).map((f) => f.slice(entry!.dir.length + 1));
    expect(cached.filter((f) => f.split('/').includes('.git'))).toEqual([]);

    // From the cache: setup does not run, git still works in both trees, and the verdict is the same.
    const second = await run();
    expect(second.setup?.environment).toEqual({ key: entry!.key, cache: 'hit' });
    expect(second).toMatchObject({
      passed: true,
      new_failures: [],
      tests: { passed: 7, failed: 0 },
      baseline: { failures: [] },
    });
    // The tests' config, hook and commit stayed in their copies.
    expect(snapshot(repo.gitDir)).toEqual(before);
    expect(readFileSync(join(repo.dir, 'lib.js'), 'utf8')).toBe('module.exports = 2;\n');
  });

  it('a spare checkout of the base commit, made after a verdict, is the next validation’s baseline tree: the same git, the same verdict', async () => {
    const repo = checkoutWithMirror(mkdtempSync(join(root, 'spare-')));
    const tmpRoot = mkdtempSync(join(root, 'spare-tmp-'));
    const left: Array<() => Promise<unknown>> = [];
    const run = async () => {
      const logs: string[] = [];
      const out = await validate(
        sandbox,
        { dir: repo.dir, base: repo.base, gitDir: repo.gitDir },
        {
          env: { BASE_COMMIT: repo.base },
          tmpRoot,
          afterwards: (work) => void left.push(work),
          log: (message) => logs.push(message),
        },
      );
      for (const work of left.splice(0)) await work();
      return { out, logs };
    };
    const spares = () => readdirSync(tmpRoot).filter((n) => n.startsWith('emend-spare-base-'));
    const first = await run();
    expect(first.logs).not.toContain('the baseline tree from a spare checkout of the base commit');
    // The copies are gone; one spare is left, made from the validation's pack.
    expect(readdirSync(tmpRoot).filter((n) => n.startsWith('emend-validate-'))).toEqual([]);
    expect(spares()).toHaveLength(1);

    const second = await run();
    expect(second.logs).toContain('the baseline tree from a spare checkout of the base commit');
    // The baseline ran in the spare: git's listings, describe (the tag), a clean status, as in a fresh checkout.
    expect(second.out).toMatchObject({
      passed: true,
      new_failures: [],
      tests: { passed: 7, failed: 0 },
      baseline: { failures: [], setup: 'ok' },
    });
    expect(second.out.baseline?.tests).toBe(first.out.baseline?.tests);
    // Taken, and the next one made: still one, never the one the tests ran in.
    expect(spares()).toHaveLength(1);

    // Another base commit (a new commit on the checkout) has another key: the spare is not taken.
    git(repo.dir, ['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qam', 'next']);
    const next = git(repo.dir, ['rev-parse', 'HEAD']).trim();
    const otherLogs: string[] = [];
    await validate(
      sandbox,
      { dir: repo.dir, base: next, gitDir: repo.gitDir },
      {
        env: { BASE_COMMIT: next },
        tmpRoot,
        afterwards: (work) => void left.push(work),
        log: (message) => otherLogs.push(message),
      },
    );
    expect(otherLogs).toContain('test recipe');
    expect(otherLogs).not.toContain('the baseline tree from a spare checkout of the base commit');
    for (const work of left.splice(0)) await work();
    // One per key: the first base's and the second's.
    expect(spares()).toHaveLength(2);
  });

  it('the agent’s work tree has its own git at the base commit; writes to it are not carried back', async () => {
    const repo = fixtureRepo(HUSKY, { 'lib.js': 'module.exports = 2;\n' });
    const gitDir = separateGitDir(repo);
    const before = snapshot(gitDir);
    const dataDir = mkdtempSync(join(root, 'data-'));
    const work = await prepareWorkTree(
      sandbox,
      { dataDir, log: pino({ level: 'silent' }) },
      { dir: repo.dir, gitDir, base: repo.base },
      { root: dataDir },
    );
    try {
      expect(work.setup).toBe('ok');
      const tree = work.tree.repo;
      expect(existsSync(join(tree, '.husky/_/pre-commit'))).toBe(true);
      expect(git(tree, ['config', '--get', 'core.hooksPath'])).toBe('.husky/_');
      expect(git(tree, ['rev-parse', 'HEAD'])).toBe(repo.base);
      expect(git(tree, ['status', '--porcelain'])).toBe('M lib.js');
      expect(existsSync(join(tree, '.git/objects/info/alternates'))).toBe(false);
      writeFileSync(join(tree, 'lib.js'), 'module.exports = 3;\n');
      git(tree, ['config', 'emend.test', 'wrote']);
      const carried = await work.carryBack();
      expect(carried).toEqual({ carried: ['lib.js'], refused: [] });
      expect(snapshot(gitDir)).toEqual(before);
      expect(existsSync(join(repo.dir, '.husky/_'))).toBe(false);
    } finally {
      await work.dispose();
    }
  });

  // /dev/shm is a tmpfs, another filesystem than the temporary directory's on these machines.
  const otherFs = existsSync('/dev/shm') && statSync('/dev/shm').dev !== statSync(tmpdir()).dev;
  it.skipIf(!otherFs)(
    'packs the base commit into a directory on another filesystem than the checkout (a container’s /tmp and its data volume)',
    async () => {
      const repo = checkoutWithMirror(mkdtempSync(join(root, 'other-fs-')));
      const packDir = mkdtempSync('/dev/shm/emend-tree-git-test-');
      try {
        const pack = await packBase(
          {
            args: (a) => ['--git-dir', repo.gitDir, '--work-tree', repo.dir, ...a],
            cwd: repo.dir,
            gitDir: repo.gitDir,
          },
          repo.base,
          join(packDir, 'base-pack'),
        );
        expect(readdirSync(pack.dir).filter((n) => /^pack-[0-9a-f]+\.(pack|idx)$/.test(n))).toHaveLength(2);
        const tree = join(root, 'other-fs-tree');
        await giveTreeGit(pack, tree, 'checkout', { home: mkdtempSync(join(root, 'home-')) });
        expect(execFileSync('git', ['-C', tree, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim()).toBe(repo.base);
        // The base commit's files, not the checkout's change.
        const atBase = execFileSync('git', ['--git-dir', repo.gitDir, 'show', `${repo.base}:lib.js`], {
          encoding: 'utf8',
        });
        // (checked out with the repository's eol=crlf attribute)
        expect(readFileSync(join(tree, 'lib.js'), 'utf8').replace(/\r\n/g, '\n')).toBe(atBase);
        expect(atBase).not.toBe('module.exports = 2;\n');
      } finally {
        rmSync(packDir, { recursive: true, force: true });
      }
    },
  );
});
