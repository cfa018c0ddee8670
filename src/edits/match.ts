import { fuzzyFind } from './fuzzy.js';
import { blankEnds, excerpt, isBlank } from './text.js';
import { clip } from '../text/clip.js';

/**
 * Where a SEARCH goes in a file, strategies in order of trust: exact, whitespace-tolerant, fuzzy.
 * A later strategy runs only when the earlier found nothing: an ambiguous earlier match is an
 * answer ("say more"), never a reason to guess with a looser one.
 */
export type Placement =
  | { ok: true; start: number; end: number; replacement: string[]; match: 'exact' | 'whitespace' | 'fuzzy' }
  /** The file already holds REPLACE where SEARCH would be: a resent block, left as it is. */
  | { ok: 'already'; start: number; end: number }
  | { ok: false; reason: string };

/** A line-number prefix as numbered excerpts show it (`12| text`), which models copy back. */
const NUMBERED_RE = /^\s*\d+\s?\|(?: |$)/;

/** The lines without their `N| ` prefixes, when every line has one; otherwise undefined. */
export function unnumbered(lines: string[]): string[] | undefined {
  if (lines.length === 0 || !lines.every((l) => NUMBERED_RE.test(l))) return undefined;
  return lines.map((l) => l.replace(NUMBERED_RE, ''));
}

/** A fuzzy window is accepted at this similarity… */
export const FUZZY_MIN = 0.9;
/** …and only when no separate window comes within this much of it. */
export const FUZZY_MARGIN = 0.05;

type Shift = { add: string } | { remove: string };

const indentOf = (s: string): string => /^[ \t]*/.exec(s)![0];

/** How the file's indentation relates to the SEARCH's, when one is the other plus a prefix. */
function shiftBetween(searchLine: string, fileLine: string): Shift | undefined {
  const a = indentOf(searchLine);
  const b = indentOf(fileLine);
  if (b.length >= a.length && b.endsWith(a)) return { add: b.slice(0, b.length - a.length) };
  if (a.endsWith(b)) return { remove: a.slice(0, a.length - b.length) };
  return undefined;
}

function shifted(line: string, shift: Shift): string {
  if (isBlank(line)) return '';
  if ('add' in shift) return shift.add + line;
  // A replacement line indented less than the shift loses what indentation it has, no more.
  const strip = Math.min(shift.remove.length, indentOf(line).length);
  return line.slice(strip);
}

/** The shift under which SEARCH equals the file at `at`, ignoring trailing whitespace. */
function whitespaceMatchAt(file: string[], search: string[], at: number): Shift | undefined {
  let shift: Shift | undefined;
  for (let i = 0; i < search.length; i++) {
    const s = search[i]!.trimEnd();
    const f = file[at + i]!.trimEnd();
    if (s === '' || f === '') {
      if (s !== f) return undefined;
      continue;
    }
    shift ??= shiftBetween(s, f);
    if (!shift) return undefined;
    if ('add' in shift ? shift.add + s !== f : !s.startsWith(shift.remove) || s.slice(shift.remove.length) !== f)
      return undefined;
  }
  return shift ?? { add: '' };
}

function exactPositions(file: string[], search: string[]): number[] {
  const found: number[] = [];
  for (let at = 0; at + search.length <= file.length; at++) {
    let i = 0;
    while (i < search.length && file[at + i] === search[i]) i++;
    if (i === search.length) found.push(at);
  }
  return found;
}

const lineList = (starts: number[]): string => {
  const shown = starts
    .slice(0, 6)
    .map((s) => s + 1)
    .join(', ');
  return starts.length > 6 ? `${shown}, …` : shown;
};

/**
 * Where the edit goes. SEARCH and REPLACE copied from a numbered excerpt (`12| text` on every
 * line) are read without the numbers when the numbered text itself is not in the file.
 */
export function place(file: string[], search: string[], replace: string[]): Placement {
  const plain = unnumbered(search);
  if (plain && exactPositions(file, search).length === 0) {
    return placeText(file, plain, unnumbered(replace) ?? replace);
  }
  const placed = placeText(file, search, replace);
  const elided = search.findIndex((l) => ELISION_RE.test(l));
  // A fuzzy match would take "..." for the lines it stands for, and REPLACE would drop them.
  const loose = placed.ok === false || (placed.ok === true && placed.match === 'fuzzy');
  if (loose && elided >= 0) {
    const why = placed.ok === false ? ` ${placed.reason}` : '';
    return {
      ok: false,
      reason:
        `SEARCH skips lines with "${search[elided]!.trim()}" (its line ${elided + 1}); SEARCH must quote every line it ` +
        `replaces: copy them all, or send two smaller blocks around the part left out.${why}`,
    };
  }
  return placed;
}

