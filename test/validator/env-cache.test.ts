import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/registry.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { envCacheMetrics } from '../../src/steps/fix/env-scope.js';
import { ENTRY_OWNER, EnvironmentCache } from '../../src/environments/env-cache.js';
import { type ValidateOptions, validate } from '../../src/validator/validate.js';
import { type Files, fixtureRepo, fixtureSandbox, removeFixtureRepos } from '../support/fixture-repos.js';

// Cached environments (docs/environments.md), in the real sandbox with setup offline: the
// repository's .emend/setup makes node_modules/dep and a file under HOME, and says so in its
// output, which the validator logs: the count of "SETUP-RAN" records is how often setup ran.

const SETUP = [
  'echo SETUP-RAN token=$REGISTRY_TOKEN',
  'mkdir -p node_modules/dep "$HOME/.cache/emendfix"',
  `printf "module.exports = 'original';\\n" > node_modules/dep/index.js`,
  'echo from-home > "$HOME/.cache/emendfix/file"',
  '',
].join('\n');

const TEST = `const test = require('node:test');
const assert = require('node:assert');
const { readFileSync } = require('node:fs');
test('dep is the original', () => assert.strictEqual(require('dep'), 'original'));
test('home has the cache', () => assert.strictEqual(readFileSync(process.env.HOME + '/.cache/emendfix/file', 'utf8'), 'from-home\\n'));
`;

const BASE: Files = {
  'package.json': JSON.stringify({
    name: 'fixture',
    version: '1.0.0',
    private: true,
    scripts: { test: 'node --test' },
  }),
  '.emend/setup': SETUP,
  'src/add.js': 'exports.add = (a, b) => a + b;\n',
  'test/dep.test.js': TEST,
};

/** A change to the code only: the tests still pass. */
const PLAIN_CHANGE: Files = { 'src/add.js': 'exports.add = (a, b) => b + a;\n' };

/** A hostile change: its manifest and setup and a test write into node_modules and HOME in place. */
const POISON =
  'printf "module.exports = \'poisoned\';\\n" > node_modules/dep/index.js\necho poisoned > "$HOME/.cache/emendfix/file"\n';
const HOSTILE_CHANGE: Files = {
  'package.json': JSON.stringify({
    name: 'fixture',
    version: '2.0.0',
    private: true,
    scripts: { test: 'node --test' },
  }),
  '.emend/setup': `${SETUP}${POISON}`,
  'test/zz-write.test.js': `const test = require('node:test');
const { writeFileSync } = require('node:fs');
test('writes in place', () => {
  writeFileSync(require.resolve('dep'), "module.exports = 'poisoned';\\n");
  writeFileSync(process.env.HOME + '/.cache/emendfix/file', 'poisoned');
});
`,
};

/**
 * A change's test file that writes in place into what the cache laid (a new test file: it runs
 * on the baseline too, so each of its failures is judged against the baseline's).
 */
const IN_PLACE_WRITER: Files = {
  'test/zz-in-place.test.js': `const test = require('node:test');
const { appendFileSync, chmodSync, renameSync, writeFileSync } = require('node:fs');
const dep = require.resolve('dep');
const home = process.env.HOME + '/.cache/emendfix/file';
test('writes dep in place', () => writeFileSync(dep, "module.exports = 'poisoned';\\n"));
test('chmods dep', () => chmodSync(dep, 0o666));
test('appends to the home file', () => appendFileSync(home, 'poisoned'));
test('replaces dep', () => {
  writeFileSync(dep + '.new', "module.exports = 'original';\\n");
  renameSync(dep + '.new', dep);
});
`,
};

interface Logged {
  message: string;
  data?: Record<string, unknown>;
}

