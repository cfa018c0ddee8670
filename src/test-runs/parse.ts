import { parseCargo, parseGoJson, parseGoVerbose, parseGradle, parseMaven } from './parse-compiled.js';
import { parseJest, parseMochaFailures, parseMochaNames, parseTap, parseTree, parseVitestSummary } from './parse-js.js';
import { parseKarma, parseKarmaNames } from './parse-karma.js';
import { parsePytest, parseUnittest } from './parse-python.js';
import type { FailureDetail, Parser, TestStatus } from './parser-types.js';

/** Every parser runs on every output: a `npm test` or `make test` may wrap any runner. */
const PARSERS: Parser[] = [
  parseTap,
  parseTree,
  parseJest,
  parseVitestSummary,
  parseMochaFailures,
  parseMochaNames,
  parseKarma,
  parseKarmaNames,
  parsePytest,
  parseUnittest,
  parseGoJson,
  parseGoVerbose,
  parseCargo,
  parseMaven,
  parseGradle,
];

/**
 * Lines that report a failure whatever printed them. When no runner's report accounts for
 * one, it is a failure of its own: a test that calls console.assert(false) passes and the
 * run exits 0, but "Assertion failed" is on the output.
 */
const FAILURE_MARKERS: RegExp[] = [
  /Assertion failed/,
  /\bAssertionError\b/,
  /\bFAILED\b/,
  /\bpanicked at\b/,
  /^\s*(?:#\s*)?[✗×✖✕]\s/,
  /^\s*not ok\b/,
];

export interface ParsedRun {
  /** Every test the output reports, by id. A test reported both ways counts as failed. */
  tests: Map<string, TestStatus>;
  /** Marker lines no report accounts for, normalized so the same line matches across runs. */
  markers: string[];
  running?: string;
  /** Failing tests' messages and frames, by id, as far as a parser read them. */
  details: Map<string, FailureDetail>;
}

export function parseOutput(output: string): ParsedRun {
  const lines = output.split('\n');
  const tests = new Map<string, TestStatus>();
  const explained = new Set<number>();
  let running: string | undefined;
  const details = new Map<string, FailureDetail>();
  let summary: string[] = [];
  for (const parser of PARSERS) {
    const result = parser(lines);
    if (parser === parseVitestSummary) summary = result.tests.map(([id]) => id);
    for (const [id, d] of result.details ?? []) details.set(id, fuller(details.get(id), d));
    for (const [id, status] of result.tests) {
      const before = tests.get(id);
      if (before === 'failed') continue;
      if (before === 'passed' && status === 'skipped') continue;
      tests.set(id, status);
    }
    for (const i of result.explained) explained.add(i);
    running ??= result.running;
  }
  oneIdPerVitestFailure(tests, details, summary);
  const markers = new Set<string>();
  lines.forEach((line, i) => {
    if (explained.has(i) || !FAILURE_MARKERS.some((m) => m.test(line))) return;
    markers.add(markerKey(line));
  });
  return { tests, markers: [...markers], running, details };
}

/**
 * vitest's default reporter (what a `test` script that chains vitest with other commands gets)
 * prints a file's tests without their suites, `× should concat` under `❯ test/a.test.ts`, so
 * the tree reads `test/a.test.ts > should concat`, while its summary names the same failure in
 * full, `test/a.test.ts > defu > should concat`: one failure, two ids. A failed `file > title`
 * the summary does not name is dropped for the one summary id of that file ending in that
 * title; with none, or several (the same title in two suites), it stays.
 */
function oneIdPerVitestFailure(tests: Map<string, TestStatus>, details: Map<string, FailureDetail>, summary: string[]) {
  if (summary.length === 0) return;
  const named = new Set(summary);
  for (const [id, status] of [...tests]) {
    if (status !== 'failed' || named.has(id)) continue;
    const parts = id.split(' > ');
    if (parts.length !== 2) continue;
    const [file, title] = parts as [string, string];
    const full = summary.filter((s) => s.startsWith(`${file} > `) && s.endsWith(` > ${title}`) && s !== id);
    if (full.length !== 1) continue;
    tests.delete(id);
    const detail = details.get(id);
    if (detail) {
      details.delete(id);
      details.set(full[0]!, fuller(details.get(full[0]!), detail));
    }
  }
}

const weight = (d: FailureDetail) => (d.frame ? 2 : 0) + (d.message !== undefined ? 1 : 0);

/**
 * Two parsers may read the same failure (vitest's tree and its summary): the report with a
 * frame wins, and what it lacks the other fills in.
 */
function fuller(before: FailureDetail | undefined, next: FailureDetail): FailureDetail {
  if (!before) return next;
  return weight(next) > weight(before) ? { ...before, ...next } : { ...next, ...before };
}

/**
 * A marker line as an id: without TAP's comment sign, and with what changes from run to run
 * (durations, addresses, timestamps) blanked, so the same failure matches across runs.
 */
export function markerKey(line: string): string {
  const text = line
    .replace(/^\s*#\s?/, '')
    .trim()
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z?/g, '<time>')
    .replace(/0x[0-9a-f]{6,}/gi, '0x…')
    .replace(/\b\d+(\.\d+)?\s?(ms|s)\b/g, '<duration>')
    .replace(/\s+/g, ' ');
  return `(output) ${text.length > 160 ? `${text.slice(0, 157)}...` : text}`;
}
