import type { TestStatus } from './parser-types.js';

/** How many tests passed, failed and were skipped. */
export interface TestCounts {
  passed: number;
  failed: number;
  skipped: number;
}

/**
 * What runners print at the end of a run without naming each test (pytest without -v, mocha's
 * dot reporter, unittest without -v): their totals. A command from the repository's settings or
 * `.emend/test` runs without the flags that make a runner name every test, so its output may
 * have nothing else to count by. A total of one runner (`2 passed in 0.01s`), not of a line
 * another program could print: each pattern is anchored to the whole line.
 */
const SUMMARIES: ((line: string, next: string[]) => TestCounts | undefined)[] = [pytest, unittest, jest, vitest];

const zero = (): TestCounts => ({ passed: 0, failed: 0, skipped: 0 });

/** pytest's last line: `===== 1 failed, 2 passed, 1 skipped in 0.12s =====`, or `-q`'s bare `2 passed in 0.01s`. */
function pytest(line: string): TestCounts | undefined {
  const m = /^=*\s*((?:\d+ [a-z]+(?:, )?)+|no tests ran) in [\d.]+s(?: \([\d:]+\))?\s*=*$/.exec(line.trim());
  if (!m) return undefined;
  const counts = zero();
  for (const [, n, word] of m[1]!.matchAll(/(\d+) ([a-z]+)/g)) {
    const k = Number(n);
    if (word === 'passed' || word === 'xpassed') counts.passed += k;
    else if (word === 'failed' || word === 'error' || word === 'errors') counts.failed += k;
    else if (word === 'skipped' || word === 'xfailed') counts.skipped += k;
  }
  return counts;
}

/** unittest's `Ran 3 tests in 0.001s`, then (after a blank line) `OK (skipped=1)` or `FAILED (failures=1, errors=1)`. */
function unittest(line: string, next: string[]): TestCounts | undefined {
  const m = /^Ran (\d+) tests? in [\d.]+s$/.exec(line.trim());
  if (!m) return undefined;
  const verdict = next.map((l) => l.trim()).find((l) => l !== '');
  const v = verdict && /^(OK|FAILED)(?: \((.*)\))?$/.exec(verdict);
  if (!v) return undefined;
  const field = (name: string) => Number(new RegExp(`\\b${name}=(\\d+)`).exec(v[2] ?? '')?.[1] ?? 0);
  const failed = field('failures') + field('errors') + field('unexpected successes');
  const skipped = field('skipped') + field('expected failures');
  return { passed: Math.max(0, Number(m[1]) - failed - skipped), failed, skipped };
}

/** `1 failed, 1 skipped, 2 passed` (jest) or `1 failed | 2 passed` (vitest): each number by its word. */
function tally(words: string): TestCounts {
  const counts = zero();
  for (const [, n, word] of words.matchAll(/(\d+) ([a-z]+)/g)) {
    const k = Number(n);
    if (word === 'passed') counts.passed += k;
    else if (word === 'failed') counts.failed += k;
    else if (word === 'skipped' || word === 'todo') counts.skipped += k;
  }
  return counts;
}

/** jest's `Tests:       1 failed, 1 skipped, 2 passed, 4 total`. */
function jest(line: string): TestCounts | undefined {
  const m = /^Tests:\s+((?:\d+ [a-z]+, )*\d+ total)$/.exec(line.trim());
  if (!m) return undefined;
  return tally(m[1]!);
}

/** vitest's `Tests  1 failed | 2 passed | 1 skipped (4)`. */
function vitest(line: string): TestCounts | undefined {
  const m = /^Tests\s+((?:\d+ [a-z]+ \| )*\d+ [a-z]+) \((\d+)\)$/.exec(line.trim());
  if (!m) return undefined;
  return tally(m[1]!);
}

/**
 * Totals that are printed as one line each: node:test's (`# pass 2` in TAP, `ℹ pass 2` in its spec
 * reporter) and mocha's (`2 passing (5ms)`, `1 failing`, `1 pending`), read as one summary per
 * block of such lines.
 */
const LINE_TOTALS: [RegExp, keyof TestCounts][] = [
  [/^(?:#|ℹ) pass (\d+)$/, 'passed'],
  [/^(?:#|ℹ) fail (\d+)$/, 'failed'],
  [/^(?:#|ℹ) (?:skipped|todo) (\d+)$/, 'skipped'],
  [/^(\d+) passing \(\d+(?:ms|s|m)\)$/, 'passed'],
  [/^(\d+) failing$/, 'failed'],
  [/^(\d+) pending$/, 'skipped'],
];

/** The runners' own totals in an output, summed over every summary it has; undefined when there is none. */
export function summaryCounts(output: string): TestCounts | undefined {
  const lines = output.split('\n');
  let found: TestCounts | undefined;
  const add = (c: TestCounts) => {
    found ??= zero();
    found.passed += c.passed;
    found.failed += c.failed;
    found.skipped += c.skipped;
  };
  lines.forEach((line, i) => {
    for (const summary of SUMMARIES) {
      const counts = summary(line, lines.slice(i + 1, i + 4));
      if (counts) add(counts);
    }
    const trimmed = line.trim();
    for (const [pattern, key] of LINE_TOTALS) {
      const m = pattern.exec(trimmed);
      if (m) add({ ...zero(), [key]: Number(m[1]) });
    }
  });
  return found;
}

/**
 * The run's counts: by the tests the output names, unless the runners' totals count more (a
 * runner that names only its failures, or none); undefined when the output neither names a
 * test nor has a total: the count is not known, which is not zero.
 */
export function testCounts(tests: Map<string, TestStatus>, output: string): TestCounts | undefined {
  const named = zero();
  for (const s of tests.values()) named[s]++;
  const totals = summaryCounts(output);
  if (!totals) return tests.size > 0 ? named : undefined;
  const sum = (c: TestCounts) => c.passed + c.failed + c.skipped;
  return sum(totals) > sum(named) ? totals : named;
}
