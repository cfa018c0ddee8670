import { detail, messageOf, repoFrame } from './failure-detail.js';
import type { FailureDetail, Frame, ParserResult, TestStatus } from './parser-types.js';
import { MOCHA_NAMES_HEADER } from './mocha-names.js';
import { parseNamesBlock } from './names-block.js';

const indentOf = (line: string) => line.length - line.trimStart().length;

/**
 * TAP as node --test writes it (also tape, ava --tap, mocha --reporter tap): `ok N - name`,
 * `not ok N - name # SKIP`, subtests indented under `# Subtest: name`, a YAML block after
 * each result. Ids join nested names with " > ". Suites (results with subtests) are not
 * tests of their own unless they failed with no failing subtest (a failing hook).
 */
export function parseTap(lines: string[]): ParserResult {
  const tests: [string, TestStatus][] = [];
  const explained: number[] = [];
  const open = new Map<number, string>();
  const childFailed = new Map<number, boolean>();
  const hadChildren = new Map<number, boolean>();
  const details: [string, FailureDetail][] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const subtest = /^(\s*)# Subtest: (.*)$/.exec(line);
    if (subtest) {
      open.set(subtest[1]!.length, unescapeTap(subtest[2]!));
      explained.push(i);
      continue;
    }
    const result = /^(\s*)(not ok|ok)\s+\d+(?:\s+-)?(?:\s+(.*?))?(?:\s+#\s*(SKIP|TODO)\b.*|\s+# time=.*)?\s*$/.exec(
      line,
    );
    if (!result) continue;
    const indent = result[1]!.length;
    const name = unescapeTap(result[3] || open.get(indent) || '');
    const failed = result[2] === 'not ok';
    const directive = result[4];
    const status: TestStatus = directive ? 'skipped' : failed ? 'failed' : 'passed';
    const parents = [...open.entries()]
      .filter(([level]) => level < indent)
      .sort((a, b) => a[0] - b[0])
      .map(([, n]) => n);
    const isSuite = hadChildren.get(indent) === true;
    const anyChildFailed = childFailed.get(indent) === true;
    const id = [...parents, name].join(' > ');
    if (!isSuite || (status === 'failed' && !anyChildFailed)) tests.push([id, status]);
    explained.push(i);
    // Tell the enclosing level that it has children, and whether one of them failed.
    for (const level of [...hadChildren.keys()]) {
      if (level < indent) continue;
      hadChildren.delete(level);
      childFailed.delete(level);
    }
    const parentLevel = Math.max(-1, ...[...open.keys()].filter((l) => l < indent));
    if (parentLevel >= 0) {
      hadChildren.set(parentLevel, true);
      if (status === 'failed') childFailed.set(parentLevel, true);
    }
    for (const level of [...open.keys()]) if (level >= indent) open.delete(level);
    // The YAML diagnostics of a result, `---` to `...`, indented under it.
    if (lines[i + 1] !== undefined && /^\s*---\s*$/.test(lines[i + 1]!) && indentOf(lines[i + 1]!) > indent) {
      let j = i + 1;
      for (; j < lines.length; j++) {
        explained.push(j);
        if (j > i + 1 && /^\s*\.\.\.\s*$/.test(lines[j]!) && indentOf(lines[j]!) === indentOf(lines[i + 1]!)) break;
      }
      const found = status === 'failed' ? tapDetail(lines.slice(i + 2, j)) : undefined;
      if (found) details.push([id, found]);
      i = j;
    }
  }
  // Subtests still open when the output ends: the test that was running when the run was cut off.
  const running =
    open.size > 0
      ? [...open.entries()]
          .sort((a, b) => a[0] - b[0])
          .map(([, n]) => n)
          .join(' > ')
      : undefined;
  return { tests, explained, running, details };
}

/**
 * node --test's YAML under a failing result: `error: 'message'` or `error: |-` and an
 * indented block; `stack: |-` with frames innermost first; `location:` where the test is.
 */
