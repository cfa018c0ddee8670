// The fixer's file section: which files it sees whole, which as outlines with the inspector's
// definitions, and how a character budget is spent over them by rank (docs/edit-format.md, "What the
// fixer is shown").
import type { FileDefinition } from '../../locator/index.js';
import type { Insight } from '../../step-contract/index.js';
import { charsForTokens } from '../../llm/usage.js';
import { type LineSpan, headLines, mergeSpans } from '../../text/lines.js';
import { matchingDefinitions } from '../../locator/match.js';
import { fenced } from '../prompt-parts.js';
import { readForPrompt } from './file-views.js';

/** Lines shown around a snapped definition: an edit's SEARCH block anchors on a few unchanged lines. */
const MARGIN = 3;
/** Lines shown around a named range that no definition contains (module-level code). */
const LOOSE_MARGIN = 20;
/** The most of the budget one top file shown whole may take: two large files cannot both crowd out the rest. */
const WHOLE_SHARE = 0.6;
/** How many request-matching definitions a partly shown file may gain from budget left at the end. */
const MORE_DEFINITIONS = 6;
/**
 * How much a file's rank weighs against what showing more of it costs, once the layout is done: an
 * offer costs its characters × (rank + 1)^RANK_WEIGHT (spendByCost). Chosen on swe-lite-eval and
 * js-swe-dev (bench/RESULTS.md); 0 would be cheapest-first, a large value the rank order alone.
 */
const RANK_WEIGHT = 1.5;
/** Kept back for each later file's outline while an earlier file is laid out. */
const OUTLINE_FLOOR = 1_200;
/** The most of a partly shown file's share its outline may take: the definitions come first. */
const OUTLINE_SHARE = 0.25;

/**
 * The most characters the file section takes, however large the window: past this a prompt costs
 * more than it shows (about 80K tokens; 15 files of the median 21.5K characters nearly fit).
 */
export const MAX_FILES_CHARS = 300_000;

/**
 * Characters for the fixer's file section, from the model's window: what the window holds in
 * characters (the inverse of estimateTokens, so the client's own fit check agrees) less each
 * round's answer (later rounds resend the earlier answers with a short message) and the rest of
 * the prompt, at most MAX_FILES_CHARS. Zero when nothing is left: the client's check then fails
 * loudly rather than sending a prompt the server would cut.
 */
export function filesBudget(o: { contextTokens: number; outputTokens: number; rounds: number; rest: number }): number {
  const reservedTokens = o.outputTokens * o.rounds + ROUND_MESSAGE_TOKENS * (o.rounds - 1);
  const chars = charsForTokens(o.contextTokens - reservedTokens) - o.rest;
  return Math.max(0, Math.min(MAX_FILES_CHARS, Math.floor(chars)));
}

/** A later round's message: what did not apply, the regions re-shown (a generous estimate). */
const ROUND_MESSAGE_TOKENS = 4_000;

export interface FixerContextInput {
  /** The checkout. */
  dir: string;
  /** The files to show, best-ranked first. */
  paths: readonly string[];
  insights: readonly Insight[];
  /** The locator index's definitions per file: [name, kind, start, end, container], 1-based lines. */
  definitions: Readonly<Record<string, FileDefinition[]>>;
  /** Characters for the whole section. */
  budget: number;
  /** The request: budget left at the end shows partly shown files' definitions that match it. */
  request?: string;
  /**
   * Files shown after `paths` with only what `paths` leave of the budget, in this order (the
   * deterministic ranking's, for the files a re-rank left out): laid out as `paths` are, none of
   * them a top file, so each gets its outline and then, by order, whole or its matching definitions.
   */
  fill?: readonly string[];
  /**
   * Files shown after `fill` with only what `fill` leaves, laid out as it is (the located files
   * ranked beyond the re-rank's shortlist): however many they are, their outlines' room is never
   * taken from a file of `fill`.
   */
  beyond?: readonly string[];
}

type NamedLines = { name: string; start_line: number; end_line: number };

