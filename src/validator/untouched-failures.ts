// A test file the change edits can hold tests that failed before the change and fail with it in
// lines the change never touched: a snapshot of last year's date, a test that needs the network.
// Those are the file's pre-existing failures, as they would be in any other file, not the change's
// own test failing (docs/validator.md, "Reproduction test").
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDefinitions, titledCalls } from '../locator/treesitter.js';
import { type LineSpan, type Repo, linkOnTheWay, touchedLines } from '../environments/copies.js';
import type { FailureDetail } from '../test-runs/parser-types.js';
import type { ChangeTests } from './reproduction.js';
import { testFileOf } from './test-files.js';

/** A test's place in its file: its name, the names of the groups around it, its lines. */
interface TestPlace {
  name: string;
  groups: string[];
  start: number;
  end: number;
}

const TEST_CALLS = new Set(['it', 'test', 'specify', 'fit', 'xit', 'xtest']);
const GROUP_CALLS = new Set(['describe', 'context', 'suite', 'fdescribe', 'xdescribe']);
/** Test files beyond this are not read: a test's place is not worth a huge file. */
const MAX_BYTES = 2_000_000;

/**
 * Of `ids` (tests of the change's test files that failed on the base commit and fail with the
 * change), those the change did not touch: each is found by its name as exactly one test of its
 * file, none of the file's touched lines falls in it, and every touched line of the file falls in
 * some test. Anything less certain counts against the change, as before: a new file (all its
 * tests are the change's), a changed helper, fixture or snapshot (any test may fail by it), a
 * touched line outside every test (a hook, an import, a shared constant), a name found twice or
 * not at all (a parametrised title), a language without a parser here.
 */
export async function untouchedFailures(
  checkout: Repo,
  commit: string,
  tests: ChangeTests,
  ids: readonly string[],
  details: Map<string, FailureDetail>,
): Promise<string[]> {
  if (ids.length === 0 || tests.copied.length !== tests.tests.length) return [];
  const byFile = new Map<string, string[]>();
  for (const id of ids) {
    const file = testFileOf(id, tests.tests, details.get(id));
    if (file !== undefined && id !== file) byFile.set(file, [...(byFile.get(file) ?? []), id]);
  }
  const untouched: string[] = [];
  for (const [file, fileIds] of byFile) {
    const touched = await touchedLines(checkout, commit, file);
    if (touched === 'new') continue;
    const source = await readTestFile(checkout.dir, file);
    if (source === undefined) continue;
    const places = await testPlaces(file, source);
    if (!places) continue;
    const lines = source.split('\n');
    const spans = touched.flatMap((span) => withoutBlankLines(span, lines));
    if (!spans.every((span) => places.some((p) => within(span, p)))) continue;
    for (const id of fileIds) {
      const path = namePath(id, file);
      const found = places.filter((p) => p.name === path.name && endsWith(p.groups, path.groups));
      if (found.length === 1 && !spans.some((span) => overlaps(span, found[0]!))) untouched.push(id);
    }
  }
  return untouched;
}

const within = (span: LineSpan, p: TestPlace) => span.start >= p.start && span.end <= p.end;
const overlaps = (span: LineSpan, p: TestPlace) => span.start <= p.end && span.end >= p.start;
const endsWith = (chain: string[], tail: string[]) =>
  tail.length <= chain.length && tail.every((t, i) => chain[chain.length - tail.length + i] === t);

/**
 * A test id as a test's name and its groups: pytest's `path::Class::test[param]`, vitest's
 * `path > group > test`, jest's `group › test`, node's `group > test`.
 */
export function namePath(id: string, file: string): { name: string; groups: string[] } {
  let rest = id;
  for (const sep of ['::', ' > ', ' › '])
    if (rest.startsWith(`${file}${sep}`)) rest = rest.slice(file.length + sep.length);
  const python = file.endsWith('.py');
  const parts = python ? rest.split('::') : rest.split(/ › | > /);
  const last = parts.pop() ?? '';
  // A parametrised pytest test is one function: its id's `[…]` names the case.
  return { name: python ? last.replace(/\[.*\]$/s, '') : last, groups: parts };
}

/**
 * The added lines of a span that hold something: blank lines added between tests touch none.
 * A gap (lines only removed) is kept whole: what was removed may have been anything.
 */
function withoutBlankLines(span: LineSpan, lines: readonly string[]): LineSpan[] {
  if (span.gap) return [span];
  const out: LineSpan[] = [];
  for (let line = span.start; line <= span.end; line++) {
    if ((lines[line - 1] ?? '').trim() === '') continue;
    const last = out[out.length - 1];
    if (last && last.end === line - 1) last.end = line;
    else out.push({ start: line, end: line });
  }
  return out;
}

/** The test file's text, or undefined when it is a link (or under one) or too big to read. */
async function readTestFile(dir: string, file: string): Promise<string | undefined> {
  // The change's content is hostile: never follow a link, on the way or at the end.
  if (await linkOnTheWay(dir, file)) return undefined;
  const stat = await lstat(join(dir, file)).catch(() => undefined);
  if (!stat?.isFile() || stat.size > MAX_BYTES) return undefined;
  return readFile(join(dir, file), 'utf8');
}

/** The tests of a file and their lines, or undefined when they cannot be told (no parser here). */
async function testPlaces(file: string, source: string): Promise<TestPlace[] | undefined> {
  if (file.endsWith('.py')) {
    const defs = await parseDefinitions(file, source);
    return defs
      ?.filter((d) => (d.kind === 'function' || d.kind === 'method') && d.name.startsWith('test'))
      .map((d) => ({ name: d.name, groups: d.container ? [d.container] : [], start: d.startLine, end: d.endLine }));
  }
  const calls = await titledCalls(file, source);
  if (!calls) return undefined;
  const groups = calls.filter((c) => GROUP_CALLS.has(c.callee));
  return calls
    .filter((c) => TEST_CALLS.has(c.callee))
    .map((c) => ({
      name: c.title,
      // Outermost first: the calls come in the file's order, a group before what it holds.
      groups: groups.filter((g) => g.startLine <= c.startLine && g.endLine >= c.endLine).map((g) => g.title),
      start: c.startLine,
      end: c.endLine,
    }));
}
