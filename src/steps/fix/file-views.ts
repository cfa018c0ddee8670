import { MAX_FILE_BYTES, repoFiles } from '../../locator/files.js';
import { type SkeletonSymbol, fileSkeleton, sliceLines } from '../../locator/skeleton.js';
import { type LineSpan, headLines, mergeSpans } from '../../text/lines.js';
import { tokenize } from '../../locator/tokenize.js';
import { shownAsLink } from '../../checkout/confined-fs.js';
import type { Insight, ValidatorOutput } from '../../step-contract/index.js';
import { numbered } from '../prompt-parts.js';

/** A file as a model is shown it: whole when it is small, else its outline and the spans that matter. */
export interface FileView {
  path: string;
  lines: number;
  whole: boolean;
  text: string;
}

const WHOLE_LINES = 400;
const SPAN_CONTEXT = 12;
const MAX_SPANS = 4;

type Span = { start: number; end: number; peak: number };

/** Windows of lines that share the most words with the request, best first, not overlapping. */
export function relevantSpans(source: string, request: string, maxSpans = MAX_SPANS): { start: number; end: number }[] {
  return matchingWindows(source, request, maxSpans).map(({ start, end }) => ({ start, end }));
}

/** relevantSpans with each window's best-matching line (`peak`), in file order. */
function matchingWindows(source: string, request: string, maxSpans: number): Span[] {
  const want = new Set(tokenize(request).filter((t) => t.length >= 3));
  const lines = source.split('\n');
  const hits = lines.map((line) => {
    let n = 0;
    for (const t of new Set(tokenize(line))) if (want.has(t)) n++;
    return n;
  });
  const spans: Span[] = [];
  const taken = new Uint8Array(lines.length);
  const order = hits
    .map((h, i) => [h, i] as const)
    .filter(([h]) => h > 0)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [, i] of order) {
    if (spans.length >= maxSpans) break;
    if (taken[i]) continue;
    const start = Math.max(0, i - SPAN_CONTEXT);
    const end = Math.min(lines.length - 1, i + SPAN_CONTEXT);
    for (let j = start; j <= end; j++) taken[j] = 1;
    spans.push({ start: start + 1, end: end + 1, peak: i + 1 });
  }
  return spans.sort((a, b) => a.start - b.start);
}

/**
 * A file of the checkout as a prompt shows it, read through the confined file module:
 * `symlink -> target` for a link out of the checkout (never its target's content), nothing
 * for what is not a regular file.
 */
export function readForPrompt(dir: string, path: string): { source: string } | { link: string } | undefined {
  const got = repoFiles(dir).read(path, { maxBytes: MAX_FILE_BYTES });
  if (got.ok) return { source: got.bytes.toString('utf8') };
  const link = shownAsLink(got.info);
  return link ? { link } : undefined;
}

/** The most of a partly shown file's share its outline may take: the matching code comes first. */
const OUTLINE_SHARE = 0.4;
/** A span is widened to the definition holding it when that definition is at most this many lines. */
const SNAP_MAX_LINES = 120;

/**
 * Each window replaced by the smallest definition that holds its best-matching line, when that one
 * is not huge: the inspector reads whole functions, not 25 lines cut across two.
 */
export function snapSpans(spans: Span[], symbols: SkeletonSymbol[]): LineSpan[] {
  const snapped = spans.map(({ start, end, peak }) => {
    const holding = symbols
      .filter((d) => d.startLine <= peak && d.endLine >= peak && d.endLine - d.startLine < SNAP_MAX_LINES)
      .sort((a, b) => a.endLine - a.startLine - (b.endLine - b.startLine))[0];
    return holding ? { start: holding.startLine, end: holding.endLine } : { start, end };
  });
  return mergeSpans(snapped);
}

