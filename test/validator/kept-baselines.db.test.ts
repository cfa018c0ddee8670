import { randomBytes, randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/config.js';
import { type Database, openPostgres } from '../../src/db/client.js';
import { baselineResults } from '../../src/db/schema.js';
import type { Deps } from '../../src/deps.js';
import { createOutbound } from '../../src/outbound/outbound.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { ValidatorOutput } from '../../src/step-contract/fix.js';
import { validatorStep } from '../../src/steps/fix/validator.js';
import type { FixPayload, StepHelpers } from '../../src/steps/step.js';
import type { Task } from '../../src/tasks/service.js';
import { DbBaselineStore } from '../../src/validator/baseline-store.js';
import type { KeptBaseline } from '../../src/validator/kept-baseline.js';
import { type ValidateOptions, validate } from '../../src/validator/validate.js';
import { type Files, changeTo, fixtureRepo, fixtureSandbox, removeFixtureRepos } from '../support/fixture-repos.js';
import { type RecordedRun, recordingSandbox, testRunsIn } from '../support/recording-sandbox.js';
import { openTestDatabase, postgresUrlOf } from '../support/test-db.js';

/*
 * Kept baselines (docs/validator.md, "Kept baselines"), end to end: fixture repositories, the real
 * bubblewrap sandbox, the store in the test project's database (PGlite, then PostgreSQL). Whether
 * the baseline ran is read from what the sandbox ran in the baseline tree, and from the verdict.
 */

const pkg = JSON.stringify({ name: 'fixture', version: '1.0.0', private: true, scripts: { test: 'node --test' } });
const LIB = "exports.a = () => 'not a';\nexports.b = () => 'b';\nexports.c = () => 'c';\n";
const TESTS = `const test = require('node:test');
const assert = require('node:assert');
const { a, b, c } = require('../src/lib.js');
test('A', () => assert.strictEqual(a(), 'a'));
test('B', () => assert.strictEqual(b(), 'b'));
test('C', () => assert.strictEqual(c(), 'c'));
`;
/** A fails on the base commit; B and C pass. */
const BASE: Files = { 'package.json': pkg, 'src/lib.js': LIB, 'test/lib.test.js': TESTS };
/** Breaks B. */
const BREAKS_B: Files = { 'src/lib.js': LIB.replace("'b'", "'not b'") };
/** Fixes A. */
const FIXES_A: Files = { 'src/lib.js': LIB.replace("'not a'", "'a'") };
/** A test of its own for A: fails on the base commit, passes with FIXES_A. */
const A_TEST: Files = {
  'test/a.test.js':
    "const test = require('node:test');\nconst assert = require('node:assert');\nconst { a } = require('../src/lib.js');\n" +
    "test('a is a', () => assert.strictEqual(a(), 'a'));\n",
};

/**
 * The verdict without what differs between two runs of it: the times (in the output's tail too),
 * where the baseline came from, and the re-runs' statuses (a kept baseline is not run again for a
 * suspect: its column is shorter).
 */
function verdictOf(out: ValidatorOutput) {
  const { duration_ms: _, log_tail: _tail, baseline, reruns: ____, ...rest } = out;
  const { duration_ms: __, reused: ___, ...base } = baseline ?? ({} as NonNullable<ValidatorOutput['baseline']>);
  return { ...rest, baseline: base };
}

let database: Database;
let sandbox: Sandbox;
const secretKey = randomBytes(32);
const clock = manualClock();
const REPO = 'https://github.com/acme/widgets';

const storeOf = (workspace: string, db = database.db, maxBytes = 16 * 1024 * 1024) =>
  new DbBaselineStore({ db, secretKey, workspace, repository: REPO, maxBytes, now: () => clock.now() });

async function validated(
  dir: string,
  base: string,
  options: ValidateOptions = {},
): Promise<{ out: ValidatorOutput; runs: RecordedRun[]; logs: string[] }> {
  const recorded = recordingSandbox(sandbox);
  const logs: string[] = [];
  clock.advance(1_000);
  const out = await validate(recorded.sandbox, { dir, base }, { ...options, log: (m) => logs.push(m) });
  // The new field is the step contract's: the output comes back whole from its parse.
  expect(ValidatorOutput.parse(JSON.parse(JSON.stringify(out)))).toEqual(out);
  return { out, runs: recorded.runs, logs };
}

beforeAll(async () => {
  database = await openTestDatabase();
  sandbox = await fixtureSandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'off' });
});
afterAll(async () => {
  removeFixtureRepos();
  await database?.close();
});

