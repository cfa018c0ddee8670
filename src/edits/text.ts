/**
 * A file as lines plus the terminator of each line. Matching works on line text only, so a CRLF
 * file and an LF answer compare equal; writing back keeps every untouched line's terminator, gives
 * new lines the file's dominant one and keeps the final-newline state.
 */
export interface FileText {
  lines: string[];
  eols: string[];
  eol: '\n' | '\r\n';
  finalNewline: boolean;
  bom: boolean;
}

export function splitText(raw: string): FileText {
  const bom = raw.startsWith('\uFEFF');
  const text = bom ? raw.slice(1) : raw;
  const lines: string[] = [];
  const eols: string[] = [];
  let crlf = 0;
  let lf = 0;
  let at = 0;
  const re = /\r\n|\n/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    lines.push(text.slice(at, m.index));
    eols.push(m[0]);
    if (m[0] === '\r\n') crlf++;
    else lf++;
    at = m.index + m[0].length;
  }
  if (at < text.length) {
    lines.push(text.slice(at));
    eols.push('');
  }
  return { lines, eols, eol: crlf > lf ? '\r\n' : '\n', finalNewline: text.endsWith('\n'), bom };
}

export function joinText(f: FileText): string {
  let out = f.bom ? '\uFEFF' : '';
  for (let i = 0; i < f.lines.length; i++) out += f.lines[i]! + f.eols[i]!;
  return out;
}

/** Replaces lines [start, end) and restores the file's final-newline state. */
export function spliceLines(f: FileText, start: number, end: number, replacement: string[]): void {
  f.lines.splice(start, end - start, ...replacement);
  f.eols.splice(start, end - start, ...replacement.map(() => f.eol));
  const last = f.lines.length - 1;
  for (let i = 0; i < last; i++) if (f.eols[i] === '') f.eols[i] = f.eol;
  if (last >= 0) f.eols[last] = f.finalNewline ? f.eols[last] || f.eol : '';
}

/** An edit's SEARCH or REPLACE text as lines: any line endings, one trailing newline ignored. */
export function toLines(s: string): string[] {
  if (s === '') return [];
  const text = s.replace(/\r\n?/g, '\n');
  return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
}

export const isBlank = (line: string): boolean => line.trim() === '';

/** Counts of blank lines at each end, so both SEARCH and REPLACE can be trimmed alike. */
export function blankEnds(lines: string[]): { lead: number; trail: number } {
  let lead = 0;
  while (lead < lines.length && isBlank(lines[lead]!)) lead++;
  let trail = 0;
  while (trail < lines.length - lead && isBlank(lines[lines.length - 1 - trail]!)) trail++;
  return { lead, trail };
}

/**
 * File lines [start, end) for a failure reason, as the file has them: no line numbers, which models
 * copy back into SEARCH, and the range said in words. Capped so a reason stays readable.
 */
export function excerpt(lines: string[], start: number, end: number, maxLines = 12): string {
  end = Math.min(end, lines.length);
  start = Math.max(0, start);
  const stop = Math.min(end, start + maxLines);
  const out = lines.slice(start, stop).map((l) => (l.length > 160 ? `${l.slice(0, 160)}…` : l));
  const more = end > stop ? `\n(… ${end - stop} more lines)` : '';
  const body = out.join('\n');
  const text = body.length > 1500 ? `${body.slice(0, 1500)}…` : body;
  return `lines ${start + 1}-${stop} read:\n\`\`\`\n${text}\n\`\`\`${more}`;
}
