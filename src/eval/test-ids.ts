import { parseOutput } from '../test-runs/parse.js';
import type { TestStatus } from '../test-runs/parser-types.js';

/**
 * The judge's reading of a JavaScript run: which tests the runner reported, under which file,
 * and how a data set's id names them (docs/eval.md, "Test ids"). The validator's parsers name a
 * test by its groups and its own name (`describe › test`); jest says the file once, in the
 * `PASS path` / `FAIL path` header above its tests, and vitest puts it first in the name
 * (`path > describe > test`), so the file is taken from there. Mocha and node:test name no file.
 */

/** A test as a run reported it. */
export interface ReportedTest {
  /** The test file, when the runner named it. */
  file?: string;
  /** The groups above the test, outermost first, then its own name. */
  names: string[];
  status: TestStatus;
}

export interface ReportedRun {
  tests: ReportedTest[];
  /** Whole-file verdicts (jest's `PASS`/`FAIL` headers), each time a file was reported. */
  files: { file: string; passed: boolean }[];
}

/** `PASS test/a.test.js (5.1 s)`: not vitest's `FAIL  test/a.test.js > suite > test`. */
const JEST_HEADER = /^\s*(PASS|FAIL)\s+(\S+)(?:\s+\([^)]*\))?\s*$/;
/** A path a test runner reports: a file with a JavaScript or TypeScript extension. */
const TEST_FILE = /^[^\s:]+\.[cm]?[jt]sx?$/;

/**
 * Every test the output reports. The output is cut at jest's file headers, each part read by
 * the validator's parsers (so the judge reads what the validator reads), and the part's tests
 * carry the header's file. A chained script that runs a file twice reports it twice.
 */
export function reportedTests(output: string): ReportedRun {
  const lines = output.split('\n');
  const tests: ReportedTest[] = [];
  const files: ReportedRun['files'] = [];
  let start = 0;
  let file: string | undefined;
  const flush = (end: number) => {
    if (end <= start) return;
    for (const [id, status] of parseOutput(lines.slice(start, end).join('\n')).tests)
      tests.push(named(id, status, file));
  };
  lines.forEach((line, i) => {
    const header = JEST_HEADER.exec(line);
    if (!header) return;
    flush(i);
    start = i + 1;
    file = header[2]!;
    files.push({ file, passed: header[1] === 'PASS' });
  });
  flush(lines.length);
  return { tests, files };
}

function named(id: string, status: TestStatus, file: string | undefined): ReportedTest {
  const names = id.split(id.includes(' › ') ? ' › ' : ' > ');
  // jest's "Test suite failed to run" is named after the header above it, outside this part.
  if (file !== undefined) return { file, names: names[0] === file || names[0] === '' ? names.slice(1) : names, status };
  // vitest: `path > describe > test`
  if (names.length > 1 && TEST_FILE.test(names[0]!)) return { file: names[0]!, names: names.slice(1), status };
  return { names, status };
}

/** A data set's id of a JavaScript test: `file`, `file:title`, or a title alone. */
export interface JsTestId {
  file?: string;
  title?: string;
}

export function parseJsId(id: string): JsTestId {
  const m = /^([^\s:]+\.[cm]?[jt]sx?)(?::(.+))?$/s.exec(id);
  if (!m) return { title: id };
  return m[2] === undefined ? { file: m[1]! } : { file: m[1]!, title: m[2] };
}

/** Paths the runner printed relative to its own root (a package of a workspace) still match. */
const sameFile = (reported: string, listed: string) =>
  reported === listed || listed.endsWith(`/${reported}`) || reported.endsWith(`/${listed}`);

/**
 * Whether an id passed, by the rule docs/eval.md gives:
 * - `file`: the file was reported, and every report of it passed (no failing header, no failed
 *   test in it, at least one passing header or test);
 * - `file:title` or `title`: the tests named so — by their whole name (the groups and their own
 *   joined by a space, as jest's and mocha's full titles are, or by ` › ` / ` > `), by their own
 *   group and name joined by a dot (`parent.title`), else by their own name alone, since data sets
 *   often drop the describe chain — were reported, and every one
 *   of them passed (a title reported twice, by two groups or two passes of a chained script,
 *   must pass each time);
 * - an id the run never reports did not pass.
 */
export function jsIdPassed(run: ReportedRun, id: string): boolean {
  const { file, title } = parseJsId(id);
  const inFile =
    file === undefined ? run.tests : run.tests.filter((t) => t.file !== undefined && sameFile(t.file, file));
  if (title === undefined) {
    const headers = run.files.filter((f) => sameFile(f.file, file!));
    if (headers.some((h) => !h.passed) || inFile.some((t) => t.status === 'failed')) return false;
    return headers.length > 0 || inFile.some((t) => t.status === 'passed');
  }
  // As data sets write a title: mocha's failure list ends it with ':' (`1) suite title:`), and a
  // title holding newlines (a rule tester's code) is on one line with its spaces collapsed.
  const loose = (text: string) => text.replace(/\s+/g, ' ').trim();
  const wanted = loose(loose(title).replace(/:$/, ''));
  const same = (names: string[]) =>
    [' ', ' › ', ' > '].some((sep) => {
      const joined = names.join(sep);
      return joined === title || loose(joined) === wanted;
    }) ||
    // `parent.title`: the test's own group and name joined by a dot (SWE-bench Multimodal's highlight.js ids)
    (names.length >= 2 && names.slice(-2).join('.') === title);
  const whole = inFile.filter((t) => same(t.names));
  const own = whole.length > 0 ? whole : inFile.filter((t) => same(t.names.slice(-1)));
  const matched = own.length > 0 ? own : cutShort(inFile, wanted);
  return matched.length > 0 && matched.every((t) => t.status === 'passed');
}

/** Below this a title cut short could be the start of an unrelated test's name. */
const CUT_TITLE_MIN = 40;

/**
 * A title that a line-based harness cut at a line break: a rule tester's title is the code it
 * tests, several lines of it, and a data set built from one line per test keeps only the first
 * (eslint's `start() .then(() => … /* catch seems to be needed here *\/`, the call after it on the
 * next line). Only where nothing matched whole, only for a long title, and only at a word's end:
 * the tests whose whole name (spaces collapsed) goes on from it.
 */
function cutShort(tests: ReportedTest[], wanted: string): ReportedTest[] {
  if (wanted.length < CUT_TITLE_MIN) return [];
  return tests.filter((t) =>
    [' ', ' › ', ' > '].some((sep) => t.names.join(sep).replace(/\s+/g, ' ').startsWith(`${wanted} `)),
  );
}
