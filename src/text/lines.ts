/**
 * The longest head of `text` made of whole lines that fits in `max` characters; `cut` says whether
 * lines were left out. A prompt quoting code never ends mid-line: a model copies lines back.
 */
export function headLines(text: string, max: number): { text: string; cut: boolean; lines: number } {
  const lines = text.split('\n');
  if (text.length <= max) return { text, cut: false, lines: lines.length };
  let used = 0;
  let n = 0;
  for (const line of lines) {
    const cost = line.length + (n > 0 ? 1 : 0);
    if (used + cost > max) break;
    used += cost;
    n++;
  }
  return { text: lines.slice(0, n).join('\n'), cut: true, lines: n };
}

/** Lines start..end of a file (1-based, inclusive). */
export interface LineSpan {
  start: number;
  end: number;
}

/** Spans in file order, those that overlap or touch merged into one. */
export function mergeSpans(spans: readonly LineSpan[]): LineSpan[] {
  const out: LineSpan[] = [];
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    const last = out[out.length - 1];
    if (last && s.start <= last.end + 1) last.end = Math.max(last.end, s.end);
    else out.push({ ...s });
  }
  return out;
}
