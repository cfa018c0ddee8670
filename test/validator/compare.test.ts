import { describe, expect, it } from 'vitest';
import { judgeRun } from '../../src/test-runs/outcome.js';
import { compareRuns, unreachedOnBaseline } from '../../src/validator/compare.js';
import type { ParsedRun } from '../../src/test-runs/parse.js';
import type { TestStatus } from '../../src/test-runs/parser-types.js';

const parsed = (tests: Record<string, TestStatus>, markers: string[] = [], running?: string): ParsedRun => ({
  tests: new Map(Object.entries(tests)),
  markers,
  running,
  details: new Map(),
});
const exit = (exitCode: number | null, more: { timedOut?: boolean; signal?: string } = {}) => ({
  exitCode,
  signal: more.signal ?? null,
  timedOut: more.timedOut ?? false,
  timeoutMs: 60_000,
});

describe('failures the baseline never reached', () => {
  const seen = (reported: string[], stoppedShort: boolean, listsPasses: boolean) => ({
    reported: new Set(reported),
    stoppedShort,
    listsPasses,
  });
  it('leaves out a test the baseline did not list when its run stopped short and it lists passes', () => {
    expect(unreachedOnBaseline(['later', 'b', '(run) exited with code 1'], seen(['a', 'b'], true, true))).toEqual([
      'later',
    ]);
  });
  it('leaves out nothing when the baseline ran to the end, or lists only failures (jest without --verbose)', () => {
    expect(unreachedOnBaseline(['later'], seen(['a'], false, true))).toEqual([]);
    expect(unreachedOnBaseline(['later'], seen(['a'], true, false))).toEqual([]);
    expect(unreachedOnBaseline(['later'], undefined)).toEqual([]);
  });
});

describe('judging runs and comparing them', () => {
  it('fails a run on its output even when it exits 0', () => {
    expect(judgeRun(parsed({ a: 'passed', b: 'failed' }), exit(0)).failures).toEqual(['b']);
    expect(judgeRun(parsed({ a: 'passed' }, ['(output) Assertion failed']), exit(0)).failures).toEqual([
      '(output) Assertion failed',
    ]);
    expect(judgeRun(parsed({ a: 'passed' }), exit(0)).failures).toEqual([]);
  });

  it('fails a non-zero exit with nothing to show for it as a run-level failure', () => {
    expect(judgeRun(parsed({ a: 'passed' }), exit(1)).failures).toEqual(['(run) exited with code 1']);
    expect(judgeRun(parsed({}), exit(null, { signal: 'SIGXCPU' })).failures).toEqual(['(run) killed by SIGXCPU']);
    // explained by a failing test: no extra entry
    expect(judgeRun(parsed({ b: 'failed' }), exit(1)).failures).toEqual(['b']);
    expect(judgeRun(parsed({ a: 'passed' }), exit(0), '(setup) npm ci exited with code 1').failures).toEqual([
      '(setup) npm ci exited with code 1',
    ]);
  });

  it('fails a timed-out run and the test it was running', () => {
    const outcome = judgeRun(parsed({ a: 'passed' }, [], 'slow'), exit(null, { timedOut: true, signal: 'SIGKILL' }));
    expect(outcome.failures).toEqual(['(run) timed out after 60 s', 'slow']);
    expect(outcome.complete).toBe(false);
  });

  it(
    'fails the test a run was stopped at by name, adds no run-level failure, and does not count the tests after ' +
      'it',
    () => {
      const stopped = judgeRun(parsed({ a: 'passed', hung: 'failed' }), {
        ...exit(null, { signal: 'SIGKILL' }),
        hung: 'hung',
      });
      expect(stopped.failures).toEqual(['hung']);
      expect(stopped.complete).toBe(false);
      // pytest -v printed the hung test's id without a status: it is failed all the same
      expect(
        judgeRun(parsed({ a: 'passed' }, [], 'hung'), { ...exit(null, { signal: 'SIGKILL' }), hung: 'hung' }).tests.get(
          'hung',
        ),
      ).toBe('failed');
      // a baseline failure after the hung test (never reached) is neither fixed nor pre-existing
      expect(compareRuns(['later', '(run) exited with code 1'], stopped)).toEqual({
        new_failures: ['hung'],
        preexisting_failures: [],
        fixed: [],
      });
      // the baseline stopped at the hang, the change passing it: fixed
      const change = judgeRun(parsed({ a: 'passed', hung: 'passed', later: 'failed' }), exit(1));
      // a test the baseline never reached that fails on the change counts as new
      expect(compareRuns(stopped.failures, change)).toEqual({
        new_failures: ['later'],
        preexisting_failures: [],
        fixed: ['hung'],
      });
    },
  );

  it('tells new failures from pre-existing ones and finds what the change fixed', () => {
    const change = judgeRun(parsed({ A: 'failed', B: 'failed', C: 'passed', D: 'passed' }), exit(1));
    expect(compareRuns(['A', 'C', '(output) Assertion failed'], change)).toEqual({
      new_failures: ['B'],
      preexisting_failures: ['A'],
      fixed: ['(output) Assertion failed', 'C'],
    });
  });

  it('does not call a test fixed that the change’s run never reached', () => {
    const cut = judgeRun(parsed({ C: 'passed' }), exit(null, { timedOut: true }));
    expect(compareRuns(['A', 'C', '(run) exited with code 1'], cut).fixed).toEqual(['C']);
    // Runners that list only failures (Surefire): absent from a complete run means it passed.
    const failuresOnly = judgeRun(parsed({ B: 'failed' }), exit(1));
    expect(compareRuns(['A', 'B'], failuresOnly)).toEqual({
      new_failures: [],
      preexisting_failures: ['B'],
      fixed: ['A'],
    });
    // A runner that lists passes: a baseline failure the change does not mention was not fixed (deleted, renamed).
    const listing = judgeRun(parsed({ B: 'passed' }), exit(0));
    expect(compareRuns(['A'], listing).fixed).toEqual([]);
  });
});
