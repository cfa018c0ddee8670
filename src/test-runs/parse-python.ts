import { detail, messageOf, repoFrame } from './failure-detail.js';
import type { FailureDetail, Frame, ParserResult, TestStatus } from './parser-types.js';

const PYTEST_STATUS: Record<string, TestStatus> = {
  PASSED: 'passed',
  XPASS: 'passed',
  FAILED: 'failed',
  ERROR: 'failed',
  SKIPPED: 'skipped',
  XFAIL: 'skipped',
};

/**
 * pytest with -v and -rA: `nodeid PASSED [ 50%]` as tests finish, then the short summary
 * (`FAILED nodeid - message`, `ERROR path` for a module that did not import). The
 * FAILURES and ERRORS sections are the failing tests' details. With -v pytest prints a
 * node id before running it, so a bare node id at the end is the test that hung.
 */
export function parsePytest(lines: string[]): ParserResult {
  const tests: [string, TestStatus][] = [];
  const explained: number[] = [];
  let section: string | undefined;
  let running: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const header = /^={3,} (.+?) ={3,}$/.exec(line);
    if (header) section = header[1];
    const inDetails = section === 'FAILURES' || section === 'ERRORS';
    const verbose = /^(\S+?\.py::.+?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b/.exec(line);
    const summary = /^(PASSED|FAILED|ERROR|XFAIL|XPASS) (\S.*?)(?: - .*)?$/.exec(line);
    if (verbose) {
      tests.push([verbose[1]!, PYTEST_STATUS[verbose[2]!]!]);
      explained.push(i);
      running = undefined;
    } else if (summary && (section === 'short test summary info' || summary[2]!.includes('.py'))) {
      tests.push([summary[2]!.trim(), PYTEST_STATUS[summary[1]!]!]);
      explained.push(i);
    } else if (inDetails || /^!{3,} .* !{3,}$/.test(line)) {
      explained.push(i);
    } else {
      // faulthandler's dump of a hanging test starts on the node id's own line.
      const started = /^(\S+?\.py::\S+?)(?: |$)/.exec(line);
      if (started) running = started[1];
    }
  }
  return { tests, explained, running, details: pytestDetails(lines, tests) };
}

/** A pytest frame line: `path.py:12: AssertionError` (long tracebacks) or `path.py:12: in test_x` (short). */
const PYTEST_FRAME = /^([^\s:]+\.\w+):(\d+):(?: |$)/;

/**
 * The FAILURES and ERRORS sections: a `____ name ____` header per test, `E ` lines for the
 * assertion, frame lines with the innermost last. The header names the test without its
 * file (`test_x`, `TestC.test_x`, `ERROR collecting path`), so it is matched to a failing id.
 */
function pytestDetails(lines: string[], tests: [string, TestStatus][]): [string, FailureDetail][] {
  const failing = tests.filter(([, s]) => s === 'failed').map(([id]) => id);
  const summary = new Map<string, string>();
  for (const line of lines) {
    const m = /^(?:FAILED|ERROR) (\S+) - (.*)$/.exec(line);
    if (m) summary.set(m[1]!, m[2]!);
  }
  const blocks: { name: string; message: string[]; frame?: Frame }[] = [];
  let section: string | undefined;
  for (const line of lines) {
    const header = /^={3,} (.+?) ={3,}$/.exec(line);
    if (header) section = header[1];
    if (section !== 'FAILURES' && section !== 'ERRORS') continue;
    const name = /^_{3,} (.+?) _{3,}$/.exec(line);
    if (name) blocks.push({ name: name[1]!.replace(/^ERROR (?:collecting|at \w+ of) /, ''), message: [] });
    const block = blocks.at(-1);
    if (!block) continue;
    const e = /^E {1,}(.*)$/.exec(line);
    if (e) block.message.push(e[1]!);
    const frame = PYTEST_FRAME.exec(line);
    if (frame) block.frame = repoFrame(frame[1]!, frame[2]!) ?? block.frame;
  }
  const out: [string, FailureDetail][] = [];
  for (const id of failing) {
    const short = id.includes('::') ? id.split('::').slice(1).join('.') : id;
    const block = blocks.find((b) => b.name === short || b.name === id);
    const found = detail(messageOf(block?.message.length ? block.message : [summary.get(id) ?? '']), block?.frame);
    if (found) out.push([id, found]);
  }
  return out;
}

