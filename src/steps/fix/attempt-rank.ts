import type { ValidatorOutput } from '../../step-contract/index.js';

/** An attempt that made a change and had it validated: what the ranking reads of it. */
export interface RankedAttempt {
  attempt: number;
  verdict: Pick<ValidatorOutput, 'passed' | 'new_failures' | 'reproduction'>;
  /** Lines the change adds and removes. */
  lines: number;
}

/** The verdict first: passed, then not validated (no tests), then failed. */
const verdictRank = (v: RankedAttempt['verdict']) => (v.passed === true ? 2 : v.passed === null ? 1 : 0);

/**
 * The reproduction rule's evidence (docs/validator.md, "Reproduction test"): 2 when a test of the
 * change failed on the base commit and passes with it and none of them still fails; 1 when some
 * pass but others still fail; 0 for none.
 */
export function evidenceOf(v: RankedAttempt['verdict']): 0 | 1 | 2 {
  const r = v.reproduction;
  if (r?.rule !== 'reproduction' || r.now_passing.length === 0) return 0;
  return r.still_failing.length === 0 ? 2 : 1;
}

interface Key {
  /** Higher is better. */
  score: (a: RankedAttempt) => number;
  /** Why `best` beats `other` on this key, in words. */
  says: (best: RankedAttempt, other: RankedAttempt) => string;
}

const VERDICT_WORDS = ['failed', 'no verdict (nothing validated)', 'passed'];
const EVIDENCE_WORDS = [
  'no reproduction test',
  'a reproduction test with some of its tests still failing',
  'a reproduction test that fails before the change and passes with it',
];
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The ranking rule's keys, in order (docs/agent.md, "Attempts"). */
const KEYS: Key[] = [
  {
    score: (a) => verdictRank(a.verdict),
    says: (b, o) =>
      `its validation ${VERDICT_WORDS[verdictRank(b.verdict)]} (attempt ${o.attempt}: ${VERDICT_WORDS[verdictRank(o.verdict)]})`,
  },
  {
    score: (a) => evidenceOf(a.verdict),
    says: (b, o) =>
      `${EVIDENCE_WORDS[evidenceOf(b.verdict)]} (attempt ${o.attempt}: ${EVIDENCE_WORDS[evidenceOf(o.verdict)]})`,
  },
  {
    score: (a) => -a.verdict.new_failures.length,
    says: (b, o) =>
      `the fewest new failures: ${b.verdict.new_failures.length} (attempt ${o.attempt}: ${o.verdict.new_failures.length})`,
  },
  {
    score: (a) => -a.lines,
    says: (b, o) => `the smallest change: ${plural(b.lines, 'line')} (attempt ${o.attempt}: ${o.lines})`,
  },
];

/** Negative when `a` ranks before `b`: the keys in order, then the earlier attempt. */
export function compareAttempts(a: RankedAttempt, b: RankedAttempt): number {
  for (const key of KEYS) {
    const d = key.score(b) - key.score(a);
    if (d !== 0) return d;
  }
  return a.attempt - b.attempt;
}

/**
 * The attempts best first, and why the first was chosen: a passing verdict first, then the
 * reproduction rule's evidence, then the fewest new failures, then the smallest change; ties go
 * to the earliest. The reason names the key that set it above the runner-up.
 */
export function rankAttempts(attempts: RankedAttempt[]): { order: RankedAttempt[]; reason: string } {
  if (attempts.length === 0) throw new Error('no attempt to rank');
  const order = [...attempts].sort(compareAttempts);
  const [best, next] = order as [RankedAttempt, RankedAttempt | undefined];
  if (!next) return { order, reason: `attempt ${best.attempt}: the only attempt whose change was validated` };
  const key = KEYS.find((k) => k.score(best) !== k.score(next));
  const reason = key
    ? `attempt ${best.attempt}: ${key.says(best, next)}`
    : `attempt ${best.attempt}: as good as attempt ${next.attempt} on every count (verdict, reproduction, new ` +
      'failures, size); the earlier one';
  return { order, reason };
}
