import { MAX_FILE_BYTES, repoFiles } from '../../locator/files.js';
import { fileSkeleton, sliceLines } from '../../locator/skeleton.js';
import { tokenize } from '../../locator/tokenize.js';
import { shownAsLink } from '../../workspace/confined-fs.js';
import type { ValidatorOutput } from '../../step-contract/index.js';
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

/** Windows of lines that share the most words with the request, best first, not overlapping. */
export function relevantSpans(source: string, request: string, maxSpans = MAX_SPANS): { start: number; end: number }[] {
  const want = new Set(tokenize(request).filter((t) => t.length >= 3));
  const lines = source.split('\n');
  const hits = lines.map((line) => {
    let n = 0;
    for (const t of new Set(tokenize(line))) if (want.has(t)) n++;
    return n;
  });
  const spans: { start: number; end: number; score: number }[] = [];
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
    let score = 0;
    for (let j = start; j <= end; j++) {
      score += hits[j]!;
      taken[j] = 1;
    }
    spans.push({ start: start + 1, end: end + 1, score });
  }
  return spans.sort((a, b) => a.start - b.start).map(({ start, end }) => ({ start, end }));
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
  const { skeleton } = await fileSkeleton(path, source);
  const spans = relevantSpans(source, request).map(
    (s) => `lines ${s.start}-${s.end}:\n${sliceLines(source, s.start, s.end)}`,
  );
  let text = `outline (bodies elided):\n${skeleton}\n\n${spans.join('\n\n')}`;
  if (text.length > maxChars) text = `${text.slice(0, maxChars)}\n… (cut)`;
  return { path, lines: lineCount, whole: false, text };
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