describe('kept baselines', { timeout: 180_000 }, () => {
  it('reuses the baseline on the same base without running it, and runs it again with a changed test file', async () => {
    const repo = fixtureRepo(BASE, BREAKS_B);
    const store = storeOf(randomUUID());

    const first = await validated(repo.dir, repo.base, { baselines: store });
    expect(first.out).toMatchObject({ passed: false, new_failures: ['B'], preexisting_failures: ['A'] });
    expect(first.out.baseline?.reused).toBeUndefined();
    // Its run, and the new failure's re-run.
    expect(testRunsIn(first.runs, 'baseline', first.out.command)).toHaveLength(2);
    expect(first.logs).toContain('baseline kept');

    // Another change on the same base (a retry, a follow-up, another task): nothing runs in the baseline tree.
    changeTo(repo.dir, FIXES_A);
    const second = await validated(repo.dir, repo.base, { baselines: store });
    expect(second.out).toMatchObject({ passed: true, new_failures: [], fixed: ['A'] });
    expect(second.out.baseline?.reused).toMatchObject({ from: 'store', key: expect.any(String) });
    expect(second.runs.filter((r) => r.tree === 'baseline')).toEqual([]);
    expect(second.logs).toContain('baseline reused');
    expect(second.logs).not.toContain('baseline run');
    // The same verdict as a validation that ran its baseline.
    const fresh = await validated(repo.dir, repo.base);
    expect(testRunsIn(fresh.runs, 'baseline', fresh.out.command)).toHaveLength(1);
    expect(verdictOf(second.out)).toEqual(verdictOf(fresh.out));

    // A change with a test file: its tests must run on the base commit (the reproduction), so the baseline runs again.
    changeTo(repo.dir, { ...FIXES_A, ...A_TEST });
    const third = await validated(repo.dir, repo.base, { baselines: store });
    expect(third.out.baseline?.reused).toBeUndefined();
    expect(testRunsIn(third.runs, 'baseline', third.out.command)).toHaveLength(1);
    expect(third.out).toMatchObject({ passed: true, fixed: ['A', 'a is a'] });
    expect(third.out.reproduction).toMatchObject({ failed_on_base: ['a is a'], now_passing: ['a is a'] });

    // The same test file with another fix of the code: that baseline is kept too.
    changeTo(repo.dir, { ...FIXES_A, ...A_TEST, 'src/lib.js': LIB.replace("() => 'not a'", "() => ['a'].join('')") });
    const fourth = await validated(repo.dir, repo.base, { baselines: store });
    expect(fourth.out.baseline?.reused).toMatchObject({ from: 'store' });
    expect(fourth.runs.filter((r) => r.tree === 'baseline')).toEqual([]);
    expect(fourth.out.reproduction).toMatchObject({ now_passing: ['a is a'] });
    expect(fourth.out.passed).toBe(true);

    const rows = await database.db
      .select()
      .from(baselineResults)
      .where(eq(baselineResults.workspaceId, store.scope.workspace));
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => r.testFilesDigest === null).sort()).toEqual([false, true]);
    expect(rows.every((r) => r.baseCommit === repo.base && r.repository === REPO)).toBe(true);
    expect(rows.find((r) => r.testFilesDigest === null)?.hits).toBe(1);
  });

  it('misses when the environment key changes, and in another workspace', async () => {
    const repo = fixtureRepo(BASE, BREAKS_B);
    const workspace = randomUUID();
    const first = await validated(repo.dir, repo.base, { baselines: storeOf(workspace) });
    expect(first.out.baseline?.reused).toBeUndefined();

    // A setup variable is part of the environment's key (src/environments/env-key.ts).
    const other = await validated(repo.dir, repo.base, {
      baselines: storeOf(workspace),
      setupEnv: { npm_config_registry: 'http://127.0.0.1:4873/' },
    });
    expect(other.out.baseline?.reused).toBeUndefined();
    expect(testRunsIn(other.runs, 'baseline', other.out.command).length).toBeGreaterThan(0);
    const rows = await database.db.select().from(baselineResults).where(eq(baselineResults.workspaceId, workspace));
    expect(rows).toHaveLength(2);
    expect(new Set(rows.map((r) => r.envKey)).size).toBe(2);

    // And the first environment again: a hit.
    const again = await validated(repo.dir, repo.base, { baselines: storeOf(workspace) });
    expect(again.out.baseline?.reused).toMatchObject({ from: 'store' });

    // Another workspace never reads this one's.
    const elsewhere = await validated(repo.dir, repo.base, { baselines: storeOf(randomUUID()) });
    expect(elsewhere.out.baseline?.reused).toBeUndefined();
    expect(verdictOf(elsewhere.out)).toEqual(verdictOf(again.out));
  });

  it('two workers, each with its own connection, agree on the key and the verdict', async () => {
    // On PostgreSQL a second pool to the same database, as another worker has; PGlite has one process.
    const url = postgresUrlOf(database);
    const second = url ? openPostgres(url) : undefined;
    try {
      const repo = fixtureRepo(BASE, BREAKS_B);
      const workspace = randomUUID();
      const a = await validated(repo.dir, repo.base, { baselines: storeOf(workspace) });
      const b = await validated(repo.dir, repo.base, { baselines: storeOf(workspace, second?.db ?? database.db) });
      expect(b.out.baseline?.reused).toMatchObject({ from: 'store' });
      // Not even for the new failure's re-run: only the change's tree runs again.
      expect(b.runs.filter((r) => r.tree === 'baseline')).toEqual([]);
      expect(b.out.reruns).toEqual([{ test: 'B', change: ['failed', 'failed'], baseline: ['passed'] }]);
      expect(verdictOf(b.out)).toEqual(verdictOf(a.out));
      const [row] = await database.db.select().from(baselineResults).where(eq(baselineResults.workspaceId, workspace));
      expect(b.out.baseline?.reused?.key).toBe(row?.key);

      // Both keeping the same baseline at once (two workers missed together): one row, no error.
      const kept = (await storeOf(workspace).lookup(row!.key))!.kept;
      const again = {
        key: `${row!.key}-again`,
        workspace,
        repository: REPO,
        commit: repo.base,
        envKey: row!.envKey,
        command: row!.command,
      };
      const keep = (db: Database['db']) => storeOf(workspace, db).save(again, kept);
      await Promise.all([keep(database.db), keep(second?.db ?? database.db)]);
      const rows = await database.db.select().from(baselineResults).where(eq(baselineResults.key, again.key));
      expect(rows).toHaveLength(1);
    } finally {
      await second?.close();
    }
  });

  it('the validator step keeps a task’s baseline for the next task of the workspace on the same base', async () => {
    const repo = fixtureRepo(BASE, BREAKS_B);
    const workspace = randomUUID();
    const config = loadConfig({ EMEND_DATA_DIR: '/nonexistent/emend-data', EMEND_ENV_CACHE_MB: '0' });
    const payload = (): FixPayload => ({
      kind: 'fix',
      task: { id: randomUUID(), workspaceId: workspace, repoUrl: REPO } as Task,
      outputs: {},
      retry: 0,
    });
    const helpers = () =>
      ({
        deps: { sandbox, config, db: database.db, secretKey, clock, outbound: createOutbound([]) } as unknown as Deps,
        signal: new AbortController().signal,
        log: () => {},
        report: async () => {},
        checkout: async () => ({ dir: repo.dir, baseCommit: repo.base }),
      }) as unknown as StepHelpers;
    // The store is the step's own default: the database of deps, the task's workspace and repository.
    const step = validatorStep(() => ({
      sandbox,
      checkout: { dir: repo.dir, baseCommit: repo.base },
      environments: null,
    }));
    const first = await step(payload(), helpers());
    expect(first.output.baseline?.reused).toBeUndefined();
    const next = await step(payload(), helpers());
    expect(next.output.baseline?.reused).toMatchObject({ from: 'store' });
    expect(next.output).toMatchObject({ passed: false, new_failures: ['B'], preexisting_failures: ['A'] });
  });
});

