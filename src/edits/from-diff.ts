import { type StructuredPatch, type StructuredPatchHunk, parsePatch } from 'diff';
import type { Edit } from './types.js';

/*
 * A unified diff (git's, or any `diff -u`) as the edits a model would send in the fixer's format
 * (docs/edit-format.md). The evaluation harness's oracle mode uses it to stand an accepted patch
 * in for the model's answer, so the whole edit path — parser, matcher, applier — is what runs.
 *
 * Each hunk becomes one search/replace edit. A hunk's context is git's choice (three lines), which
 * may be repeated elsewhere in the file or start on a blank line (the applier trims blank ends), so
 * the SEARCH part is grown line by line from the file itself until it is unique and starts and ends
 * on a line with text. Hunks are placed on the file as the earlier edits left it, as the applier
 * will see it.
 */

export interface DiffEdits {
  edits: Edit[];
  /** What the format cannot say or the files do not allow, one sentence each, naming the file. */
  errors: string[];
}

/** The current text of a repository file before the diff, or undefined when it does not exist. */
export type ReadFile = (path: string) => string | undefined;

const stripPrefix = (name: string | undefined): string | undefined => {
  if (!name || name === '/dev/null') return undefined;
  return name.replace(/^[ab]\//, '');
};

/** The diff's file patches as edits; `read` gives each modified file's text before the diff. */
export function editsFromUnifiedDiff(diff: string, read: ReadFile): DiffEdits {
  const out: DiffEdits = { edits: [], errors: [] };
  let patches: StructuredPatch[];
  try {
    patches = parsePatch(diff);
  } catch (err) {
    return { edits: [], errors: [`the diff does not parse: ${(err as Error).message}`] };
  }
  for (const patch of patches) {
    const from = stripPrefix(patch.oldFileName);
    const to = stripPrefix(patch.newFileName);
    if (!from && !to) continue;
    if (!to) {
      out.edits.push({ kind: 'delete', path: from! });
      continue;
    }
    const before = from ? read(from) : '';
    if (before === undefined) {
      out.errors.push(`${from}: the diff changes it but the file does not exist`);
      continue;
    }
    const renamed = from !== undefined && from !== to;
    const file = fileEdits(to, from ? before : undefined, patch.hunks, renamed);
    if ('error' in file) {
      out.errors.push(`${to}: ${file.error}`);
      continue;
    }
    out.edits.push(...file.edits);
    // A rename: the new path was created with the changed content; the old one goes.
    if (renamed) out.edits.push({ kind: 'delete', path: from });
  }
  return out;
}

type FileResult = { edits: Edit[] } | { error: string };

/** The edits for one file: a creation when it is new or renamed, else one replace per hunk. */
function fileEdits(
  path: string,
  before: string | undefined,
  hunks: StructuredPatchHunk[],
  renamed: boolean,
): FileResult {
  if (hunks.some((h) => h.lines.some((l) => l.startsWith('\\')))) {
    return { error: 'the diff changes whether the file ends with a newline, which the edit format cannot say' };
  }
  if (before === undefined || before === '') {
    // A new (or empty) file: one block with an empty SEARCH holding the whole content.
    const content = hunks.flatMap((h) => h.lines.filter((l) => l[0] === '+').map((l) => l.slice(1)));
    return { edits: [{ kind: 'replace', path, search: '', replace: asText(content) }] };
  }
  const lines = splitLines(before);
  const edits: Edit[] = [];
  let shift = 0;
  for (const hunk of hunks) {
    const placed = placeHunk(lines, hunk, shift);
    if ('error' in placed) return placed;
    shift += hunk.newLines - hunk.oldLines;
    edits.push({ kind: 'replace', path, search: asText(placed.search), replace: asText(placed.replace) });
  }
  // A renamed file is written whole at its new path (the hunks placed on the old content).
  if (renamed) return { edits: [{ kind: 'replace', path, search: '', replace: asText(lines) }] };
  return { edits };
}

const splitLines = (text: string): string[] => (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
const asText = (lines: string[]): string => (lines.length ? `${lines.join('\n')}\n` : '');

/**
 * Places one hunk on the file's current lines (changing them), returning the SEARCH and REPLACE
 * lines: the hunk without blank context at its ends, widened line by line from the file until
 * SEARCH is unique and starts and ends on a line with text (or at the file's start or end), so
 * neither a repeat elsewhere nor the applier's blank-line trimming can move it.
 */
function placeHunk(
  lines: string[],
  hunk: StructuredPatchHunk,
  shift: number,
): { search: string[]; replace: string[] } | { error: string } {
  const body = hunk.lines.filter((l) => l[0] === ' ' || l[0] === '-' || l[0] === '+');
  const pre = body.filter((l) => l[0] !== '+').map((l) => l.slice(1));
  // A hunk that removes nothing and has no context (oldLines 0) inserts after line oldStart.
  const expected = hunk.oldLines === 0 ? hunk.oldStart + shift : hunk.oldStart - 1 + shift;
  const at = nearest(positions(lines, pre), expected);
  if (at === undefined) return { error: `the lines of hunk @@ -${hunk.oldStart} @@ are not in the file` };
  // Blank context at the hunk's ends is dropped first; the widening below adds back what it needs.
  let lead = 0;
  while (lead < body.length && body[lead]![0] === ' ' && body[lead]!.trim() === '') lead++;
  let trail = 0;
  while (trail < body.length - lead && body.at(-1 - trail)![0] === ' ' && body.at(-1 - trail)!.trim() === '') trail++;
  const core = body.slice(lead, body.length - trail);
  let start = at + lead;
  let end = at + pre.length - trail;
  const edgeOk = (s: number, e: number) =>
    (s === 0 || lines[s]!.trim() !== '') && (e === lines.length || lines[e - 1]!.trim() !== '');
  const settled = (s: number, e: number) => e > s && edgeOk(s, e) && positions(lines, lines.slice(s, e)).length === 1;
  while (!settled(start, end) && !(start === 0 && end === lines.length)) {
    const up = start > 0 && (end === lines.length || lines[start]?.trim() === '' || end - at >= at - start);
    if (up) start--;
    else end++;
  }
  if (!settled(start, end)) return { error: `hunk @@ -${hunk.oldStart} @@ has no unique place in the file` };
  const coreOld = core.filter((l) => l[0] !== '+').length;
  const post = core.filter((l) => l[0] !== '-').map((l) => l.slice(1));
  const replace = [...lines.slice(start, at + lead), ...post, ...lines.slice(at + lead + coreOld, end)];
  const search = lines.slice(start, end);
  lines.splice(start, end - start, ...replace);
  return { search, replace };
}

/** Where `needle` occurs as whole consecutive lines of `hay`. */
function positions(hay: string[], needle: string[]): number[] {
  const found: number[] = [];
  if (needle.length === 0) {
    for (let i = 0; i <= hay.length; i++) found.push(i);
    return found;
  }
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    found.push(i);
  }
  return found;
}

const nearest = (found: number[], target: number): number | undefined =>
  found.reduce<number | undefined>(
    (best, p) => (best === undefined || Math.abs(p - target) < Math.abs(best - target) ? p : best),
    undefined,
  );

/** Edits as an answer in the fixer's format: what a model following the instructions would send. */
export function formatEdits(edits: Edit[]): string {
  return edits
    .map((e) => {
      if (e.kind === 'delete') return `DELETE ${/\s/.test(e.path) ? `\`${e.path}\`` : e.path}`;
      const search = e.kind === 'create' ? '' : e.search;
      const replace = e.kind === 'create' ? e.content : e.replace;
      const body = `<<<<<<< SEARCH\n${search}=======\n${replace}>>>>>>> REPLACE\n`;
      let fence = '```';
      while (body.includes(fence)) fence += '`';
      return `${e.path}\n${fence}\n${body}${fence}`;
    })
    .join('\n\n');
}