function tapDetail(yaml: string[]): FailureDetail | undefined {
  const field = (key: string): string[] => {
    const at = yaml.findIndex((l) => new RegExp(`^\\s*${key}:`).test(l));
    if (at === -1) return [];
    const inline = yaml[at]!.replace(new RegExp(`^\\s*${key}:\\s*`), '');
    if (!/^[|>]-?$/.test(inline)) return [inline.replace(/^'(.*)'$/, '$1').replace(/''/g, "'")];
    const level = indentOf(yaml[at]!);
    const body: string[] = [];
    for (let k = at + 1; k < yaml.length && (yaml[k]!.trim() === '' || indentOf(yaml[k]!) > level); k++)
      body.push(yaml[k]!.trim());
    return body;
  };
  const stack = field('stack').map((l) => `at ${l}`);
  const location = /^((?:file:\/\/)?[^\s():]+):(\d+):\d+$/.exec(field('location')[0] ?? '');
  const where = location ? repoFrame(location[1]!, location[2]!) : undefined;
  // The test's own place names its file: a reproduction test is told from the others by it.
  return detail(messageOf(field('error')), firstRepoFrame(stack) ?? where, where?.path);
}

const unescapeTap = (s: string) => s.replace(/\\([#\\])/g, '$1').trim();

const PASS_MARK = /^[✓✔√]$/;
const FAIL_MARK = /^(?:[✕✖×✗✘]|\d+\))$/;
const SKIP_MARK = /^[○↓﹣]$/;
const TREE_LINE = /^(\s*)([✓✔√✕✖×✗✘○↓﹣]|\d+\))\s+(.+?)\s*$/;
/** vitest's line for a whole file: `✓ test/a.test.ts (3 tests) 5ms`. */
const VITEST_FILE = /^\s*\S+\s+(\S+)\s+\(\d+ tests?\b/;

/**
 * What node itself prints to stderr, between a runner's lines wherever it happens to be written
 * (vitest 1 on node 20.19 prints `(node:15) Warning: Accessing non-existent property …` before each
 * file's tests): never a group's name.
 */
const NODE_WARNING = /^\(node:\d+\) (?:\[\w+\] )?\w*Warning: |^\(Use `node --trace-/;

/** A line that starts a new report and so ends any tree of names above it. */
const BLOCK_START = /^\s*(PASS|FAIL|RUNS)\s|^\s*(✖ failing tests:|Test Suites:|Tests:|ℹ )/;

/**
 * Indented trees of names with a mark per test: jest --verbose, mocha's spec reporter,
 * node's spec reporter, vitest's verbose reporter. A test's id is the names of the
 * groups above it (the nearest less-indented unmarked lines) and its own, joined by " › ".
 */
export function parseTree(lines: string[]): ParserResult {
  const spaced = singleSpaced(lines);
  if (!spaced) return parseTreeLines(lines);
  const parsed = parseTreeLines(spaced.lines);
  return { ...parsed, explained: parsed.explained.map((i) => spaced.at[i]!) };
}

/**
 * A report written double-spaced (an old mocha's spec reporter under some terminals prints a
 * blank line after every line) read as if it were not: a lone blank line between two lines is
 * dropped, a run of them kept as one, so a test's groups are still the lines above it. Undefined
 * when the report is not double-spaced (most of its marked lines followed by one blank line).
 * `at` maps each kept line to its index in `lines`.
 */
function singleSpaced(lines: string[]): { lines: string[]; at: number[] } | undefined {
  const blank = (i: number) => i < lines.length && lines[i]!.trim() === '';
  const marked = lines.flatMap((l, i) => (TREE_LINE.test(l) ? [i] : []));
  const followed = marked.filter((i) => blank(i + 1) && !blank(i + 2) && i + 2 < lines.length).length;
  if (marked.length < 3 || followed < 0.8 * marked.length) return undefined;
  const kept: string[] = [];
  const at: number[] = [];
  lines.forEach((line, i) => {
    if (blank(i) && i > 0 && !blank(i - 1) && !blank(i + 1) && i + 1 < lines.length) return;
    if (blank(i) && i > 0 && blank(i - 1)) return;
    kept.push(line);
    at.push(i);
  });
  return { lines: kept, at };
}

function parseTreeLines(lines: string[]): ParserResult {
  const tests: [string, TestStatus][] = [];
  const explained: number[] = [];
  const details: [string, FailureDetail][] = [];
  // Mocha's failure details (`N failing` to the end) and node's repeated "failing tests"
  // list would read as more tests; they are explained, not parsed.
  const stop = lines.findIndex((l) => /^\s*\d+ failing\s*$/.test(l) || /^\s*✖ failing tests:\s*$/.test(l));
  const end = stop === -1 ? lines.length : stop;
  for (let i = 0; i < end; i++) {
    const m = TREE_LINE.exec(lines[i]!);
    if (!m) continue;
    const [, space, mark, rest] = m;
    const status: TestStatus = PASS_MARK.test(mark!)
      ? 'passed'
      : FAIL_MARK.test(mark!)
        ? 'failed'
        : SKIP_MARK.test(mark!)
          ? 'skipped'
          : 'passed';
    if (/^\d+\)$/.test(mark!) && !/^\s{2,}/.test(lines[i]!)) continue; // "1) " at the margin is prose, not mocha's list
    const name = cleanName(rest!.replace(/^skipped\s+/, '').replace(/\s+#\s*SKIP\b.*$/, ''));
    if (name === '' || VITEST_FILE.test(lines[i]!)) continue;
    const { groups, vitest } = groupsAbove(lines, i, space!.length);
    // vitest names nested tests "describe > test" and its summary "file > describe > test".
    const id = [...groups, name].join(vitest || name.includes(' > ') ? ' > ' : ' › ');
    tests.push([id, status]);
    explained.push(i);
    const found = status === 'failed' ? indentedError(lines, i, end) : undefined;
    if (found) details.push([id, found]);
  }
  if (stop !== -1) for (let i = stop; i < lines.length; i++) explained.push(i);
  return { tests, explained, details };
}

/**
 * The error node's spec reporter (and vitest's `→` line) prints under a failed test, indented
 * deeper than its mark: the message, then the stack, innermost frame first.
 */
function indentedError(lines: string[], at: number, end: number): FailureDetail | undefined {
  const level = indentOf(lines[at]!);
  let j = at + 1;
  while (j < end && (lines[j]!.trim() === '' || indentOf(lines[j]!) > level)) j++;
  const block = lines.slice(at + 1, j).filter((l) => !/^\s*[{}]\s*$|^\s*\w+: .*,$/.test(l));
  return detail(jsMessage(block.map((l) => l.replace(/^\s*→\s*/, ''))), firstRepoFrame(block));
}

/** A test name without the duration runners print after it: "(12 ms)", "(1.2ms)", "12ms". */
const cleanName = (s: string) =>
  s
    .replace(/\s+\(\d+(?:\.\d+)?\s*m?s\)$/, '')
    .replace(/\s+\d+(?:\.\d+)?\s*m?s$/, '')
    .trim();

function groupsAbove(lines: string[], at: number, indent: number): { groups: string[]; vitest: boolean } {
  const groups: string[] = [];
  let vitest = false;
  let need = indent;
  for (let j = at - 1; j >= 0 && need > 0; j--) {
    const line = lines[j]!;
    if (line.trim() === '' || BLOCK_START.test(line)) break;
    const level = indentOf(line);
    if (level >= need || NODE_WARNING.test(line)) continue;
    const file = VITEST_FILE.exec(line);
    if (file) {
      groups.unshift(file[1]!);
      vitest = true;
      break;
    }
    if (TREE_LINE.test(line)) continue;
    groups.unshift(cleanName(line.trim().replace(/^▶\s*/, '')));
    need = level;
  }
  return { groups, vitest };
}

/**
 * jest's failure headers, `● describe › test`, and the details under them up to the next
 * header or summary. "● Test suite failed to run" is named after the file above it.
 */
export function parseJest(lines: string[]): ParserResult {
  const tests: [string, TestStatus][] = [];
  const explained: number[] = [];
  let file = '';
  let inDetails = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const header = /^(PASS|FAIL)\s+(\S+)/.exec(line);
    if (header) {
      file = header[2]!;
      inDetails = false;
      continue;
    }
    if (/^(Test Suites|Tests|Snapshots|Time):\s/.test(line)) {
      inDetails = false;
      explained.push(i);
      continue;
    }
    const bullet = /^\s*● (.+?)\s*$/.exec(line);
    if (bullet) {
      const name = bullet[1]!;
      if (name === 'Console') {
        inDetails = false;
        continue;
      }
      tests.push([name === 'Test suite failed to run' ? `${file} › ${name}` : name, 'failed']);
      inDetails = true;
    }
    if (inDetails) explained.push(i);
  }
  return { tests, explained, details: jestDetails(lines) };
}

/** A stack line, `at f (path:12:5)` or `at path:12:5`, or vitest's `❯ path:12:5` (innermost first). */
const JS_FRAME = /^\s*(?:at\s+(?:.*?\()?|❯\s+(?:.*?\s\(?)?)((?:file:\/\/)?[^\s():]+):(\d+):\d+\)?\s*$/;
/** jest's and vitest's code excerpt under a message: `  4 | expect(...)`, `> 4 | ...`, `    |   ^`. */
const CODE_LINE = /^\s*(?:>\s*)?\d*\s*\|/;

/** The first frame of the stack in the checkout: the innermost of the repository's own code. */
function firstRepoFrame(lines: string[]): Frame | undefined {
  for (const line of lines) {
    const m = JS_FRAME.exec(line);
    const frame = m ? repoFrame(m[1]!, m[2]!) : undefined;
    if (frame) return frame;
  }
  return undefined;
}

/** The message above a JS failure's code excerpt and stack. */
function jsMessage(block: string[]): string | undefined {
  const end = block.findIndex((l) => CODE_LINE.test(l) || JS_FRAME.test(l));
  return messageOf((end === -1 ? block : block.slice(0, end)).map((l) => l.trim()));
}

/** jest's `● name` blocks: the message, the code excerpt, the stack; the file from the `FAIL path` above. */
function jestDetails(lines: string[]): [string, FailureDetail][] {
  const out: [string, FailureDetail][] = [];
  let file = '';
  for (let i = 0; i < lines.length; i++) {
    const header = /^(PASS|FAIL)\s+(\S+)/.exec(lines[i]!);
    if (header) file = header[2]!;
    const bullet = /^\s*● (.+?)\s*$/.exec(lines[i]!);
    if (!bullet || bullet[1] === 'Console') continue;
    let j = i + 1;
    while (j < lines.length && !/^\s*● |^(PASS|FAIL)\s|^(Test Suites|Tests):\s/.test(lines[j]!)) j++;
    const block = lines.slice(i + 1, j);
    const name = bullet[1] === 'Test suite failed to run' ? `${file} › ${bullet[1]}` : bullet[1]!;
    const found = detail(jsMessage(block), firstRepoFrame(block), file || undefined);
    if (found) out.push([name, found]);
    i = j - 1;
  }
  return out;
}

/** vitest's summary of failures: ` FAIL  file > describe > test`, and its "Failed Tests" section. */
export function parseVitestSummary(lines: string[]): ParserResult {
  const tests: [string, TestStatus][] = [];
  const explained: number[] = [];
  let inSection = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/⎯{3,}\s*Failed (Tests|Suites)/.test(line)) inSection = true;
    else if (/^\s*Test Files\s/.test(line)) inSection = false;
    const fail = /^\s*FAIL\s+(\S+ > .+?)\s*$/.exec(line);
    if (fail) tests.push([cleanName(fail[1]!), 'failed']);
    if (inSection || fail) explained.push(i);
  }
  return { tests, explained, details: vitestDetails(lines) };
}

/** vitest's "Failed Tests" section: ` FAIL  file > test`, the error's lines, ` ❯ path:line:col` frames. */
function vitestDetails(lines: string[]): [string, FailureDetail][] {
  const out: [string, FailureDetail][] = [];
  const start = lines.findIndex((l) => /⎯{3,}\s*Failed Tests/.test(l));
  if (start === -1) return out;
  for (let i = start + 1; i < lines.length && !/^\s*Test Files\s/.test(lines[i]!); i++) {
    const fail = /^\s*FAIL\s+(\S+ > .+?)\s*$/.exec(lines[i]!);
    if (!fail) continue;
    let j = i + 1;
    while (j < lines.length && !/^\s*FAIL\s|⎯{3,}|^\s*Test Files\s/.test(lines[j]!)) j++;
    const block = lines.slice(i + 1, j);
    const id = cleanName(fail[1]!);
    const found = detail(jsMessage(block), firstRepoFrame(block), id.split(' > ')[0]);
    if (found) out.push([id, found]);
    i = j - 1;
  }
  return out;
}

/** mocha's spec reporter lists failures as "N) name"; its summary "N passing / N failing" is explained. */
export function parseMochaFailures(lines: string[]): ParserResult {
  const explained: number[] = [];
  lines.forEach((l, i) => {
    if (/^\s*\d+ (passing|failing|pending)\b/.test(l)) explained.push(i);
  });
  return { tests: [], explained };
}

/**
 * The block mocha's preloaded names write when a run ends (src/test-runs/mocha-names.ts), a line
 * per test named as the spec reporter names it (`✓ math › adds two numbers`).
 */
export const parseMochaNames = (lines: string[]): ParserResult => parseNamesBlock(lines, MOCHA_NAMES_HEADER);
