import type { ParserResult, TestStatus } from './parser-types.js';

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
  return { tests, explained, running };
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
  return { tests, explained };
}