const UNITTEST_RESULT = /\.\.\. (ok|FAIL|ERROR|skipped\b.*|expected failure|unexpected success)$/;

const unittestStatus = (word: string): TestStatus =>
  word === 'ok' || word === 'unexpected success'
    ? 'passed'
    : word === 'FAIL' || word === 'ERROR'
      ? 'failed'
      : 'skipped';

/** `test_x (pkg.mod.Class.test_x)` names the class alone before Python 3.11; ids always end with the method. */
const unittestId = (method: string, where: string) => (where.endsWith(`.${method}`) ? where : `${where}.${method}`);

/**
 * unittest -v: `test_name (module.Class.test_name) ... ok` (the result may follow a
 * docstring line), then `FAIL: ...` / `ERROR: ...` blocks with tracebacks, up to `Ran N tests`.
 */
export function parseUnittest(lines: string[]): ParserResult {
  const tests: [string, TestStatus][] = [];
  const explained: number[] = [];
  let inBlock = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const block = /^(FAIL|ERROR): (\w+) \(([\w.]+)\)/.exec(line);
    if (block) {
      tests.push([unittestId(block[2]!, block[3]!), 'failed']);
      inBlock = true;
      if (i > 0 && /^={20,}$/.test(lines[i - 1]!)) explained.push(i - 1);
    } else if (/^Ran \d+ tests? in /.test(line) || (inBlock && /^={20,}$/.test(line))) {
      inBlock = false;
    }
    if (inBlock || /^(FAILED|OK) \(/.test(line) || /^FAILED$/.test(line)) {
      explained.push(i);
      continue;
    }
    const start = /^(\w+) \(([\w.]+)\)(.*)$/.exec(line);
    if (!start) continue;
    let result = UNITTEST_RESULT.exec(start[3]!);
    let last = i;
    if (!result && start[3]!.trim() === '' && lines[i + 1] !== undefined) {
      result = UNITTEST_RESULT.exec(lines[i + 1]!);
      if (result) last = i + 1;
    }
    if (!result) continue;
    tests.push([
      unittestId(start[1]!, start[2]!),
      unittestStatus(result[1]!.startsWith('skipped') ? 'skipped' : result[1]!),
    ]);
    for (let j = i; j <= last; j++) explained.push(j);
    i = last;
  }
  return { tests, explained, details: unittestDetails(lines) };
}

/**
 * A `FAIL: test (id)` block: a traceback, innermost frame last (`File "path", line N, in f`),
 * then the exception's lines at the margin up to a blank line or the next rule.
 */
function unittestDetails(lines: string[]): [string, FailureDetail][] {
  const out: [string, FailureDetail][] = [];
  for (let i = 0; i < lines.length; i++) {
    const block = /^(FAIL|ERROR): (\w+) \(([\w.]+)\)/.exec(lines[i]!);
    if (!block) continue;
    let frame: Frame | undefined;
    let message: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^(={20,}|Ran \d+ tests? in )/.test(lines[j]!); j++) {
      const line = lines[j]!;
      const at = /^\s*File "([^"]+)", line (\d+)/.exec(line);
      if (at) {
        frame = repoFrame(at[1]!, at[2]!) ?? frame;
        message = [];
      } else if (/^\S/.test(line) && !/^(-{20,}|Traceback \(most recent)/.test(line)) message.push(line);
      else if (line.trim() === '' && message.length > 0) message.push('');
    }
    const found = detail(messageOf(message), frame);
    if (found) out.push([unittestId(block[2]!, block[3]!), found]);
    i = j - 1;
  }
  return out;
}
