import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox, SandboxReport } from '../../src/sandbox/types.js';
import type { ValidatorOutput } from '../../src/step-contract/fix.js';
import { TestRunSlots, sideBySide } from '../../src/validator/run-slots.js';
import { validate } from '../../src/validator/validate.js';
import { type Files, fixtureRepo, fixtureSandbox, removeFixtureRepos } from '../support/fixture-repos.js';
import { recordingSandbox, testRunsIn } from '../support/recording-sandbox.js';

/*
 * The baseline and the change's tests at once (docs/validator.md, "Both trees at once"): the rule
 * that allows it, and the same verdict either way on a fixture with failing and passing tests, a
 * new failure run again as a suspect, a fix, and a reproduction test, in the real sandbox.
 */

const GB = 1024 * 1024 * 1024;
const report = (kind: SandboxReport['kind'], memoryBytes = 2 * GB) =>
  ({ kind, limits: { memoryBytes } }) as unknown as SandboxReport;

describe('when a second run fits', () => {
  it('counts a run as a core and as its memory limit, and refuses beyond either', () => {
    const slots = TestRunSlots.forSandbox(report('bubblewrap'), 'auto', { cores: 4, memoryBytes: 6 * GB });
    expect(slots.capacity).toBe(3);
    const a = slots.hold();
    const b = slots.tryExtra();
    const c = slots.tryExtra();
    expect(b).toBeDefined();
    expect(c).toBeDefined();
    expect(slots.tryExtra()).toBeUndefined();
    // A validation's own run is never refused.
    const d = slots.hold();
    expect(slots.running).toBe(4);
    for (const release of [a, b, c, d]) release?.();
    // A release counts once.
    a();
    expect(slots.running).toBe(0);
  });

  it('two validations on two cores leave no room for a third run; one leaves room for its baseline', () => {
    const slots = TestRunSlots.forSandbox(report('bubblewrap'), 'auto', { cores: 2, memoryBytes: 24 * GB });
    const one = slots.hold();
    const extra = slots.tryExtra();
    expect(extra).toBeDefined();
    extra?.();
    const two = slots.hold();
    expect(slots.tryExtra()).toBeUndefined();
    one();
    two();
  });

  it('never with the unsafe-host sandbox (the runs would share the host’s ports and /tmp), nor when turned off', () => {
    const big = { cores: 64, memoryBytes: 256 * GB };
    expect(TestRunSlots.forSandbox(report('unsafe-host'), 'auto', big).tryExtra()).toBeUndefined();
    expect(TestRunSlots.forSandbox(report('bubblewrap'), 'off', big).tryExtra()).toBeUndefined();
    // One core, or memory for one run: in turn.
    expect(TestRunSlots.forSandbox(report('bubblewrap'), 'auto', { cores: 1, memoryBytes: 256 * GB }).capacity).toBe(1);
    expect(
      TestRunSlots.forSandbox(report('bubblewrap', 8 * GB), 'auto', { cores: 8, memoryBytes: 12 * GB }).capacity,
    ).toBe(1);
  });

  it('waits for both before throwing, so neither runs on in a removed tree', async () => {
    const slots = TestRunSlots.forSandbox(report('bubblewrap'), 'auto', { cores: 4, memoryBytes: 64 * GB });
    let slowEnded = false;
    const failing = sideBySide(
      slots,
      async () => {
        throw new Error('the first failed');
      },
      async () => {
        await new Promise((r) => setTimeout(r, 50));
        slowEnded = true;
      },
    );
    await expect(failing).rejects.toThrow('the first failed');
    expect(slowEnded).toBe(true);
    expect(slots.running).toBe(0);
  });
});

