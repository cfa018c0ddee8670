import type { Edit, ParseResult } from './types.js';

/*
 * Reads the fixer model's answer (docs/edit-format.md). Lenient about what models commonly get
 * wrong in form, strict about what changes meaning: a block without its REPLACE marker is an
 * error, never guessed at, because applying half a block would write the wrong file.
 */

// 5-9 marker characters: models miscount the canonical 7 often enough to matter.
const SEARCH_RE = /^\s*<{5,9}\s*SEARCH\s*$/i;
const DIVIDER_RE = /^\s*={5,9}\s*$/;
const REPLACE_RE = /^\s*>{5,9}\s*REPLACE\s*$/i;
const FENCE_RE = /^\s*(`{3,}|~{3,})\s*([\w.+#-]*)\s*$/;
const DELETE_RE = /^\s*DELETE[ \t]+(\S.*)$/;
const RENAME_RE = /^\s*RENAME[ \t]+(\S.*)$/;
const CHMOD_RE = /^\s*CHMOD[ \t]+([+-])x[ \t]+(\S.*)$/;
const NEWLINE_RE = /^\s*(NO[ \t]+)?FINAL[ \t]+NEWLINE[ \t]+(\S.*)$/;
// RENAME's two paths: each a bare word or in backticks or quotes, optionally `->` between.
const RENAME_ARGS_RE = /^(`[^`]+`|"[^"]+"|'[^']+'|\S+)(?:[ \t]+->)?[ \t]+(`[^`]+`|"[^"]+"|'[^']+'|\S+)\s*$/;

/** A directive line outside blocks (DELETE, RENAME, CHMOD, [NO] FINAL NEWLINE) as its edit, if it is one. */
function directive(line: string): Edit | undefined {
  const del = DELETE_RE.exec(line);
  if (del) {
    const path = cleanPath(del[1]!);
    return path ? { kind: 'delete', path } : undefined;
  }
  const ren = RENAME_RE.exec(line);
  if (ren) {
    const args = RENAME_ARGS_RE.exec(ren[1]!.trim());
    const from = args ? cleanPath(args[1]!) : undefined;
    const to = args ? cleanPath(args[2]!) : undefined;
    return from && to ? { kind: 'rename', path: from, to } : undefined;
  }
  const mode = CHMOD_RE.exec(line);
  if (mode) {
    const path = cleanPath(mode[2]!);
    return path ? { kind: 'mode', path, executable: mode[1] === '+' } : undefined;
  }
  const eol = NEWLINE_RE.exec(line);
  if (eol) {
    const path = cleanPath(eol[2]!);
    return path ? { kind: 'final-newline', path, present: !eol[1] } : undefined;
  }
  return undefined;
}

const isFence = (line: string): boolean => FENCE_RE.test(line);
const isBareFence = (line: string): boolean => FENCE_RE.exec(line)?.[2] === '';
const isMarker = (line: string): boolean => SEARCH_RE.test(line) || DIVIDER_RE.test(line) || REPLACE_RE.test(line);

/**
 * The file path a header line names, or undefined when it reads like commentary. Strips the
 * decorations models add: `backticks`, **bold**, a `File:`/`Path:` label, `#` headings, a colon.
 */
export function cleanPath(line: string): string | undefined {
  let s = line.trim();
  if (s === '' || isFence(s) || isMarker(s)) return undefined;
  let quoted = false;
  for (let pass = 0; pass < 4; pass++) {
    const before = s;
    s = s
      .replace(/^#+\s*/, '')
      .replace(/^(\*\*|__)(.+)\1$/, '$2')
      .replace(/^(file(name)?|path)\s*:\s*/i, '')
      .replace(/:$/, '')
      .trim();
    const q = /^(`+|"|')(.+)\1$/.exec(s);
    if (q) {
      s = q[2]!.trim();
      quoted = true;
    }
    if (s === before) break;
  }
  // Unquoted words with spaces are a sentence, not a path; quote a path that has spaces.
  if (s === '' || (!quoted && /\s/.test(s)) || s.includes('`')) return undefined;
  return s;
}

/** Lines as text: joined, with a final newline unless there are none. */
const asText = (lines: string[]): string => (lines.length ? `${lines.join('\n')}\n` : '');

/** Picks the divider among several `=====` lines: the canonical one if unique, else the middle. */
function pickDivider(candidates: number[], lines: string[]): number | undefined {
  const canonical = candidates.filter((k) => lines[k]!.trim() === '=======');
  if (canonical.length === 1) return canonical[0];
  const pool = canonical.length > 1 ? canonical : candidates;
  return pool[Math.floor(pool.length / 2)];
}

export function parseEdits(text: string): ParseResult {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const used = new Array<boolean>(lines.length).fill(false);
  const edits: Edit[] = [];
  const errors: string[] = [];
  let floor = 0; // header look-back never reaches into what an earlier block consumed
  let lastPath: string | undefined;
  let inFence = false; // a fence opened around blocks and not yet closed
  let open: ParseResult['open']; // the block the answer ended inside, if it did

  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (!SEARCH_RE.test(line)) {
      const command = directive(line);
      if (command) {
        edits.push(command);
        used[i] = true;
        floor = i + 1;
      } else if (REPLACE_RE.test(line)) {
        errors.push(`line ${i + 1}: a ">>>>>>> REPLACE" line with no "<<<<<<< SEARCH" block before it`);
        used[i] = true;
      }
      i++;
      continue;
    }

    // The header: [path] [fence] SEARCH, or [fence] [path] SEARCH, blank lines allowed between.
    const back = (from: number): number => {
      let j = from;
      while (j >= floor && !used[j] && lines[j]!.trim() === '') j--;
      return j >= floor && !used[j] ? j : -1;
    };
    let fenceAt = -1;
    let pathAt = -1;
    let path: string | undefined;
    let j = back(i - 1);
    if (j >= 0 && isFence(lines[j]!)) {
      fenceAt = j;
      j = back(j - 1);
    }
    const headerPath = j >= 0 ? cleanPath(lines[j]!) : undefined;
    if (headerPath !== undefined) {
      path = headerPath;
      pathAt = j;
      if (fenceAt < 0) {
        const f = back(j - 1);
        if (f >= 0 && isFence(lines[f]!)) fenceAt = f;
      }
    }
    // No header path: the block continues the previous block's file.
    path ??= lastPath;

    const dividers: number[] = [];
    let end = -1;
    let k = i + 1;
    for (; k < lines.length; k++) {
      if (SEARCH_RE.test(lines[k]!)) break;
      if (REPLACE_RE.test(lines[k]!)) {
        end = k;
        break;
      }
      if (DIVIDER_RE.test(lines[k]!)) dividers.push(k);
    }
    const divider = end >= 0 ? pickDivider(dividers, lines) : undefined;
    const name = path ?? '(no path)';
    if (end < 0 || divider === undefined) {
      const missing = end < 0 ? '">>>>>>> REPLACE"' : 'the "=======" line between SEARCH and REPLACE';
      const error = `line ${i + 1}: unterminated block for ${name}: ${missing} is missing; the block was ignored`;
      errors.push(error);
      if (end < 0 && k >= lines.length) open = { path: name, error };
      // Without a REPLACE the block's extent is unknown: consume only its marker, so that a block
      // starting later (its header included) still parses.
      for (const at of [fenceAt, pathAt, i]) if (at >= 0) used[at] = true;
      if (end >= 0) for (let m = i; m <= end; m++) used[m] = true;
      i = end >= 0 ? end + 1 : i + 1;
      floor = i;
      continue;
    }

    for (const at of [fenceAt, pathAt]) if (at >= 0) used[at] = true;
    for (let m = i; m <= end; m++) used[m] = true;
    if (fenceAt >= 0) inFence = true;
    if (path === undefined) {
      errors.push(
        `line ${i + 1}: the block has no file path; put the path on the line just before the block (or before ` +
          `its fence)`,
      );
    } else {
      const searchLines = lines.slice(i + 1, divider);
      // A SEARCH of only blank lines is an empty SEARCH: models pad "create this file" blocks.
      const search = searchLines.every((l) => l.trim() === '') ? '' : asText(searchLines);
      edits.push({ kind: 'replace', path, search, replace: asText(lines.slice(divider + 1, end)) });
      lastPath = path;
    }

    // The closing fence, when one is open: the next non-blank line, if it is a bare fence. Left
    // open (the model forgot it, or more blocks follow in the same fence), nothing is lost.
    i = end + 1;
    if (inFence) {
      let n = i;
      while (n < lines.length && lines[n]!.trim() === '') n++;
      if (n < lines.length && isBareFence(lines[n]!)) {
        used[n] = true;
        inFence = false;
        i = n + 1;
      }
    }
    floor = i;
  }

  const notes = lines
    .filter((_, n) => !used[n])
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return open ? { edits, errors, notes, open } : { edits, errors, notes };
}
