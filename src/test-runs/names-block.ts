import type { ParserResult, TestStatus } from './parser-types.js';

const MARKS: Record<string, TestStatus> = { '✓': 'passed', '✗': 'failed', '○': 'skipped' };

/**
 * A block a preload of the run wrote to its names file (mocha-names.ts, karma-hooks.ts): under its
 * header, a line per test, its mark and its name (`✓ math › adds two numbers`), to the first line
 * that is not one. Each block is a run; a test in two runs is reported twice.
 */
export function parseNamesBlock(lines: string[], header: string): ParserResult {
  const tests: [string, TestStatus][] = [];
  const explained: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== header) continue;
    explained.push(i);
    for (let j = i + 1; j < lines.length; j++) {
      const m = /^([✓✗○]) (.+)$/.exec(lines[j]!);
      if (!m) break;
      tests.push([m[2]!.trim(), MARKS[m[1]!]!]);
      explained.push(j);
      i = j;
    }
  }
  return { tests, explained };
}
