import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutAt } from '../../src/eval/checkout.js';
import { judge } from '../../src/eval/judge.js';
import { applyGoldPatch } from '../../src/eval/oracle.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import {
  type EvalInstance,
  SRC_ON_PATH,
  buildInstance,
  jsSpec,
  pythonSpec,
  pythonSrcSpec,
  removeEvalRepos,
} from '../support/eval-instances.js';
import { fixtureSandbox, removeFixtureRepos } from '../support/fixture-repos.js';
import { EnvironmentCache } from '../../src/environments/env-cache.js';

/** A test patch line that changes `.emend/setup` (a comment added at its end). */
const manifestPatch = [
  'diff --git a/.emend/setup b/.emend/setup',
  '--- a/.emend/setup',
  '+++ b/.emend/setup',
  '@@ -1 +1,2 @@',
  ' mkdir -p node_modules/dep && echo "exports.two = 2;" > node_modules/dep/index.js',
  '+# changed by the test patch',
  '',
].join('\n');

// The judge on checkouts of instances built here, in the real bubblewrap sandbox.
describe('judge', { timeout: 90_000 }, () => {
  let sandbox: Sandbox;
  let root: string;
  let py: EvalInstance;
  let js: EvalInstance;
  let src: EvalInstance;
  let n = 0;

  beforeAll(async () => {
    sandbox = await fixtureSandbox();
    root = mkdtempSync(join(tmpdir(), 'emend-judge-test-'));
    py = buildInstance(join(root, 'mirrors'), 'acme__pycalc-1', pythonSpec);
    js = buildInstance(join(root, 'mirrors'), 'acme__jscalc-1', jsSpec);
    src = buildInstance(join(root, 'mirrors'), 'acme__srccalc-1', pythonSrcSpec);
  });
  afterAll(() => {
    removeEvalRepos();
    removeFixtureRepos();
    rmSync(root, { recursive: true, force: true });
  });

  const checkout = async (instance: EvalInstance) => {
    const dir = join(root, `checkout-${n++}`);
    await checkoutAt(instance.repo, instance.base_commit, dir, { mirrors: join(root, 'mirrors') }, join(root, 'home'));
    return dir;
  };

  it('checks out from a clone URL when asked, and says why a checkout failed', async () => {
    const dir = join(root, `checkout-${n++}`);
    const url = `file://${join(root, 'mirrors', 'acme+pycalc')}`;
    await checkoutAt(py.repo, py.base_commit, dir, { mirrors: join(root, 'none'), urlTemplate: url }, join(root, 'h'));
    expect(readFileSync(join(dir, 'calc.py'), 'utf8')).toContain('return a - b');
    const missing = 'f'.repeat(40);
    await expect(
      checkoutAt(py.repo, missing, join(root, `checkout-${n++}`), { mirrors: join(root, 'mirrors') }, join(root, 'h')),
    ).rejects.toThrow(new RegExp(`could not check out acme/pycalc at ${missing} from .*acme\\+pycalc`));
  });

  it('resolves the gold patch and leaves the checkout as it was (test_patch goes to a copy)', async () => {
    const dir = await checkout(py);
    const edits = await applyGoldPatch(dir, py.patch);
    expect(edits).toEqual({ applied: 1, failures: [] });
    const before = readFileSync(join(dir, 'tests/test_calc.py'), 'utf8');
    const verdict = await judge(dir, py, { sandbox });
    expect(verdict, verdict.log_tail).toMatchObject({
      resolved: true,
      f2p: { passed: 1, total: 1 },
      p2p: { passed: 1, total: 1 },
      not_passed: [],
      setup: { ok: true },
    });
    // pytest on the files of the listed ids, as the SWE-bench harness runs them
    expect(verdict.command).toMatch(/^python3 -m pytest 'tests\/test_calc\.py' -v -rA /);
    expect(readFileSync(join(dir, 'tests/test_calc.py'), 'utf8')).toBe(before);
    expect(execFileSync('git', ['-C', dir, 'status', '--porcelain'], { encoding: 'utf8' })).toBe(' M calc.py\n');
  });

  it('builds the environment into the cache from the base commit once and lays it for the next judge of that commit', async () => {
    // The setup writes a module the tests need: the tests pass only where the environment was laid.
    const setup = 'mkdir -p node_modules/dep && echo "exports.two = 2;" > node_modules/dep/index.js\n';
    const needsDep = buildInstance(join(root, 'mirrors'), 'acme__depcalc-1', {
      ...jsSpec,
      repo: 'acme/depcalc',
      base: { ...jsSpec.base, '.emend/setup': setup },
      tests: {
        'test/add.test.js': jsSpec.tests['test/add.test.js']!.replace(
          'lib.add(2, 3)',
          "lib.add(require('dep').two, 3)",
        ),
      },
    });
    const cache = new EnvironmentCache({ dir: join(root, 'env-cache'), maxBytes: 64 * 1024 * 1024 });
    const judged = async (gold: boolean) => {
      const dir = await checkout(needsDep);
      if (gold) await applyGoldPatch(dir, needsDep.patch);
      const environments = { cache, workspace: 'eval', repository: needsDep.repo };
      return judge(dir, needsDep, { sandbox, environments, base: { git: { dir }, commit: needsDep.base_commit } });
    };
    const oracle = await judged(true);
    expect(oracle, oracle.log_tail).toMatchObject({ resolved: true, setup: { ok: true, environment: 'built' } });
    const baseline = await judged(false);
    expect(baseline, baseline.log_tail).toMatchObject({
      resolved: false,
      f2p: { passed: 0, total: 1 },
      p2p: { passed: 1, total: 1 },
      setup: { ok: true, environment: 'hit' },
    });
    expect((await cache.list()).map((e) => e.repository)).toEqual(['acme/depcalc']);
    // A test patch that changes what setup reads runs its own setup, outside the cache.
    const ownSetup = { ...needsDep, test_patch: `${needsDep.test_patch}${manifestPatch}` };
    const dir = await checkout(needsDep);
    const own = await judge(dir, ownSetup, {
      sandbox,
      environments: { cache, workspace: 'eval', repository: needsDep.repo },
      base: { git: { dir }, commit: needsDep.base_commit },
    });
    expect(own.setup.ok).toBe(true);
    expect(own.setup.environment).toBeUndefined();
  });

  it('puts the test patch’s files back as the base commit has them first: a change that wrote the same tests is judged', async () => {
    const dir = await checkout(js);
    await applyGoldPatch(dir, js.patch);
    // The change holds the test patch's new test already (as the fixer is asked to write one),
    // with other words, and edits a test file the base commit has.
    writeFileSync(join(dir, 'test/add.test.js'), "require('node:test')('adds', () => { throw new Error('mine'); });\n");
    writeFileSync(join(dir, 'test/mul.test.js'), "require('node:test')('multiplies', () => {});\n");
    const withoutBase = await judge(dir, js, { sandbox });
    expect(withoutBase.setup.failure?.stage).toBe('test_patch');
    const verdict = await judge(dir, js, { sandbox, base: { git: { dir }, commit: js.base_commit } });
    expect(verdict, verdict.log_tail).toMatchObject({ resolved: true, setup: { ok: true } });
    // the checkout itself and its index are untouched
    expect(execFileSync('git', ['-C', dir, 'status', '--porcelain'], { encoding: 'utf8' })).toBe(
      ' M src/lib.js\n M test/mul.test.js\n?? test/add.test.js\n',
    );
  });

  it("reports the oracle's edit failures: a patch that does not fit the files, and no patch at all", async () => {
    const dir = await checkout(py);
    const stale = py.patch.replaceAll('a - b', 'a - c');
    const outcome = await applyGoldPatch(dir, stale);
    expect(outcome.applied).toBe(0);
    expect(outcome.failures).toHaveLength(1);
    expect(outcome.failures[0]).toMatch(/calc\.py/);
    expect(await applyGoldPatch(dir, '')).toEqual({ applied: 0, failures: ['the instance has no gold patch'] });
    expect(readFileSync(join(dir, 'calc.py'), 'utf8')).toContain('return a - b');
  });

  it('does not resolve a wrong patch and names the test that failed', async () => {
    const dir = await checkout(py);
    // add() fixed, mul() broken: the F2P test passes, the P2P test fails
    writeFileSync(join(dir, 'calc.py'), 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n');
    const verdict = await judge(dir, py, { sandbox });
    expect(verdict).toMatchObject({
      resolved: false,
      f2p: { passed: 1, total: 1 },
      p2p: { passed: 0, total: 1 },
      not_passed: ['tests/test_calc.py::test_mul'],
    });
    expect(verdict.log_tail).toContain('test_mul');
    // only the listed ids count: with test_mul unlisted, its failure does not matter
    const listedOnly = await judge(dir, { ...py, PASS_TO_PASS: [] }, { sandbox });
    expect(listedOnly).toMatchObject({ resolved: true, f2p: { passed: 1, total: 1 }, p2p: { passed: 0, total: 0 } });
  });

  it('judges pytest ids with pytest where the repository names no runner, and an absent id does not pass', async () => {
    const dir = await checkout(py);
    await applyGoldPatch(dir, py.patch);
    const absent = 'tests/test_calc.py::test_gone';
    const verdict = await judge(dir, { ...py, PASS_TO_PASS: [...py.PASS_TO_PASS, absent] }, { sandbox });
    // an id pytest cannot find costs only itself: the others are still run and read
    expect(verdict).toMatchObject({ resolved: false, f2p: { passed: 1, total: 1 }, not_passed: [absent] });
  });

  it('counts an id the run never reports as not passed (node:test: the whole suite runs, the ids are read)', async () => {
    const dir = await checkout(js);
    await applyGoldPatch(dir, js.patch);
    const verdict = await judge(dir, { ...js, PASS_TO_PASS: ['multiplies', 'divides'] }, { sandbox });
    expect(verdict).toMatchObject({
      resolved: false,
      f2p: { passed: 1, total: 1 },
      p2p: { passed: 1, total: 2 },
      not_passed: ['divides'],
    });
  });

  it('reports a test patch that does not apply as a setup failure, running nothing', async () => {
    const dir = await checkout(py);
    const broken = py.test_patch.replace('def test_mul', 'def test_mull');
    const verdict = await judge(dir, { ...py, test_patch: broken }, { sandbox });
    expect(verdict.resolved).toBe(false);
    expect(verdict.setup.failure?.stage).toBe('test_patch');
    expect(verdict.setup.failure?.reason).toMatch(/git apply failed/);
    expect(verdict.not_passed).toEqual([...py.FAIL_TO_PASS, ...py.PASS_TO_PASS]);
  });

  it('runs the operator setup in the sandbox first (here: src/ on the path), and reports its failure', async () => {
    const dir = await checkout(src);
    await applyGoldPatch(dir, src.patch);
    const without = await judge(dir, src, { sandbox });
    expect(without.resolved).toBe(false);
    expect(without.log_tail).toMatch(/No module named '?calc/);
    const ok = await judge(dir, src, { sandbox, setupCommand: SRC_ON_PATH });
    expect(ok, ok.log_tail).toMatchObject({ resolved: true, setup: { ok: true, command: SRC_ON_PATH } });
    // or the tests' own environment (pytester's subprocesses change HOME, and with it the user site)
    const viaEnv = await judge(dir, src, { sandbox, env: { PYTHONPATH: '/workspace/repo/src' } });
    expect(viaEnv, viaEnv.log_tail).toMatchObject({ resolved: true, setup: { ok: true } });
    const failed = await judge(dir, src, { sandbox, setupCommand: 'echo no compiler here; exit 3' });
    expect(failed.resolved).toBe(false);
    expect(failed.setup.failure).toEqual({ stage: 'setup', reason: 'exited with code 3: no compiler here' });
  });
});