const size = (d: FileDefinition) => d[3] - d[2];
const smallest = (defs: FileDefinition[]) =>
  defs.reduce<FileDefinition | undefined>((best, d) => (!best || size(d) < size(best) ? d : best), undefined);

/**
 * The definition the inspector meant: the one of that name overlapping the named lines, else the
 * nearest of that name (models misremember lines more than names), else the smallest containing
 * the lines, else the smallest overlapping them.
 * Undefined when none fits (module-level code).
 */
export function snapToDefinition(defs: FileDefinition[], sym: NamedLines): FileDefinition | undefined {
  const name =
    sym.name
      .split(/[.:#\s(]/)
      .filter(Boolean)
      .pop() ?? sym.name;
  const from = Math.min(sym.start_line, sym.end_line);
  const to = Math.max(sym.start_line, sym.end_line);
  const overlaps = (d: FileDefinition) => d[2] <= to && d[3] >= from;
  const named = defs.filter((d) => d[0] === name);
  const nearest = named.reduce<FileDefinition | undefined>(
    (best, d) => (!best || Math.abs(d[2] - from) < Math.abs(best[2] - from) ? d : best),
    undefined,
  );
  return (
    smallest(named.filter(overlaps)) ??
    nearest ??
    smallest(defs.filter((d) => d[2] <= from && d[3] >= to)) ??
    smallest(defs.filter(overlaps))
  );
}

/** The spans to show for the inspector's symbols: snapped definitions' full bodies, merged, in file order. */
export function focusSpans(defs: FileDefinition[], symbols: readonly NamedLines[], lineCount: number): LineSpan[] {
  const spans = symbols.map((sym) => {
    const d = snapToDefinition(defs, sym);
    const [start, end] = d
      ? [d[2] - MARGIN, d[3] + MARGIN]
      : [Math.min(sym.start_line, sym.end_line) - LOOSE_MARGIN, Math.max(sym.start_line, sym.end_line) + LOOSE_MARGIN];
    return { start: Math.max(1, start), end: Math.min(lineCount, end) };
  });
  return mergeSpans(spans);
}

/** The signature lines of a file's definitions, verbatim, `...` where lines are left out. */
export function outlineText(lines: readonly string[], defs: FileDefinition[]): string {
  const shown = new Set<number>();
  for (const [name, , start, end] of defs) {
    // A Python definition starts at its decorators: show the line that names it.
    let at = start;
    for (let n = start; n <= Math.min(end, start + 4); n++)
      if (lines[n - 1]?.includes(name)) {
        at = n;
        break;
      }
    shown.add(at);
  }
  const out: string[] = [];
  let next = 1;
  for (const n of [...shown].sort((a, b) => a - b)) {
    if (n > next) out.push('...');
    out.push(lines[n - 1] ?? '');
    next = n + 1;
  }
  if (next <= lines.length) out.push('...');
  return out.join('\n');
}

const CUT_NOTE = 'cut; it goes on to line';

/** Excerpts of the file, each fenced and labelled with its lines, cut at a line boundary to fit `max`. */
function excerpts(lines: readonly string[], spans: LineSpan[], max: number): string {
  const parts: string[] = [];
  let room = max;
  for (const s of spans) {
    const label = `lines ${s.start}-${s.end} of ${lines.length}:\n`;
    const text = lines.slice(s.start - 1, s.end).join('\n');
    const whole = `${label}${fenced(text)}`;
    if (whole.length + 1 <= room) {
      parts.push(whole);
      room -= whole.length + 1;
      continue;
    }
    const head = headLines(text, room - label.length - 60);
    if (head.lines > 0 && head.text.length > 0) {
      const end = s.start + head.lines - 1;
      parts.push(`lines ${s.start}-${end} of ${lines.length} (${CUT_NOTE} ${s.end}):\n${fenced(head.text)}`);
    }
    break;
  }
  return parts.join('\n');
}

interface Prepared {
  path: string;
  top: boolean;
  /** The rendered file when it is shown as a link or whole regardless of budget. */
  link?: string;
  lines: string[];
  /** The file shown whole (header and fenced text), rendered once; empty for a link. */
  whole: string;
  outline: string;
  spans: LineSpan[];
  /** Definitions matching the request, best first: shown when budget is left at the end. */
  more: LineSpan[];
}

function prepare(input: FixerContextInput, path: string, top: boolean): Prepared | undefined {
  const read = readForPrompt(input.dir, path);
  if (!read) return undefined;
  if ('link' in read) {
    const link = `## ${path}\n${read.link} (outside the repository: not shown, and edits to it are refused)`;
    return { path, top, link, lines: [], whole: '', outline: '', spans: [], more: [] };
  }
  const lines = read.source.split('\n');
  const defs = input.definitions[path] ?? [];
  const symbols = input.insights.filter((i) => i.file === path).flatMap((i) => i.symbols);
  let spans = focusSpans(defs, symbols, lines.length);
  // A top file with nothing named still gets its head, not only an outline.
  if (spans.length === 0 && top) spans = [{ start: 1, end: lines.length }];
  const more = matchingDefinitions(defs, input.request ?? '', MORE_DEFINITIONS).map(([, , start, end]) => ({
    start: Math.max(1, start - MARGIN),
    end: Math.min(lines.length, end + MARGIN),
  }));
  const whole = `## ${path}\n${fenced(read.source)}`;
  return { path, top, lines, whole, outline: outlineText(lines, defs), spans, more };
}

/** The length of a file's partial view with these spans and its whole outline. */
const fullView = (f: Prepared, spans: LineSpan[]) => partialView({ ...f, spans }, Number.MAX_SAFE_INTEGER).length;

/** The outline and the focus spans of a file, within `max` characters: the spans first, the outline after. */
function partialView(f: Prepared, max: number): string {
  const header = `## ${f.path} (${f.lines.length} lines: outline and excerpts; the lines not shown are unchanged)`;
  const outlineBlock = f.outline ? `outline (signatures only):\n${fenced(f.outline)}` : '';
  const outlineRoom = Math.min(outlineBlock.length, Math.floor(max * OUTLINE_SHARE));
  const body = excerpts(f.lines, f.spans, max - header.length - outlineRoom - 2);
  // Room the excerpts leave goes to the outline only when there are excerpts: an outline alone
  // never fills a file's share (what it leaves is spent on other files or matching definitions).
  const left = f.spans.length ? max - header.length - body.length - 2 : outlineRoom;
  let outline = outlineBlock.length <= left ? outlineBlock : '';
  if (!outline && f.outline && left > 100) {
    const head = headLines(f.outline, left - 60);
    outline = `outline (signatures only; cut):\n${fenced(`${head.text}\n...`)}`;
  }
  return [header, outline, body].filter(Boolean).join('\n');
}

/** The files shown whole when they fit: the inspector's high and medium, else the best-ranked. */
export function topFiles(paths: readonly string[], insights: readonly Insight[]): Set<string> {
  const named = new Set(insights.filter((i) => i.relevance !== 'low').map((i) => i.file));
  const top = new Set(paths.filter((p) => named.has(p)));
  if (top.size === 0 && paths[0] !== undefined) top.add(paths[0]);
  return top;
}

/**
 * The fixer's file section, one string per file in rank order. Top files (topFiles) are shown whole
 * when they fit in WHOLE_SHARE of the budget and what is left after the later files' reserve; the
 * others, and top files that do not fit, as their outline plus the inspector's definitions with
 * full bodies. Budget goes by rank: each file may take what is left once the later files' focus
 * spans and outline floors are kept back (at most half of what is left). Cuts fall on line
 * boundaries and every fence is closed.
 *
 * In turn: `paths` are laid out, then `fill` over what they leave; what is still unspent goes to
 * the cheapest offers by size and rank (spendByCost): a file shown whole, `beyond`'s among them, or
 * a partly shown file of `paths` or `fill` gaining a definition that matches the request; the files
 * of `beyond` not shown whole are laid out last, over what is left, and gain their matching
 * definitions. So the section is never smaller than the budget allows while files are left to
 * show, a large low-ranked file shown whole does not starve a small file ranked after it, and
 * however many files `beyond` holds, their outlines never take room from a file before them.
 */
export function assembleFixerFiles(input: FixerContextInput): string[] {
  const top = topFiles(input.paths, input.insights);
  const named = new Set(input.paths);
  const ranked = input.paths.map((p) => prepare(input, p, top.has(p))).filter((f): f is Prepared => !!f);
  // A file of a later group already named before it is shown once, where it was first named.
  const after = (group: readonly string[] = []) => {
    const later = [...new Set(group)].filter((p) => !named.has(p));
    for (const p of later) named.add(p);
    return later.map((p) => prepare(input, p, false)).filter((f): f is Prepared => !!f);
  };
  const fill = after(input.fill);
  const beyond = after(input.beyond);
  const files = [...ranked, ...fill, ...beyond];
  const shortlisted = ranked.length + fill.length;
  const out = files.map(() => '');
  let left = input.budget;
  // Lays out the files at these places of `files` over what is left.
  const lay = (at: number[]) => {
    const laid = layout(
      at.map((i) => files[i]!),
      left,
      input.budget,
    );
    for (const [k, i] of at.entries()) out[i] = laid.out[k]!;
    left = laid.left;
  };
  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);
  lay(range(0, ranked.length));
  lay(range(ranked.length, shortlisted));
  // The spans each partly shown file shows: the inspector's, then the matching definitions it gains.
  const spans = files.map((f) => f.spans);
  left = spendByCost(files, out, spans, left, shortlisted);
  lay(range(shortlisted, files.length).filter((i) => !out[i]));
  left = spendOnDefinitions(files, out, spans, left, shortlisted, files.length);
  growOutlines(files, out, spans, left);
  return out.filter(Boolean);
}

/**
 * Lays `files` out by rank within `budget` (assembleFixerFiles; `total` is the whole section's, which
 * WHOLE_SHARE is of); `left` is what stays unspent.
 */
function layout(files: Prepared[], budget: number, total: number): { out: string[]; left: number } {
  const reserveOf = (f: Prepared) =>
    f.link
      ? f.link.length
      : Math.min(f.whole.length, partialView(f, Number.MAX_SAFE_INTEGER).length, OUTLINE_FLOOR * 4);
  const reserves = files.map(reserveOf);
  const out: string[] = [];
  let remaining = budget;
  for (const [i, f] of files.entries()) {
    const later = reserves.slice(i + 1).reduce((a, b) => a + b, 0);
    const allot = Math.max(0, remaining - Math.min(later, Math.floor(remaining / 2)));
    const text = render(f, allot, total);
    out.push(text);
    remaining -= text ? text.length + 2 : 0;
  }
  return { out, left: remaining };
}

/**
 * What the layout left unspent, spent on the cheapest offer first while one fits: for each file not
 * yet whole, showing it whole, and for a partly shown file of the shortlist (`shortlisted` first
 * files), its next definition that matches the request; an offer costs its characters ×
 * (rank + 1)^RANK_WEIGHT. So rank leads, but one large file ranked fourth no longer takes what would
 * show the next ten whole, and a top file's matching definition is not crowded out by the whole
 * text of small files ranked far below it. Returns what is still left.
 */
function spendByCost(
  files: Prepared[],
  out: string[],
  spans: LineSpan[][],
  leftover: number,
  shortlisted: number,
): number {
  let left = leftover;
  const next = files.map(() => ({ at: 0 }));
  type Offer = { i: number; text: string; cost: number; more?: LineSpan[] };
  const offerOf = (i: number): Offer | undefined => {
    const f = files[i]!;
    if (f.link || out[i] === f.whole) return undefined;
    const whole = { i, text: f.whole, cost: f.whole.length - out[i]!.length + (out[i] ? 0 : 2) };
    let best: Offer | undefined = whole.cost <= left ? whole : undefined;
    if (i < shortlisted && out[i]) {
      const d = nextDefinition(f, out[i]!, spans[i]!, next[i]!, left);
      if (d && (!best || d.cost < best.cost)) best = { i, text: d.text, cost: d.cost, more: d.spans };
    }
    return best;
  };
  for (;;) {
    let pick: Offer | undefined;
    let pickWeight = Number.POSITIVE_INFINITY;
    for (let i = 0; i < files.length; i++) {
      const o = offerOf(i);
      if (!o) continue;
      const w = (i + 1) ** RANK_WEIGHT * o.cost;
      if (w < pickWeight) {
        pick = o;
        pickWeight = w;
      }
    }
    if (!pick) return left;
    out[pick.i] = pick.text;
    left -= pick.cost;
    if (pick.more) {
      spans[pick.i] = pick.more;
      next[pick.i]!.at++;
    }
  }
}

/**
 * The next definition matching the request that `f`, shown as `current` with `spans`, can gain
 * within `left`, with what it costs; those that do not fit are skipped for good (`next` moves past
 * them: what is left only shrinks). The view is laid out within what the
 * definition's own lines add, so a long outline cannot grow into the rest of the budget on the back
 * of one definition (growOutlines gives outlines what is left at the very end).
 */
function nextDefinition(
  f: Prepared,
  current: string,
  spans: LineSpan[],
  next: { at: number },
  left: number,
): { text: string; cost: number; spans: LineSpan[] } | undefined {
  while (next.at < f.more.length) {
    const wider = mergeSpans([...spans, f.more[next.at]!]);
    const adds = fullView(f, wider) - fullView(f, spans);
    const text = partialView({ ...f, spans: wider }, current.length + Math.min(left, adds));
    const cost = text.length - current.length;
    // Taken only when every excerpt is whole: a wider view must not cut what was shown.
    if (cost > 0 && cost <= left && !text.includes(CUT_NOTE)) return { text, cost, spans: wider };
    next.at++;
  }
  return undefined;
}

/**
 * What is left shows more of the partly shown files `from` to `to`, by rank: their definitions that
 * match the request, while it lasts. Returns what is still left.
 */
function spendOnDefinitions(
  files: Prepared[],
  out: string[],
  spans: LineSpan[][],
  leftover: number,
  from: number,
  to: number,
): number {
  let left = leftover;
  for (let i = from; i < to; i++) {
    const f = files[i]!;
    if (f.link || !out[i] || out[i] === f.whole) continue;
    const next = { at: 0 };
    for (
      let d = nextDefinition(f, out[i]!, spans[i]!, next, left);
      d;
      d = nextDefinition(f, out[i]!, spans[i]!, next, left)
    ) {
      out[i] = d.text;
      spans[i] = d.spans;
      left -= d.cost;
      next.at++;
    }
  }
  return left;
}

/** What is left at the very end lets the partly shown files' outlines grow, by rank. */
function growOutlines(files: Prepared[], out: string[], spans: LineSpan[][], leftover: number): void {
  let left = leftover;
  for (const [i, f] of files.entries()) {
    if (left <= 0) return;
    if (f.link || !out[i] || out[i] === f.whole) continue;
    const text = partialView({ ...f, spans: spans[i]! }, out[i]!.length + left);
    if (text.length <= out[i]!.length || (text.includes(CUT_NOTE) && !out[i]!.includes(CUT_NOTE))) continue;
    left -= text.length - out[i]!.length;
    out[i] = text;
  }
}

function render(f: Prepared, allot: number, budget: number): string {
  if (f.link) return f.link.length <= allot ? f.link : '';
  const whole = f.whole;
  const partialCost = partialView(f, Number.MAX_SAFE_INTEGER).length;
  const wholeFits = f.top
    ? whole.length <= Math.min(allot, budget * WHOLE_SHARE)
    : whole.length <= allot && whole.length <= partialCost;
  if (wholeFits) return whole;
  if (allot < 200) return '';
  return partialView(f, allot);
}
