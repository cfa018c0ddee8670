import { describe, expect, it } from 'vitest';
import { summaryCounts, testCounts } from '../../src/test-runs/summary-counts.js';

// The totals runners print when they do not name each test, as they print them.
describe('summaryCounts', () => {
  it.each([
    ['pytest', '============ 1 failed, 2 passed, 1 skipped, 1 xfailed in 0.12s ============', [2, 1, 2]],
    ['pytest -q', '2 passed in 0.01s', [2, 0, 0]],
    ['pytest errors', '=== 1 passed, 2 errors in 0.30s ===', [1, 2, 0]],
    ['pytest nothing', '============================ no tests ran in 0.01s ============================', [0, 0, 0]],
    ['unittest ok', 'Ran 3 tests in 0.001s\n\nOK (skipped=1)', [2, 0, 1]],
    ['unittest failed', 'Ran 4 tests in 0.002s\n\nFAILED (failures=1, errors=1)', [2, 2, 0]],
    ['jest', 'Tests:       1 failed, 1 skipped, 2 passed, 4 total', [2, 1, 1]],
    ['vitest', ' Tests  1 failed | 2 passed | 1 skipped (4)', [2, 1, 1]],
    ['mocha', '  2 passing (5ms)\n  1 pending\n  1 failing', [2, 1, 1]],
    ['node:test tap', '1..3\n# tests 3\n# pass 2\n# fail 0\n# skipped 1\n# todo 0', [2, 0, 1]],
    ['node:test spec', 'ℹ tests 2\nℹ pass 1\nℹ fail 1\nℹ skipped 0', [1, 1, 0]],
  ])('reads %s', (_name, output, [passed, failed, skipped]) => {
    expect(summaryCounts(output)).toEqual({ passed, failed, skipped });
  });

  it('reads no total where a runner printed none, nor from a line that only mentions a count', () => {
    expect(summaryCounts('...\nall good')).toBeUndefined();
    expect(summaryCounts('we had 2 passed in 3s yesterday, see the log')).toBeUndefined();
  });
});

describe('testCounts', () => {
  it('counts the named tests, unless the totals count more; unknown when there is neither', () => {
    const named = new Map([['t::a', 'failed' as const]]);
    // pytest without -v names only its failures (short summary); its totals count the passes too
    expect(testCounts(named, 'FAILED t::a - assert\n=== 1 failed, 2 passed in 0.1s ===')).toEqual({
      passed: 2,
      failed: 1,
      skipped: 0,
    });
    expect(testCounts(named, 'nothing else')).toEqual({ passed: 0, failed: 1, skipped: 0 });
    expect(testCounts(new Map(), '...')).toBeUndefined();
  });
});
