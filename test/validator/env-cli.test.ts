import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, killAll, runCli } from '../cli/cli-process.js';
import { fixtureRepo, removeFixtureRepos } from '../support/fixture-repos.js';

// `emend validate` with the data dir's environment cache, and `emend env list|purge`, as an
// operator runs them: the CLI process, the real sandbox, setup offline.
describe('emend env', { timeout: 90_000 }, () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'emend-env-cli-'));
    env = cliEnv({ EMEND_DATA_DIR: dataDir, EMEND_SANDBOX_SETUP_NETWORK: 'off' });
  });
  afterAll(async () => {
    await killAll();
    removeFixtureRepos();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('validate builds then reuses an environment; list shows it; purge removes by key, repository or all', async () => {
    const repo = fixtureRepo(
      {
        'package.json': JSON.stringify({
          name: 'f',
          version: '1.0.0',
          private: true,
          scripts: { test: 'node --test' },
        }),
        '.emend/setup': 'mkdir -p node_modules/dep && printf "module.exports = 42;\\n" > node_modules/dep/index.js\n',
        'test/dep.test.js':
          "const test = require('node:test');\nconst assert = require('node:assert');\ntest('dep', () => assert.strictEqual(require('dep'), 42));\n",
      },
      { 'README.md': 'changed\n' },
    );
    const first = await runCli(['validate', '--repo', repo.dir, '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).setup).toMatchObject({ environment: { cache: 'built' } });
    const second = await runCli(['validate', '--repo', repo.dir], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/setup: +sh \.emend\/setup \(from the cache, [0-9a-f]{12}/);

    const listed = await runCli(['env', 'list', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const entries = JSON.parse(listed.stdout);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ account: 'local', repository: realpathSync(repo.dir), paths: ['node_modules'] });
    expect(entries[0].bytes).toBeGreaterThan(0);
    const text = await runCli(['env', 'list'], env);
    expect(text.stdout).toContain(entries[0].key);
    expect(text.stdout).toContain('1 environment,');

    expect((await runCli(['env', 'purge'], env)).code).toBe(2);
    expect((await runCli(['env', 'frobnicate'], env)).code).toBe(2);
    expect((await runCli(['env', 'purge', '--all', entries[0].key], env)).code).toBe(2);
    const wrongRepo = await runCli(['env', 'purge', '--repo', '/no/such/repo'], env);
    expect(wrongRepo.code).toBe(1);
    expect(wrongRepo.stderr).toContain('no cached environment for /no/such/repo');

    const byKey = await runCli(['env', 'purge', entries[0].key], env);
    expect(byKey.code, byKey.stderr).toBe(0);
    expect(byKey.stdout).toBe('removed 1 environment\n');
    expect(JSON.parse((await runCli(['env', 'list', '--json'], env)).stdout)).toEqual([]);

    // Built again, then purged by repository, then --all on an empty cache is still a success.
    expect((await runCli(['validate', '--repo', repo.dir, '--json'], env)).code).toBe(0);
    const byRepo = await runCli(['env', 'purge', '--repo', realpathSync(repo.dir)], env);
    expect(byRepo.code, byRepo.stderr).toBe(0);
    expect(byRepo.stdout).toBe('removed 1 environment\n');
    expect((await runCli(['env', 'purge', '--all'], env)).stdout).toBe('removed 0 environments\n');
  });
});
