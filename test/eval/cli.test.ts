import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { evalCommand } from '../../src/cli/eval.js';
import type { InstanceResult } from '../../src/eval/run.js';
import {
  type EvalInstance,
  SRC_ON_PATH,
  buildInstance,
  datedSpec,
  jsSpec,
  pythonSpec,
  pythonSrcSpec,
  removeEvalRepos,
  writeDataset,
} from '../support/eval-instances.js';

// `emend eval` through its exported command, on instances built here: real git, the bubblewrap sandbox.
describe('emend eval', { timeout: 120_000 }, () => {
  let root: string;
  let mirrors: string;
  let dataset: string;
  let env: NodeJS.ProcessEnv;
  let instances: EvalInstance[];
  let runs = 0;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'emend-eval-cli-'));
    mirrors = join(root, 'mirrors');
    instances = [
      buildInstance(mirrors, 'acme__pycalc-1', pythonSpec),
      buildInstance(mirrors, 'acme__jscalc-1', jsSpec),
      buildInstance(mirrors, 'acme__srccalc-1', pythonSrcSpec),
    ];
    dataset = join(root, 'data.jsonl');
    writeDataset(dataset, instances);
    writeFileSync(join(root, 'setup.json'), JSON.stringify({ 'acme/srccalc': SRC_ON_PATH }));
    env = { EMEND_DATA_DIR: join(root, 'data'), EMEND_SANDBOX: 'bubblewrap', LOG_LEVEL: 'warn' };
  });
  afterEach(() => vi.restoreAllMocks());
  afterAll(() => {
    removeEvalRepos();
    rmSync(root, { recursive: true, force: true });
  });

  /** Runs the command with its printed lines kept (the lines are what a person reads). */
  async function run(args: string[]) {
    const out = join(root, `out-${runs++}`);
    const printed: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => printed.push(line));
    vi.spyOn(console, 'error').mockImplementation((line: string) => printed.push(line));
    const code = await evalCommand(['--out', out, '--mirrors', mirrors, ...args], env);
    vi.restoreAllMocks();
    return { code, printed: printed.join('\n'), out };
  }
  const results = (out: string): InstanceResult[] =>
    readFileSync(join(out, 'results.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  /** Every file of the mirrors with its size and mtime: a write anywhere changes it. */
  const listing = () =>
    readdirSync(mirrors, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name))
      .map((p) => `${p} ${statSync(p).size} ${statSync(p).mtimeMs}`)
      .sort();

  it('--oracle resolves every instance through the edit path, and the mirrors are not written', async () => {
    const before = listing();
    const { code, printed, out } = await run([
      '--dataset',
      dataset,
      '--oracle',
      '--setup',
      join(root, 'setup.json'),
      '--concurrency',
      '2',
      '--logs',
    ]);
    expect(code, printed).toBe(0);
    const byId = new Map(results(out).map((r) => [r.instance_id, r]));
    expect([...byId.keys()].sort()).toEqual(['acme__jscalc-1', 'acme__pycalc-1', 'acme__srccalc-1']);
    for (const r of byId.values()) {
      expect(r, r.log_tail).toMatchObject({ mode: 'oracle', resolved: true, not_passed: [] });
      expect(r.edits).toEqual({ applied: 1, failures: [] });
    }
    // the operator's setup built the instance's environment into the data dir's cache, as a task's would
    expect(byId.get('acme__srccalc-1')!.setup).toEqual({ ok: true, command: SRC_ON_PATH, environment: 'built' });
    const summary = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(summary).toContain('- resolved: 3 (100.0% of all, 100.0% of the 3 set up)');
    expect(summary).toMatch(/\| acme__jscalc-1 \| yes \| 1\/1 \| 1\/1 \| 1 applied, 0 failed \| none \|/);
    // each instance's setup and test time, and their median and p90 over the run
    for (const r of byId.values()) {
      expect(r.times?.setup_ms).toBeGreaterThanOrEqual(0);
      expect(r.times?.tests_ms).toBeGreaterThan(0);
    }
    expect(summary).toMatch(/^- setup time: median \d+\.\d s, p90 \d+\.\d s \(3 instance\(s\)\)$/m);
    expect(summary).toMatch(/^- test time: median \d+\.\d s, p90 \d+\.\d s \(3 instance\(s\)\)$/m);
    expect(summary).not.toContain('not resolved, by reason');
    // --logs: each instance's setup and whole test output as the judge read it
    const log = readFileSync(join(out, 'logs', 'acme__srccalc-1.log'), 'utf8');
    expect(log).toContain(`$ ${SRC_ON_PATH}\n`);
    expect(log).toContain(`$ ${byId.get('acme__srccalc-1')!.command}\n`);
    expect(log).toMatch(/passed/);
    expect(printed).toContain('3 of 3 resolved');
    expect(listing()).toEqual(before);
  });

  it('--baseline resolves nothing: the FAIL_TO_PASS test fails on the unchanged checkout', async () => {
    const { code, printed, out } = await run(['--dataset', dataset, '--baseline', '--setup', join(root, 'setup.json')]);
    expect(code, printed).toBe(0);
    const all = results(out);
    expect(all).toHaveLength(3);
    for (const r of all) {
      expect(r).toMatchObject({ mode: 'baseline', resolved: false, f2p: { passed: 0, total: 1 } });
      expect(r.p2p).toEqual({ passed: 1, total: 1 });
      expect(r.not_passed).toEqual(instances.find((i) => i.instance_id === r.instance_id)!.FAIL_TO_PASS);
      expect(r.edits).toBeUndefined();
    }
    const summary = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(summary).toContain('- resolved: 0 (0.0% of all');
    expect(summary).toContain('- acme__pycalc-1: `tests/test_calc.py::test_add`');
  });

  it('reports an instance whose setup fails, with the reason, and one whose mirror is missing', async () => {
    const failing = join(root, 'failing-setup.json');
    writeFileSync(failing, JSON.stringify({ 'acme/pycalc': { command: 'echo cannot build; exit 1' } }));
    const missing = { ...instances[1]!, instance_id: 'other__gone-1', repo: 'other/gone' };
    const data = join(root, 'data-setup.jsonl');
    writeDataset(data, [instances[0], missing]);
    const { code, out } = await run(['--dataset', data, '--oracle', '--setup', failing]);
    expect(code).toBe(0);
    const [py, gone] = results(out);
    expect(py!.setup.failure).toEqual({ stage: 'setup', reason: 'exited with code 1: cannot build' });
    expect(gone!.setup.failure).toEqual({
      stage: 'checkout',
      reason: `no mirror of other/gone under ${mirrors} (and no --clone-url)`,
    });
    const summary = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(summary).toContain('## Setup failures');
    expect(summary).toContain('- acme__pycalc-1 (setup): exited with code 1: cannot build');
    expect(summary).toContain('- not set up: 2');
    // counted by reason class, as the per-instance table names them
    expect(summary).toContain(
      '- not resolved, by reason:\n  - checkout failed: 1 (other__gone-1)\n  - setup failed (other): 1 (acme__pycalc-1)',
    );
    expect(summary).toMatch(/\| acme__pycalc-1 \| no \|.*\| setup failed \(other\) \|$/m);
    expect(py!.times?.setup_ms).toBeGreaterThanOrEqual(0);
    expect(py!.times?.tests_ms).toBeUndefined();
    expect(existsSync(join(out, 'logs'))).toBe(false);
  });

  it('runs the tests at the base commit’s date (--clock base, the default), again at today’s for listed tests that failed, and at today’s only with --clock now', async () => {
    const dated = buildInstance(mirrors, 'acme__datedcalc-1', datedSpec);
    const data = join(root, 'data-dated.jsonl');
    writeDataset(data, [dated]);
    const atBase = await run(['--dataset', data, '--oracle', '--logs']);
    expect(atBase.code, atBase.printed).toBe(0);
    const [then] = results(atBase.out);
    expect(then).toMatchObject({
      resolved: true,
      f2p: { passed: 1, total: 1 },
      p2p: { passed: 2, total: 2 },
      clock: '2020-06-15T12:00:00.000Z',
      passed_today: ['knows it is not 2020'],
    });
    expect(readFileSync(join(atBase.out, 'summary.md'), 'utf8')).toContain(
      "- tests' clock: each base commit's date (1 of the 1 set up; libfaketime); listed tests that passed only at today's date, where they ran again: acme__datedcalc-1 (1)",
    );
    const log = readFileSync(join(atBase.out, 'logs', 'acme__datedcalc-1.log'), 'utf8');
    expect(log).toContain(`emend: the tests' clock at 2020-06-15T12:00:00.000Z\n$ ${then!.command}\n`);
    expect(log).toContain(`emend: the tests' clock at today's date\n$ ${then!.command}\n`);
    const today = await run(['--dataset', data, '--oracle', '--clock', 'now']);
    expect(today.code, today.printed).toBe(0);
    const [now] = results(today.out);
    expect(now).toMatchObject({
      resolved: false,
      f2p: { passed: 0, total: 1 },
      p2p: { passed: 2, total: 2 },
      not_passed: ['adds, this year'],
    });
    expect(now!.clock).toBeUndefined();
    expect(now!.passed_today).toBeUndefined();
    expect(now!.log_tail).toMatch(/the year is 20\d\d/);
    expect(readFileSync(join(today.out, 'summary.md'), 'utf8')).toContain("- tests' clock: today's date");
  });

  it('--sample N runs a stable subset that covers every repository, and a larger sample resumed adds to it', async () => {
    const first = await run(['--dataset', dataset, '--baseline', '--sample', '2', '--setup', join(root, 'setup.json')]);
    expect(first.code, first.printed).toBe(0);
    const picked = results(first.out).map((r) => r.instance_id);
    expect(picked).toHaveLength(2);
    // the same sample again picks the same instances
    const again = await run(['--dataset', dataset, '--baseline', '--sample', '2', '--setup', join(root, 'setup.json')]);
    expect(
      results(again.out)
        .map((r) => r.instance_id)
        .sort(),
    ).toEqual([...picked].sort());
    const code = await evalCommand(
      ['--out', first.out, '--mirrors', mirrors, '--dataset', dataset, '--baseline', '--sample', '3', '--resume'],
      env,
    );
    expect(code).toBe(0);
    const all = results(first.out).map((r) => r.instance_id);
    expect(all.slice(0, 2)).toEqual(picked);
    expect([...all].sort()).toEqual(['acme__jscalc-1', 'acme__pycalc-1', 'acme__srccalc-1']);
    const both = await run(['--dataset', dataset, '--baseline', '--sample', '2', '--limit', '1']);
    expect(both.code).toBe(2);
    expect(both.printed).toContain(
      'eval takes one of --limit (the first N) and --sample (a stable subset of N), not both',
    );
  });

  it('--resume skips the instances results.jsonl already holds', async () => {
    const first = await run(['--dataset', dataset, '--baseline', '--limit', '1']);
    expect(results(first.out).map((r) => r.instance_id)).toEqual(['acme__pycalc-1']);
    const line = readFileSync(join(first.out, 'results.jsonl'), 'utf8');
    const code = await evalCommand(
      ['--out', first.out, '--mirrors', mirrors, '--dataset', dataset, '--baseline', '--resume'],
      env,
    );
    expect(code).toBe(0);
    const after = readFileSync(join(first.out, 'results.jsonl'), 'utf8');
    // the first line kept as it was, the other two appended once each
    expect(after.startsWith(line)).toBe(true);
    expect(results(first.out).map((r) => r.instance_id)).toEqual([
      'acme__pycalc-1',
      'acme__jscalc-1',
      'acme__srccalc-1',
    ]);
    expect(readFileSync(join(first.out, 'summary.md'), 'utf8')).toContain('- instances: 3');
    // --resume where there is no results.jsonl yet runs everything
    const fresh = await run(['--dataset', dataset, '--oracle', '--resume']);
    expect(fresh.code).toBe(0);
    expect(results(fresh.out)).toHaveLength(3);
    // the same directory resumed in the other mode: refused, the file left as it was
    const mixed = await evalCommand(
      ['--out', first.out, '--mirrors', mirrors, '--dataset', dataset, '--oracle', '--resume'],
      env,
    );
    expect(mixed).toBe(2);
    expect(readFileSync(join(first.out, 'results.jsonl'), 'utf8')).toBe(after);
  });

  it('stops at a malformed dataset line with the line and the field, before running anything', async () => {
    const bad = join(root, 'bad.jsonl');
    writeFileSync(
      bad,
      `${JSON.stringify(instances[0])}\n${JSON.stringify({ ...instances[1], base_commit: 'HEAD' })}\n`,
    );
    const { code, printed } = await run(['--dataset', bad, '--oracle']);
    expect(code).toBe(1);
    expect(printed).toContain(`${bad}, line 2: field base_commit is not a commit hash`);
  });

  it('refuses the model mode without a model key, and both --oracle and --baseline', async () => {
    const noKey = await run(['--dataset', dataset]);
    expect(noKey.code).toBe(2);
    expect(noKey.printed).toContain('no model key is configured for managed runs');
    const both = await run(['--dataset', dataset, '--oracle', '--baseline']);
    expect(both.code).toBe(2);
    expect(both.printed).toContain('eval takes one of --oracle and --baseline, not both');
    const badSetup = join(root, 'bad-setup.json');
    writeFileSync(badSetup, JSON.stringify({ 'acme/pycalc': { command: 'true', PYTHONPATH: 'src' } }));
    const setup = await run(['--dataset', dataset, '--oracle', '--setup', badSetup]);
    expect(setup.code).toBe(2);
    expect(setup.printed).toMatch(/bad-setup\.json: acme\/pycalc: /);
    const clock = await run(['--dataset', dataset, '--oracle', '--clock', 'yesterday']);
    expect(clock.code).toBe(2);
    expect(clock.printed).toContain('--clock expects base (the base commit’s date) or now');
  });
});
