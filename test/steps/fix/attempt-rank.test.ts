import { describe, expect, it } from 'vitest';
import { type RankedAttempt, evidenceOf, rankAttempts } from '../../../src/steps/fix/attempt-rank.js';
import { attemptTemperatures, diffLines } from '../../../src/steps/fix/attempts.js';

// The ranking of a task's attempts over validator records (docs/agent.md, "Attempts"): a passing
// verdict first, then the reproduction rule's evidence, then the fewest new failures, then the
// smallest change; ties to the earliest.

type Verdict = RankedAttempt['verdict'];

const reproduced: Verdict = {
  passed: true,
  new_failures: [],
  reproduction: {
    rule: 'reproduction',
    test_files: ['tests/test_x.py'],
    failed_on_base: ['tests/test_x.py::test_x'],
    now_passing: ['tests/test_x.py::test_x'],
    still_failing: [],
    note: 'reproduced',
  },
};
const passedAlone: Verdict = { passed: true, new_failures: [] };
const noVerdict: Verdict = { passed: null, new_failures: [] };
const failing = (n: number): Verdict => ({ passed: false, new_failures: Array.from({ length: n }, (_, i) => `t${i}`) });
const partly: Verdict = {
  passed: false,
  new_failures: ['tests/test_x.py::test_y'],
  reproduction: { ...reproduced.reproduction!, still_failing: ['tests/test_x.py::test_y'] },
};

const at = (attempt: number, verdict: Verdict, lines = 2): RankedAttempt => ({ attempt, verdict, lines });
const order = (list: RankedAttempt[]) => rankAttempts(list).order.map((a) => a.attempt);

describe('ranking the attempts', () => {
  it('a passing verdict comes first, then no verdict, then a failed one, whatever else', () => {
    expect(order([at(1, failing(0), 1), at(2, noVerdict, 1), at(3, passedAlone, 90)])).toEqual([3, 2, 1]);
    expect(rankAttempts([at(1, failing(1)), at(2, passedAlone), at(3, failing(2))]).reason).toBe(
      'attempt 2: its validation passed (attempt 1: failed)',
    );
  });

  it('among passing ones, the reproduction rule’s evidence decides before size', () => {
    const { order: ranked, reason } = rankAttempts([at(1, passedAlone, 1), at(2, reproduced, 12)]);
    expect(ranked.map((a) => a.attempt)).toEqual([2, 1]);
    expect(reason).toBe(
      'attempt 2: a reproduction test that fails before the change and passes with it (attempt 1: no reproduction test)',
    );
    expect([evidenceOf(reproduced), evidenceOf(partly), evidenceOf(passedAlone), evidenceOf(noVerdict)]).toEqual([
      2, 1, 0, 0,
    ]);
  });

  it('among failing ones, partial evidence, then the fewest new failures', () => {
    expect(order([at(1, failing(1)), at(2, partly)])).toEqual([2, 1]);
    const { order: ranked, reason } = rankAttempts([at(1, failing(3)), at(2, failing(1)), at(3, failing(2))]);
    expect(ranked.map((a) => a.attempt)).toEqual([2, 3, 1]);
    expect(reason).toBe('attempt 2: the fewest new failures: 1 (attempt 3: 2)');
  });

  it('then the smallest change; a tie goes to the earliest', () => {
    const { order: ranked, reason } = rankAttempts([
      at(1, passedAlone, 8),
      at(2, passedAlone, 3),
      at(3, passedAlone, 5),
    ]);
    expect(ranked.map((a) => a.attempt)).toEqual([2, 3, 1]);
    expect(reason).toBe('attempt 2: the smallest change: 3 lines (attempt 3: 5)');
    expect(order([at(1, passedAlone, 8), at(2, passedAlone, 3), at(3, passedAlone, 3)])).toEqual([2, 3, 1]);
    expect(rankAttempts([at(2, reproduced), at(1, reproduced)]).reason).toBe(
      'attempt 1: as good as attempt 2 on every count (verdict, reproduction, new failures, size); the earlier one',
    );
  });

  it('one validated attempt is chosen as the only one', () => {
    expect(rankAttempts([at(3, failing(4))]).reason).toBe('attempt 3: the only attempt whose change was validated');
    expect(() => rankAttempts([])).toThrow();
  });
});

describe('what the attempts run with', () => {
  it('temperatures: the fixer’s own first, the others spread up to 1', () => {
    expect(attemptTemperatures(0, 1)).toEqual([0]);
    expect(attemptTemperatures(0, 3)).toEqual([0, 0.5, 1]);
    expect(attemptTemperatures(0.2, 5)).toEqual([0.2, 0.4, 0.6, 0.8, 1]);
    expect(attemptTemperatures(1.2, 3)).toEqual([1.2, 1.2, 1.2]);
  });

  it('a change’s size is the lines it adds and removes, headers left out', () => {
    const diff = 'diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,3 @@\n-x = 1\n+x = 2\n+y = 3\n z = 4\n';
    expect(diffLines(diff)).toEqual({ added: 2, removed: 1 });
  });
});