describe('cached environments', { timeout: 60_000 }, () => {
  let sandbox: Sandbox;
  let root: string;
  beforeAll(async () => {
    sandbox = await fixtureSandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'off' });
    root = mkdtempSync(join(tmpdir(), 'emend-env-cache-test-'));
  });
  afterAll(() => {
    removeFixtureRepos();
    rmSync(root, { recursive: true, force: true });
  });

  let n = 0;
  const newCache = (maxBytes = 64 * 1024 * 1024) => new EnvironmentCache({ dir: join(root, `c${n++}`), maxBytes });

  const run = async (
    repo: { dir: string; base: string },
    cache: EnvironmentCache,
    extra: Partial<ValidateOptions> & { workspace?: string } = {},
  ) => {
    const logs: Logged[] = [];
    const out = await validate(
      sandbox,
      { dir: repo.dir, base: repo.base },
      {
        environments: { cache, workspace: extra.workspace ?? 'team-a', repository: 'https://git.example/fixture' },
        log: (message, data) => logs.push({ message, ...(data ? { data } : {}) }),
        ...(extra.setupEnv ? { setupEnv: extra.setupEnv } : {}),
        ...(extra.afterwards ? { afterwards: extra.afterwards } : {}),
        ...(extra.tmpRoot ? { tmpRoot: extra.tmpRoot } : {}),
      },
    );
    const setupRuns =
      logs
        .filter((l) => l.message === 'setup output')
        .map((l) => String(l.data?.text))
        .join('\n')
        .split('SETUP-RAN').length - 1;
    return { out, logs, setupRuns };
  };

  it('builds the entry from the base commit once; a second validation hits it; the change’s run gets it too', async () => {
    const cache = newCache();
    const repo = fixtureRepo(BASE, PLAIN_CHANGE);
    const first = await run(repo, cache);
    expect(first.out).toMatchObject({ passed: true, tests: { passed: 2, failed: 0 } });
    expect(first.out.setup?.environment).toMatchObject({ cache: 'built' });
    // Only the baseline ran setup; the change got the environment copied.
    expect(first.setupRuns).toBe(1);
    const [entry] = await cache.list();
    expect(entry).toMatchObject({
      account: 'team-a',
      repository: 'https://git.example/fixture',
      paths: ['node_modules'],
    });

    const second = await run(repo, cache);
    expect(second.out).toMatchObject({ passed: true, tests: { passed: 2, failed: 0 }, baseline: { setup: 'ok' } });
    expect(second.out.setup?.environment).toEqual({ key: entry!.key, cache: 'hit' });
    expect(second.setupRuns).toBe(0);
    // The baseline ran here (no kept one), so its tree was laid too, when its run came.
    expect(second.logs.map((l) => l.message)).toContain('environment from the cache laid into the baseline tree');
    expect(await cache.list()).toHaveLength(1);
  });

  it('a change that modifies the manifests and writes into node_modules and HOME uses the base key and never reaches the entry', async () => {
    const cache = newCache();
    const clean = fixtureRepo(BASE, PLAIN_CHANGE);
    await run(clean, cache);
    const [entry] = await cache.list();

    const hostile = fixtureRepo(BASE, HOSTILE_CHANGE);
    const attacked = await run(hostile, cache);
    // Same base files, same key: the change's manifests are not part of it.
    expect(attacked.out.setup?.environment).toBeUndefined();
    expect(attacked.logs.some((l) => l.message.startsWith('the change modifies what setup reads'))).toBe(true);
    expect((await cache.list()).map((e) => e.key)).toEqual([entry!.key]);
    // The change's own setup ran over the laid environment (in its copy), and its test wrote in place.
    expect(attacked.out.new_failures).toContain('dep is the original');
    expect(readFileSync(join(entry!.dir, 'repo/node_modules/dep/index.js'), 'utf8')).toContain("'original'");
    expect(readFileSync(join(entry!.dir, 'home/.cache/emendfix/file'), 'utf8')).toBe('from-home\n');

    const after = await run(clean, cache);
    expect(after.out).toMatchObject({ passed: true, tests: { passed: 2, failed: 0 } });
    expect(after.out.setup?.environment).toMatchObject({ key: entry!.key, cache: 'hit' });
  });

  it('a change’s tests writing in place into the laid node_modules and HOME never reach the entry (linked: refused)', async () => {
    const cache = newCache();
    const repo = fixtureRepo(BASE, PLAIN_CHANGE);
    await run(repo, cache);
    const [entry] = await cache.list();
    const asRoot = process.getuid?.() === 0;
    // Started as root under bubblewrap, an entry's files are nobody's and laid as hard links.
    expect(entry!.read_only === true).toBe(asRoot);
    if (asRoot) expect(statSync(join(entry!.dir, 'repo/node_modules/dep/index.js')).uid).toBe(ENTRY_OWNER);

    // Plain code change (no manifest): the change's tree gets the entry as the baseline's does.
    const writer = fixtureRepo(BASE, { ...PLAIN_CHANGE, ...IN_PLACE_WRITER });
    const attacked = await run(writer, cache);
    expect(attacked.out.setup?.environment).toMatchObject({ key: entry!.key, cache: 'hit' });
    if (asRoot) {
      // A write, a chmod to make it writable, an append: each refused; replacing the file is the tree's own business.
      expect(attacked.out.new_failures).toEqual(
        expect.arrayContaining(['writes dep in place', 'chmods dep', 'appends to the home file']),
      );
      expect(attacked.out.new_failures).not.toContain('replaces dep');
    } else {
      expect(attacked.out.new_failures).not.toContain('writes dep in place');
    }
    expect(readFileSync(join(entry!.dir, 'repo/node_modules/dep/index.js'), 'utf8')).toBe(
      "module.exports = 'original';\n",
    );
    expect(readFileSync(join(entry!.dir, 'home/.cache/emendfix/file'), 'utf8')).toBe('from-home\n');
    const after = await run(repo, cache);
    expect(after.out).toMatchObject({ passed: true, tests: { passed: 2, failed: 0 } });
    expect(after.out.setup?.environment).toMatchObject({ key: entry!.key, cache: 'hit' });
  });

  it('lays the environment ahead after the verdict: the next validation takes the spare, the copies go afterwards', async () => {
    const cache = newCache();
    const repo = fixtureRepo(BASE, { ...PLAIN_CHANGE, ...IN_PLACE_WRITER });
    const tmpRoot = mkdtempSync(join(tmpdir(), 'emend-env-spare-'));
    const left: Array<() => Promise<unknown>> = [];
    const afterwards = (work: () => Promise<unknown>) => void left.push(work);
    const first = await run(repo, cache, { afterwards, tmpRoot });
    expect(first.out.setup?.environment).toMatchObject({ cache: 'built' });
    // The verdict is out and the copies are still there: removing them is the work left.
    const copies = () => readdirSync(tmpRoot).filter((n) => n.startsWith('emend-validate-'));
    expect(copies()).toHaveLength(1);
    expect(left).toHaveLength(1);
    await left.shift()!();
    expect(copies()).toEqual([]);
    const [entry] = await cache.list();
    const spares = () => readdirSync(cache.dir).filter((n) => n.startsWith('.spare-'));
    if (!entry!.read_only) {
      // Not root: the entry is laid by copies, never ahead.
      expect(spares()).toEqual([]);
      return;
    }
    expect(spares()).toEqual([expect.stringContaining(`.spare-${entry!.key}-${entry!.build_id}-`)]);
    // Never an entry of its own.
    expect((await cache.list()).map((e) => e.key)).toEqual([entry!.key]);

    const second = await run(repo, cache, { afterwards, tmpRoot });
    const laid = second.logs.find((l) => l.message === 'environment from the cache');
    expect(laid?.data).toMatchObject({ key: entry!.key, spare: true });
    expect(spares()).toEqual([]);
    // As a tree laid without a spare: the entry's files, read-only to the tests (the same verdict as the first's).
    expect(second.out.new_failures).toEqual(first.out.new_failures);
    expect(second.out.new_failures).toEqual(
      expect.arrayContaining(['writes dep in place', 'chmods dep', 'appends to the home file']),
    );
    expect(readFileSync(join(entry!.dir, 'repo/node_modules/dep/index.js'), 'utf8')).toBe(
      "module.exports = 'original';\n",
    );
    await left.shift()!();
    expect(spares()).toHaveLength(1);

    // A spare of a build no longer in place is never taken, and the cache's sweep removes it.
    const stale = join(cache.dir, spares()[0]!);
    const rebuilt = JSON.parse(readFileSync(join(entry!.dir, 'entry.json'), 'utf8'));
    rebuilt.build_id = '00000000-0000-4000-8000-000000000000';
    writeFileSync(join(entry!.dir, 'entry.json'), JSON.stringify(rebuilt));
    writeFileSync(join(entry!.dir, 'complete'), `${rebuilt.build_id}\n`);
    const third = await run(repo, cache, { afterwards, tmpRoot });
    expect(third.logs.find((l) => l.message === 'environment from the cache')?.data?.spare).toBeUndefined();
    expect(existsSync(stale)).toBe(true);
    expect(await cache.sweep()).toEqual([stale.slice(cache.dir.length + 1)]);
    expect(existsSync(stale)).toBe(false);
    for (const work of left.splice(0)) await work();
    rmSync(tmpRoot, { recursive: true, force: true });
  });

  it('lays a tree that only runs tests without the download caches, which the entry keeps', async () => {
    const cache = newCache();
    const withCache: Files = {
      ...BASE,
      '.emend/setup': `${SETUP}mkdir -p "$HOME/.npm/_cacache" && echo blob > "$HOME/.npm/_cacache/index"\n`,
      'test/home.test.js': `const test = require('node:test');
const assert = require('node:assert');
const { existsSync } = require('node:fs');
test('no download cache in the test phase', () => assert.strictEqual(existsSync(process.env.HOME + '/.npm/_cacache/index'), false));
`,
    };
    const repo = fixtureRepo(withCache, PLAIN_CHANGE);
    await run(repo, cache);
    const [entry] = await cache.list();
    expect(readFileSync(join(entry!.dir, 'home/.npm/_cacache/index'), 'utf8')).toBe('blob\n');
    // A hit lays both trees: the cache is left out, the rest of HOME is there (the other two tests).
    const hit = await run(repo, cache);
    expect(hit.out.setup?.environment).toMatchObject({ key: entry!.key, cache: 'hit' });
    expect(hit.out).toMatchObject({ passed: true, tests: { passed: 3, failed: 0 }, baseline: { failures: [] } });
  });

  it('another workspace, or other setup secrets, get their own entry; no secret is stored or logged', async () => {
    const cache = newCache();
    const repo = fixtureRepo(BASE, PLAIN_CHANGE);
    const secret = 'tok-3f9a1c77e2b4';
    const a = await run(repo, cache, { setupEnv: { REGISTRY_TOKEN: secret } });
    const b = await run(repo, cache, { workspace: 'team-b', setupEnv: { REGISTRY_TOKEN: secret } });
    const c = await run(repo, cache, { setupEnv: { REGISTRY_TOKEN: 'tok-other-value-1' } });
    const again = await run(repo, cache, { setupEnv: { REGISTRY_TOKEN: secret } });
    expect([a, b, c].map((r) => r.out.setup?.environment?.cache)).toEqual(['built', 'built', 'built']);
    expect(again.out.setup?.environment).toEqual({ key: a.out.setup?.environment?.key, cache: 'hit' });
    expect(new Set([a, b, c].map((r) => r.out.setup?.environment?.key)).size).toBe(3);
    const entries = await cache.list();
    expect(entries.map((e) => e.setup_env_names)).toEqual([['REGISTRY_TOKEN'], ['REGISTRY_TOKEN'], ['REGISTRY_TOKEN']]);
    // The setup echoed the token: the log shows it redacted, and no entry's metadata holds it.
    const logged = JSON.stringify(a.logs);
    expect(logged).toContain('token=[redacted]');
    expect(logged).not.toContain(secret);
    for (const e of entries) expect(readFileSync(join(e.dir, 'entry.json'), 'utf8')).not.toContain(secret);
  });

  it('evicts the least recently used entries above its size', async () => {
    // Each entry holds a 300 KB file; the cache holds 500 KB: one entry.
    const big = { '.emend/setup': `${SETUP}head -c 300000 /dev/zero > node_modules/dep/blob\n` };
    const cache = newCache(500 * 1024);
    const one = fixtureRepo({ ...BASE, ...big }, PLAIN_CHANGE);
    const two = fixtureRepo({ ...BASE, ...big, 'src/other.js': '\n' }, PLAIN_CHANGE);
    const r1 = await run(one, cache);
    const keyOne = r1.out.setup?.environment?.key;
    expect((await cache.list()).map((e) => e.key)).toEqual([keyOne]);
    // Another repository URL would do; another workspace is simplest.
    const r2 = await run(two, cache, { workspace: 'team-b' });
    const keyTwo = r2.out.setup?.environment?.key;
    expect(keyTwo).not.toBe(keyOne);
    expect((await cache.list()).map((e) => e.key)).toEqual([keyTwo]);
    expect(existsSync(join(cache.dir, keyOne!))).toBe(false);
    expect(r2.out).toMatchObject({ passed: true });
  });

  it('links a large directory by several processes: every entry there, each file the entry’s own', async () => {
    // 80 packages (past the share's threshold), a nested one, a link among them, a mode of its own.
    const from = mkdtempSync(join(tmpdir(), 'emend-env-large-'));
    const nm = join(from, 'repo', 'node_modules');
    for (let i = 0; i < 80; i++) {
      mkdirSync(join(nm, `pkg-${i}`, 'lib'), { recursive: true });
      writeFileSync(join(nm, `pkg-${i}`, 'lib', 'index.js'), `module.exports = ${i};\n`);
    }
    mkdirSync(join(nm, '.bin'));
    symlinkSync('../pkg-7/lib/index.js', join(nm, '.bin', 'seven'));
    chmodSync(join(nm, 'pkg-3'), 0o750);
    mkdirSync(join(from, 'home'));
    const cache = newCache();
    const entry = await cache.store(
      'a'.repeat(40),
      { account: 'team-a', repository: 'https://git.example/large', setup_env_names: [] },
      { repo: join(from, 'repo'), home: join(from, 'home') },
      ['node_modules'],
      'link',
    );
    expect(entry).toBeDefined();
    const to = mkdtempSync(join(tmpdir(), 'emend-env-laid-'));
    const laid = await cache.layInto(entry!, { repo: join(to, 'repo'), home: join(to, 'home') }, 'link');
    expect(laid).toEqual({ ok: true, skipped: [] });
    const there = join(to, 'repo', 'node_modules');
    expect(readdirSync(there).sort()).toEqual(readdirSync(nm).sort());
    for (let i = 0; i < 80; i++)
      expect(readFileSync(join(there, `pkg-${i}`, 'lib', 'index.js'), 'utf8')).toBe(`module.exports = ${i};\n`);
    expect(readlinkSync(join(there, '.bin', 'seven'))).toBe('../pkg-7/lib/index.js');
    expect(statSync(join(there, 'pkg-3')).mode & 0o777).toBe(0o750);
    // Linked where the entry is read-only (root): the laid file is the entry's inode, not a copy.
    const inEntry = statSync(join(entry!.dir, 'repo', 'node_modules', 'pkg-5', 'lib', 'index.js'));
    const inTree = statSync(join(there, 'pkg-5', 'lib', 'index.js'));
    if (entry!.read_only) expect(inTree.ino).toBe(inEntry.ino);
    else expect(inTree.ino).not.toBe(inEntry.ino);
    rmSync(from, { recursive: true, force: true });
    rmSync(to, { recursive: true, force: true });
  });

  it('never uses a half-built entry, and sweeps builds a dead process left', async () => {
    const cache = newCache();
    const repo = fixtureRepo(BASE, PLAIN_CHANGE);
    await run(repo, cache);
    const [entry] = await cache.list();
    // As a build killed before its marker: the directory in place, its content half there.
    rmSync(join(entry!.dir, 'complete'));
    writeFileSync(join(entry!.dir, 'repo/node_modules/dep/index.js'), "module.exports = 'half';\n");
    const dead = join(cache.dir, '.tmp-99999999-3b1d');
    mkdirSync(join(dead, 'repo'), { recursive: true });
    expect(await cache.list()).toEqual([]);

    const again = await run(repo, cache);
    expect(again.setupRuns).toBe(1);
    expect(again.out).toMatchObject({ passed: true, tests: { passed: 2, failed: 0 } });
    expect(again.out.setup?.environment).toMatchObject({ key: entry!.key, cache: 'built' });
    expect(readFileSync(join(entry!.dir, 'repo/node_modules/dep/index.js'), 'utf8')).toContain("'original'");
    expect(existsSync(dead)).toBe(false);
    expect(readdirSync(cache.dir).filter((n) => n.startsWith('.tmp-') || n.startsWith('.trash-'))).toEqual([]);
  });

  it('two validations building the same key at once: both pass, one entry', async () => {
    const cache = newCache();
    const repo = fixtureRepo(BASE, PLAIN_CHANGE);
    const [x, y] = await Promise.all([run(repo, cache), run(repo, cache)]);
    expect(x.out).toMatchObject({ passed: true, tests: { passed: 2 } });
    expect(y.out).toMatchObject({ passed: true, tests: { passed: 2 } });
    expect(await cache.list()).toHaveLength(1);
    expect(readdirSync(cache.dir).filter((n) => n.startsWith('.'))).toEqual(['.key']);
  });

  it('moves the metrics: a miss and a build, then a hit; the bytes held', async () => {
    const metrics = createMetrics();
    const cache = new EnvironmentCache({
      dir: join(root, `c${n++}`),
      maxBytes: 64 * 1024 * 1024,
      metrics: envCacheMetrics(metrics),
    });
    const repo = fixtureRepo(BASE, PLAIN_CHANGE);
    await run(repo, cache);
    await run(repo, cache);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^emend_env_cache_misses_total 1$/m);
    expect(text).toMatch(/^emend_env_cache_hits_total 1$/m);
    expect(text).toMatch(/^emend_env_cache_build_seconds_count 1$/m);
    const [entry] = await cache.list();
    expect(text).toContain(`emend_env_cache_bytes ${entry!.bytes}\n`);
  });

  it('with EMEND_ENV_CACHE_MB=0 every tree runs its own setup, as without a cache', async () => {
    const cache = newCache(0);
    const repo = fixtureRepo(BASE, PLAIN_CHANGE);
    const r = await run(repo, cache);
    expect(r.setupRuns).toBe(2);
    expect(r.out.setup?.environment).toBeUndefined();
    expect(existsSync(cache.dir)).toBe(false);
  });
});
