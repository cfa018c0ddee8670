import { detail, messageOf, repoFrame } from './failure-detail.js';
import { KARMA_NAMES_HEADER } from './karma-hooks.js';
import { parseNamesBlock } from './names-block.js';
import type { FailureDetail, Frame, ParserResult, TestStatus } from './parser-types.js';

/**
 * The browser karma names at the start of its reporters' lines: `Chrome Headless 120.0.0.0
 * (Linux x86_64)`, `HeadlessChrome 0.0.0 (Linux 0.0.0)`, `Firefox 115.0 (Ubuntu 0.0.0)`: a
 * name, its version, and the system in parentheses.
 */
const BROWSER = String.raw`\S(?:[^()\n]*?\S)? \d[\w.]* \([^()\n]*\)`;

/** `<browser> <suites and title, joined by spaces> FAILED`: the progress and dots reporters' failure line. */
const FAILED = new RegExp(`^${BROWSER} (.+) FAILED$`);
/** `<browser>: Executed 2 of 3 (1 FAILED) (skipped 1) (0.05 secs / 0.01 secs)`, and `TOTAL: 1 FAILED, 1 SUCCESS`. */
const SUMMARY = new RegExp(`^(?:${BROWSER}: Executed \\d+ of \\d+\\b.*|TOTAL: \\d+ (?:FAILED|SUCCESS).*)$`);
/** A stack frame karma has mapped back to the served file: `at Context.<anonymous> (test/a.test.js:4:68)`. */
const FRAME = /^at (?:.*\()?([^\s()]+?):(\d+)(?::\d+)?\)?$/;

/**
 * Karma's own reporters (`progress`, the default, and `dots`) name failing tests only: `Chrome
 * Headless 120.0.0.0 (Linux x86_64) math sub subtracts FAILED`, then the error indented below.
 * The id is the test's full name as karma prints it, its describe blocks and title joined by
 * spaces, without the browser (the same test in two browsers is one test, and the browser's
 * version must not make a baseline failure look new). Passing tests are not listed, as with
 * Surefire: the comparison needs only the failures. The summary lines, which say FAILED too,
 * are explained so they are not read as failures of their own.
 */
export function parseKarma(lines: string[]): ParserResult {
  const tests = new Map<string, TestStatus>();
  const details: [string, FailureDetail][] = [];
  const explained: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trimEnd();
    if (SUMMARY.test(line)) {
      explained.push(i);
      continue;
    }
    const failed = FAILED.exec(line);
    if (!failed) continue;
    // Spaces collapsed, as the names block has them: one test, one id.
    const id = failed[1]!.replace(/\s+/g, ' ').trim();
    tests.set(id, 'failed');
    explained.push(i);
    // The error follows, indented (a tab): its message, then the frames.
    const message: string[] = [];
    let frame: Frame | undefined;
    while (i + 1 < lines.length && /^[\t ]+\S/.test(lines[i + 1]!)) {
      const text = lines[++i]!.trim();
      explained.push(i);
      const at = FRAME.exec(text);
      if (at) frame ??= repoFrame(at[1]!, at[2]!);
      else if (!text.startsWith('at ')) message.push(text);
    }
    const found = detail(messageOf(message), frame);
    if (found) details.push([id, found]);
  }
  return { tests: [...tests], explained, details };
}

/**
 * The block Karma's preloaded reporter writes when a run ends (src/test-runs/karma-hooks.ts), a
 * line per test named as Karma's own reporters name it (`✓ math sub subtracts`): passing tests too.
 */
export const parseKarmaNames = (lines: string[]): ParserResult => parseNamesBlock(lines, KARMA_NAMES_HEADER);
