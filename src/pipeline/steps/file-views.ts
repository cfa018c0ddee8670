import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileSkeleton, sliceLines } from '../../locator/skeleton.js';
import { tokenize } from '../../locator/tokenize.js';
import { numbered } from './prompt-parts.js';

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
  const order = hits.map((h, i) => [h, i] as const).filter(([h]) => h > 0).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
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

/** Reads a file of the checkout for a prompt: numbered lines, a skeleton for large files. */
export async function viewFile(dir: string, path: string, request: string, maxChars: number): Promise<FileView | undefined> {
  let source: string;
  try {
    source = await readFile(join(dir, path), 'utf8');
  } catch {
    return undefined;
  }
  const lineCount = source.split('\n').length;
  if (lineCount <= WHOLE_LINES && source.length <= maxChars) {
    return { path, lines: lineCount, whole: true, text: numbered(source) };
  }
  const { skeleton } = await fileSkeleton(path, source);
  const spans = relevantSpans(source, request).map((s) => `lines ${s.start}-${s.end}:\n${sliceLines(source, s.start, s.end)}`);
  let text = `outline (bodies elided):\n${skeleton}\n\n${spans.join('\n\n')}`;
  if (text.length > maxChars) text = `${text.slice(0, maxChars)}\n… (cut)`;
  return { path, lines: lineCount, whole: false, text };
}