/** A line standing for lines left out: `...`, `…`, or a comment of only that (`# ...`, `// ...`). */
const ELISION_RE = /^\s*(?:(?:#|\/\/|\/\*|<!--|--)\s*)?(?:\.{3,}|…)\s*(?:\*\/|-->)?\s*$/;

/** The block already applied: REPLACE found exactly once, and SEARCH not found outside it. */
type AlreadyPlaced = Extract<Placement, { ok: 'already' }>;

function alreadyAt(file: string[], search: string[], replace: string[]): AlreadyPlaced | undefined {
  const core = replace.slice(blankEnds(replace).lead, replace.length - blankEnds(replace).trail);
  if (core.length === 0) return undefined;
  const found = exactPositions(file, core);
  if (found.length !== 1) return undefined;
  const start = found[0]!;
  const end = start + core.length;
  // SEARCH still present outside REPLACE's lines means the edit is not done: it is not "already".
  if (exactPositions(file, search).some((at) => at < start || at + search.length > end)) return undefined;
  return { ok: 'already', start, end };
}

function placeText(file: string[], search: string[], replace: string[]): Placement {
  const exact = exactPositions(file, search);
  if (exact.length === 1) {
    // REPLACE extends SEARCH (lines added around it) and the file holds it all: applied before.
    const grown = replace.length > search.length ? alreadyAt(file, search, replace) : undefined;
    if (grown && grown.start <= exact[0]! && exact[0]! + search.length <= grown.end) return grown;
    return { ok: true, start: exact[0]!, end: exact[0]! + search.length, replacement: replace, match: 'exact' };
  }
  if (exact.length > 1) {
    return {
      ok: false,
      reason:
        `SEARCH matches ${exact.length} places (starting at lines ${lineList(exact)}); include more surrounding ` +
        `lines so that it matches exactly one`,
    };
  }

  // Blank lines at the ends of SEARCH are the model's framing, not content; REPLACE loses as many.
  const ends = blankEnds(search);
  const core = search.slice(ends.lead, search.length - ends.trail);
  const re = blankEnds(replace);
  const body = replace.slice(Math.min(ends.lead, re.lead), replace.length - Math.min(ends.trail, re.trail));

  const looseMatches: { at: number; shift: Shift }[] = [];
  for (let at = 0; at + core.length <= file.length; at++) {
    const shift = whitespaceMatchAt(file, core, at);
    if (shift) looseMatches.push({ at, shift });
  }
  if (looseMatches.length === 1) {
    const { at, shift } = looseMatches[0]!;
    return {
      ok: true,
      start: at,
      end: at + core.length,
      replacement: body.map((l) => shifted(l, shift)),
      match: 'whitespace',
    };
  }
  if (looseMatches.length > 1) {
    return {
      ok: false,
      reason:
        `SEARCH matches ${looseMatches.length} places when whitespace is ignored (starting at ` +
        `lines ${lineList(looseMatches.map((w) => w.at))}); include more surrounding lines so that it matches exactly one`,
    };
  }

  // Before fuzzy matching, which would find SEARCH in its own replacement and apply it twice.
  const already = alreadyAt(file, core, body);
  if (already) return already;

  const fz = fuzzyFind(file, core);
  if (fz.skipped)
    return {
      ok: false,
      reason:
        `SEARCH not found exactly or ignoring whitespace, and ${fz.skipped}; copy the lines to replace exactly ` +
        `from the file`,
    };
  const best = fz.best;
  if (!best) return { ok: false, reason: 'SEARCH not found: the file is empty' };
  const pct = (x: number): string => `${Math.floor(x * 100)}%`;
  const where = (w: { start: number; end: number }): string => `lines ${w.start + 1}-${w.end}`;
  if (best.score >= FUZZY_MIN && (!fz.second || best.score - fz.second.score >= FUZZY_MARGIN)) {
    const first = core.findIndex((l) => !isBlank(l));
    const anchor = file.slice(best.start, best.end).find((l) => !isBlank(l));
    const shift = first >= 0 && anchor !== undefined ? shiftBetween(core[first]!, anchor) : undefined;
    return {
      ok: true,
      start: best.start,
      end: best.end,
      replacement: shift ? body.map((l) => shifted(l, shift)) : body,
      match: 'fuzzy',
    };
  }
  if (best.score >= FUZZY_MIN && fz.second) {
    return {
      ok: false,
      reason:
        `SEARCH not found exactly; it is about equally similar to ${where(best)} (${pct(best.score)}) ` +
        `and ${where(fz.second)} (${pct(fz.second.score)}); ` +
        (`include more surrounding lines, copied exactly, so that it matches one place. The file ` +
          `at ${excerpt(file, best.start, best.end)}`),
    };
  }
  return {
    ok: false,
    reason:
      `SEARCH not found (no exact or whitespace-tolerant match); the closest is a fuzzy match ` +
      `at ${where(best)}, ${pct(best.score)} similar (${pct(FUZZY_MIN)} needed)` +
      (`${firstDifference(file, core, best)}. Copy the lines to replace exactly from the file; around there ` +
        `its ${excerpt(file, best.start - 2, best.end + 2)}`),
  };
}

/** Names the first differing line when the closest window lines up one-to-one with SEARCH. */
function firstDifference(file: string[], core: string[], w: { start: number; end: number }): string {
  if (w.end - w.start !== core.length) return '';
  for (let i = 0; i < core.length; i++) {
    const f = file[w.start + i]!;
    if (f.trim() !== core[i]!.trim()) {
      const quote = (s: string): string => JSON.stringify(clip(s, 120, { marker: '…' }));
      return (
        `; its first difference is line ${w.start + i + 1}, which reads ${quote(f)} where SEARCH ` +
        `has ${quote(core[i]!)}`
      );
    }
  }
  return '';
}