describe('the cap', () => {
  const kept = (n: number): KeptBaseline => ({
    summary: {
      commit: 'c'.repeat(40),
      command: 'npm test',
      failures: [],
      tests: n,
      exit_code: 0,
      timed_out: false,
      duration_ms: 10,
      setup: 'none',
    },
    tests: Array.from({ length: n }, (_, i) => [`test ${i}`, 'passed'] as [string, 'passed']),
    complete: true,
  });
  const row = (key: string, workspace: string) => ({
    key,
    workspace,
    repository: REPO,
    commit: 'c'.repeat(40),
    envKey: 'e'.repeat(40),
    command: 'npm test',
  });

  it('evicts the least recently used baselines once they hold more than the cap', async () => {
    const workspace = randomUUID();
    const one = Buffer.byteLength(JSON.stringify(kept(100)));
    // Room for two, not three (every row in the table counts: other tests' rows are older, and go first).
    const store = storeOf(workspace, database.db, Math.floor(one * 2.5));
    const [a, b, c] = ['a', 'b', 'c'].map((k) => `${k}-${workspace}`);
    clock.advance(1_000);
    await store.save(row(a!, workspace), kept(100));
    clock.advance(1_000);
    await store.save(row(b!, workspace), kept(100));
    clock.advance(1_000);
    expect(await store.lookup(a!)).toBeDefined(); // a is now the most recently used
    clock.advance(1_000);
    await store.save(row(c!, workspace), kept(100));
    expect(await store.lookup(b!)).toBeUndefined();
    expect(await store.lookup(a!)).toBeDefined();
    expect(await store.lookup(c!)).toBeDefined();
    const total = await database.db.select({ bytes: baselineResults.bytes }).from(baselineResults);
    expect(total.reduce((sum, r) => sum + r.bytes, 0)).toBeLessThanOrEqual(one * 2.5);
  });

  it('reads only a run of the same day (UTC), and keeping it again the next day replaces it', async () => {
    const workspace = randomUUID();
    const store = storeOf(workspace);
    const key = `day-${workspace}`;
    clock.set(new Date('2026-01-15T23:59:00Z'));
    await store.save(row(key, workspace), kept(3));
    expect((await store.lookup(key))?.kept.summary.tests).toBe(3);
    clock.set(new Date('2026-01-16T00:01:00Z'));
    expect(await store.lookup(key)).toBeUndefined();
    await store.save(row(key, workspace), kept(4));
    expect(await store.lookup(key)).toMatchObject({
      kept: { summary: { tests: 4 } },
      ranAt: new Date('2026-01-16T00:01:00Z'),
    });
  });

  it('keeps nothing larger than the whole cap', async () => {
    const workspace = randomUUID();
    const store = storeOf(workspace, database.db, 100);
    await store.save(row(`big-${workspace}`, workspace), kept(100));
    expect(await store.lookup(`big-${workspace}`)).toBeUndefined();
  });
});