/** Reads a file of the checkout for a prompt: numbered lines, a skeleton for large files. */
export async function viewFile(
  dir: string,
  path: string,
  request: string,
  maxChars: number,
): Promise<FileView | undefined> {
  const read = readForPrompt(dir, path);
  if (!read) return undefined;
  if ('link' in read) return { path, lines: 0, whole: true, text: read.link };
  const { source } = read;
  const lineCount = source.split('\n').length;
  if (lineCount <= WHOLE_LINES && source.length <= maxChars) {
    return { path, lines: lineCount, whole: true, text: numbered(source) };
  }
  const { skeleton, symbols } = await fileSkeleton(path, source);
  // The matching code first, the outline with what is left: an outline alone must not fill the share.
  const label = 'outline (bodies elided):\n';
  const outlineRoom = Math.min(label.length + skeleton.length + 2, Math.floor(maxChars * OUTLINE_SHARE));
  const spans: string[] = [];
  let room = maxChars - outlineRoom;
  for (const s of snapSpans(matchingWindows(source, request, MAX_SPANS), symbols)) {
    const head = `lines ${s.start}-${s.end}:\n`;
    const cut = headLines(sliceLines(source, s.start, s.end), room - head.length - 2);
    if (cut.lines === 0) break;
    spans.push(`${head}${cut.text}${cut.cut ? '\n… (cut)' : ''}`);
    room -= head.length + cut.text.length + 10;
    if (cut.cut) break;
  }
  const body = spans.join('\n\n');
  const outline = headLines(skeleton, maxChars - body.length - label.length - 12);
  const text = `${label}${outline.text}${outline.cut ? '\n… (cut)' : ''}\n\n${body}`;
  return { path, lines: lineCount, whole: false, text };
}

/** A file's share of the inspector's budget at least this, while the budget lasts. */
const MIN_VIEW = 4_000;

/**
 * The views of the located files within `budget` characters, by rank: each file may take what is
 * left once the later files' minimum is kept back (at most half of `budget` for one file).
 */
export async function viewFiles(
  dir: string,
  paths: readonly string[],
  request: string,
  budget: number,
): Promise<FileView[]> {
  const views: FileView[] = [];
  let remaining = budget;
  const floor = Math.min(MIN_VIEW, Math.floor(budget / Math.max(1, paths.length)));
  for (const [i, path] of paths.entries()) {
    const later = (paths.length - i - 1) * floor;
    const allot = Math.max(floor, Math.min(Math.floor(budget / 2), remaining - later));
    const view = await viewFile(dir, path, request, allot);
    if (!view) continue;
    views.push(view);
    remaining -= view.text.length;
  }
  return views;
}

/** How many files a failed validation may add to the fixer's view. */
const MAX_FAILURE_FILES = 8;

/**
 * The files a failed validation points at: each failing test's file and its innermost frame's
 * file, in that order, deduplicated, bounded. Only regular files of the checkout count: the
 * paths come from test output, so each is read through the confined module (no `..`, no
 * link followed out of the checkout).
 */
export function failureFiles(dir: string, failure: ValidatorOutput | undefined): string[] {
  const paths = new Set<string>();
  for (const d of failure?.failure_details ?? []) {
    for (const p of [d.test_file, d.frame?.path]) {
      if (!p || paths.has(p) || paths.size >= MAX_FAILURE_FILES) continue;
      const read = readForPrompt(dir, p);
      if (read && 'source' in read) paths.add(p);
    }
  }
  return [...paths];
}

/**
 * What a failed validation points at, as insights for the fixer's view: the line each failing test
 * stopped at (its frame, snapped to the definition holding it) and the test itself, by name (the
 * last part of its id: `tests/test_ops.py::test_mul` → `test_mul`), so a long file shows them whole.
 */
export function failureInsights(failure: ValidatorOutput | undefined): Insight[] {
  const byFile = new Map<string, Insight>();
  const add = (file: string, name: string, line: number) => {
    const insight = byFile.get(file) ?? { file, relevance: 'low', symbols: [], notes: '' };
    insight.symbols.push({ name, start_line: line, end_line: line, change: '' });
    byFile.set(file, insight);
  };
  for (const d of failure?.failure_details ?? []) {
    if (d.frame) add(d.frame.path, '', d.frame.line);
    const name = d.test
      .split(/::|[.#\s]/)
      .filter(Boolean)
      .pop()
      ?.replace(/\[.*$/, '');
    if (d.test_file && name) add(d.test_file, name, 0);
  }
  return [...byFile.values()];
}