const pkg = JSON.stringify({ name: 'fixture', version: '1.0.0', private: true, scripts: { test: 'node --test' } });
const LIB = "exports.a = () => 'not a';\nexports.b = () => 'b';\nexports.c = () => 'not c';\nexports.d = () => 'd';\n";
const TESTS = `const test = require('node:test');
const assert = require('node:assert');
const { a, b, c, d } = require('../src/lib.js');
test('A', () => assert.strictEqual(a(), 'a'));
test('B', () => assert.strictEqual(b(), 'b'));
test('C', () => assert.strictEqual(c(), 'c'));
test('D', () => assert.strictEqual(d(), 'd'));
`;
/** A and C fail on the base commit, B and D pass. */
const BASE: Files = { 'package.json': pkg, 'src/lib.js': LIB, 'test/lib.test.js': TESTS };
/** Breaks B, fixes C, leaves A failing, and brings a test for C that fails on the base commit. */
const CHANGE: Files = {
  'src/lib.js': LIB.replace("'b'", "'not b'").replace("'not c'", "'c'"),
  'test/c.test.js':
    "const test = require('node:test');\nconst assert = require('node:assert');\nconst { c } = require('../src/lib.js');\n" +
    "test('c is c', () => assert.strictEqual(c(), 'c'));\n",
};

/** What does not depend on when the runs happened: the times (in the output's tail too). */
function verdictOf(out: ValidatorOutput) {
  const { duration_ms: _, log_tail: __, baseline, ...rest } = out;
  const { duration_ms: ___, ...base } = baseline ?? ({} as NonNullable<ValidatorOutput['baseline']>);
  return { ...rest, baseline: base };
}

describe('both trees at once', { timeout: 120_000 }, () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await fixtureSandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'off' });
  });
  afterAll(() => removeFixtureRepos());

  async function run(repo: { dir: string; base: string }, mode: 'auto' | 'off') {
    const recorded = recordingSandbox(sandbox);
    // Room for both runs (this machine's own cores may be busy with other work: the rule is tested above).
    const runSlots = TestRunSlots.forSandbox(sandbox.report(), mode, { cores: 4, memoryBytes: 64 * GB });
    const logs: string[] = [];
    const out = await validate(
      recorded.sandbox,
      { dir: repo.dir, base: repo.base },
      { runSlots, log: (m) => logs.push(m) },
    );
    expect(runSlots.running).toBe(0);
    const base = testRunsIn(recorded.runs, 'baseline', out.command);
    const change = testRunsIn(recorded.runs, 'change', out.command);
    return { out, logs, base, change };
  }

  it('gives the same verdict as one tree after the other, with the runs overlapping', async () => {
    const repo = fixtureRepo(BASE, CHANGE);
    const together = await run(repo, 'auto');
    const inTurn = await run(repo, 'off');

    expect(together.out).toMatchObject({
      passed: false,
      new_failures: ['B'],
      fixed: ['C', 'c is c'],
      preexisting_failures: ['A'],
      reruns: [{ test: 'B', change: ['failed', 'failed'], baseline: ['passed', 'passed'] }],
    });
    expect(together.out.reproduction).toMatchObject({ failed_on_base: ['c is c'], now_passing: ['c is c'] });
    expect(verdictOf(together.out)).toEqual(verdictOf(inTurn.out));

    // The first runs and the suspect's re-runs: two of each tree, each pair at once, or one after the other.
    expect(together.base).toHaveLength(2);
    expect(together.change).toHaveLength(2);
    expect(inTurn.base).toHaveLength(2);
    const overlap = (x: { start: number; end: number }, y: { start: number; end: number }) =>
      x.start < y.end && y.start < x.end;
    for (const i of [0, 1]) {
      expect(overlap(together.base[i]!, together.change[i]!), `pair ${i} at once`).toBe(true);
      expect(overlap(inTurn.base[i]!, inTurn.change[i]!), `pair ${i} in turn`).toBe(false);
    }
    expect(together.logs).toContain('baseline and change ran at once');
    expect(inTurn.logs).not.toContain('baseline and change ran at once');
  });
});
