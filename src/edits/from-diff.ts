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
    // git's headers (`new file mode`, `deleted file mode`) name both sides even when one is absent.
    const from = patch.isCreate ? undefined : stripPrefix(patch.oldFileName);
    const to = patch.isDelete ? undefined : stripPrefix(patch.newFileName);
    if (!from && !to) continue;
    if (!to) {
      out.edits.push({ kind: 'delete', path: from! });
      continue;
    }
    if (patch.isCopy || patch.newMode === '120000' || patch.newMode === '160000') {
      const what = patch.isCopy ? 'a copy' : patch.newMode === '120000' ? 'a symlink' : 'a submodule';
      out.errors.push(`${to}: the diff makes ${what}, which the edit format cannot say`);
      continue;
    }
    const before = from ? read(from) : '';
    if (before === undefined) {
      out.errors.push(`${from}: the diff changes it but the file does not exist`);
      continue;
    }
    // A rename moves the file (its mode with it); the hunks then apply at the new path.
    if (from !== undefined && from !== to) out.edits.push({ kind: 'rename', path: from, to });
    const file = fileEdits(to, from ? before : undefined, patch.hunks);
    if ('error' in file) {
      out.errors.push(`${to}: ${file.error}`);
      continue;
    }
    out.edits.push(...file.edits);
    const executable = isExecutable(patch.newMode);
    if (executable !== undefined && (from === undefined ? executable : executable !== isExecutable(patch.oldMode)))
      out.edits.push({ kind: 'mode', path: to, executable });
  }
  return out;
}

const isExecutable = (mode: string | undefined): boolean | undefined =>
  mode === undefined ? undefined : mode === '100755';

type FileResult = { edits: Edit[] } | { error: string };

/**
 * Whether the file ends with a newline after the hunks: `\ No newline at end of file` after a
 * removed line speaks of the old side, after an added or context line of the new side.
 */
function endsWithNewline(hunks: StructuredPatchHunk[], before: boolean): boolean {
  let after = before;
  for (const h of hunks)
    h.lines.forEach((l, i) => {
      if (!l.startsWith('\\') || i === 0) return;
      const side = h.lines[i - 1]![0];
      if (side === '+' || side === ' ') after = false;
      else if (side === '-') after = true; // a later marker on the new side, if any, comes after it
    });
  return after;
}

/** The edits for one file: a creation when it is new (or empty), else one replace per hunk; then its final newline. */
function fileEdits(path: string, before: string | undefined, hunks: StructuredPatchHunk[]): FileResult {
  const hadNewline = before === undefined || before === '' || before.endsWith('\n');
  let edits: Edit[] = [];
  let empty = false;
  if (before === undefined || before === '') {
    // A new (or empty) file: one block with an empty SEARCH holding the whole content (none for an empty file).
    const content = hunks.flatMap((h) => h.lines.filter((l) => l[0] === '+').map((l) => l.slice(1)));
    edits = [{ kind: 'replace', path, search: '', replace: asText(content) }];
    empty = content.length === 0;
    if (before === '' && empty) edits = [];
  } else {
    const lines = splitLines(before);
    let shift = 0;
    for (const hunk of hunks) {
      const placed = placeHunk(lines, hunk, shift);
      if ('error' in placed) return placed;
      shift += hunk.newLines - hunk.oldLines;
      edits.push({ kind: 'replace', path, search: asText(placed.search), replace: asText(placed.replace) });
    }
    empty = lines.length === 0;
  }
  const newline = endsWithNewline(hunks, hadNewline);
  if (newline !== hadNewline && !empty) edits.push({ kind: 'final-newline', path, present: newline });
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

const quoted = (path: string): string => (/\s/.test(path) ? `\`${path}\`` : path);

/** Edits as an answer in the fixer's format: what a model following the instructions would send. */
export function formatEdits(edits: Edit[]): string {
  return edits
    .map((e) => {
      if (e.kind === 'delete') return `DELETE ${quoted(e.path)}`;
      if (e.kind === 'rename') return `RENAME ${quoted(e.path)} ${quoted(e.to)}`;
      if (e.kind === 'mode') return `CHMOD ${e.executable ? '+x' : '-x'} ${quoted(e.path)}`;
      if (e.kind === 'final-newline') return `${e.present ? '' : 'NO '}FINAL NEWLINE ${quoted(e.path)}`;
      const search = e.kind === 'create' ? '' : e.search;
      const replace = e.kind === 'create' ? e.content : e.replace;
      const body = `<<<<<<< SEARCH\n${search}=======\n${replace}>>>>>>> REPLACE\n`;
      let fence = '```';
      while (body.includes(fence)) fence += '`';
      return `${e.path}\n${fence}\n${body}${fence}`;
    })
    .join('\n\n');
}
