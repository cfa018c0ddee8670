import { ConfinedDir } from '../checkout/confined-fs.js';
import { place } from './match.js';
import { checkEditPath, editRefusal } from './paths.js';
import { joinText, spliceLines, splitText, toLines } from './text.js';
import type { ApplyReport, Edit } from './types.js';

type Applied = ApplyReport['applied'][number];
type Already = ApplyReport['already'][number];
type Outcome = Applied | Already | { path: string; reason: string };

/** Files the fixer edits: at most this large (larger ones are not shown to it either). */
const MAX_EDIT_BYTES = 4 * 1024 * 1024;

/**
 * Applies edits in order, each to the file as the previous ones left it (they are written
 * straight away, so a later block sees an earlier one's result). One edit failing does not stop
 * the rest: the model gets back every failure at once and can fix them in one more answer.
 * Every read and write goes through the confined file module: a symlink that leads out of the
 * checkout (or into .git) is refused with the reason, never written through.
 */
export async function applyEdits(root: string, edits: Edit[]): Promise<ApplyReport> {
  const report: ApplyReport = { applied: [], failed: [], already: [] };
  let dir: ConfinedDir;
  try {
    dir = new ConfinedDir(root, { exclude: ['.git'] });
  } catch {
    for (const e of edits) report.failed.push({ path: e.path, reason: `the repository root ${root} does not exist` });
    return report;
  }
  for (const edit of edits) {
    let outcome: Outcome;
    try {
      outcome = applyOne(dir, edit);
    } catch (err) {
      outcome = { path: edit.path, reason: `could not apply the edit: ${(err as Error).message}` };
    }
    if ('reason' in outcome) report.failed.push(outcome);
    else if ('startLine' in outcome) report.already.push(outcome);
    else report.applied.push(outcome);
  }
  return report;
}

const asText = (s: string) =>
  toLines(s)
    .map((l) => `${l}\n`)
    .join('');

function applyOne(dir: ConfinedDir, edit: Edit): Outcome {
  const checked = checkEditPath(edit.path);
  if (!checked.ok) return { path: edit.path, reason: checked.reason };
  const path = checked.rel;
  const info = dir.info(path);
  if (info.kind !== 'file' && info.kind !== 'missing') return { path, reason: editRefusal(path, info) };

  if (edit.kind === 'delete') {
    if (info.kind === 'missing') return { path, reason: 'cannot delete: no such file' };
    dir.remove(path);
    return { path, kind: 'deleted', match: 'exact' };
  }
  if (edit.kind === 'rename' || edit.kind === 'mode' || edit.kind === 'final-newline') {
    if (info.kind === 'missing') return { path, reason: `cannot ${verbOf(edit)}: no such file` };
    if (edit.kind === 'mode') {
      dir.setExecutable(path, edit.executable);
      return { path, kind: 'modified', match: 'exact' };
    }
    if (edit.kind === 'rename') return renameOne(dir, path, edit.to);
    return finalNewline(dir, path, edit.present);
  }
  const search = edit.kind === 'create' ? '' : edit.search;
  const replacement = edit.kind === 'create' ? edit.content : edit.replace;

  if (info.kind === 'missing') {
    if (search.trim() !== '') {
      return { path, reason: 'the file does not exist; to create it, use a block with an empty SEARCH part' };
    }
    // mode 'create': never overwrite something that appeared since the check.
    dir.write(path, asText(replacement), { mode: 'create', mkdirs: true });
    return { path, kind: 'created', match: 'new' };
  }

  const read = readText(dir, path);
  if (typeof read !== 'string') return { path, reason: read.reason };
  if (search.trim() === '') {
    if (edit.kind === 'create')
      return { path, reason: 'cannot create: the file exists; quote the lines to replace in SEARCH' };
    if (read.length > 0) return { path, reason: 'SEARCH is empty but path exists; quote the lines to replace' };
    dir.write(path, asText(replacement), { mode: 'replace' });
    return { path, kind: 'modified', match: 'exact' };
  }

  const file = splitText(read);
  const found = place(file.lines, toLines(search), toLines(replacement));
  if (found.ok === 'already') return { path, startLine: found.start + 1, endLine: found.end };
  if (!found.ok) return { path, reason: found.reason };
  spliceLines(file, found.start, found.end, found.replacement);
  dir.write(path, joinText(file), { mode: 'replace' });
  return { path, kind: 'modified', match: found.match };
}

const verbOf = (edit: Edit): string =>
  edit.kind === 'rename' ? 'rename' : edit.kind === 'mode' ? 'change the mode' : 'change the final newline';

/** Moves a file; the new path is checked as an edit's path is, and must not exist. */
function renameOne(dir: ConfinedDir, path: string, to: string): Outcome {
  const checked = checkEditPath(to);
  if (!checked.ok) return { path, reason: `cannot rename to ${to}: ${checked.reason}` };
  const target = dir.info(checked.rel);
  if (target.kind !== 'missing') {
    const why = target.kind === 'file' || target.kind === 'dir' ? 'it exists' : editRefusal(checked.rel, target);
    return { path, reason: `cannot rename to ${checked.rel}: ${why}` };
  }
  dir.rename(path, checked.rel, { mkdirs: true });
  return { path: checked.rel, kind: 'renamed', match: 'exact', from: path };
}

/** Adds the file's line terminator at its end, or removes the one there. An empty file stays empty. */
function finalNewline(dir: ConfinedDir, path: string, present: boolean): Outcome {
  const read = readText(dir, path);
  if (typeof read !== 'string') return { path, reason: read.reason };
  const file = splitText(read);
  const last = file.lines.length - 1;
  if (last >= 0) file.eols[last] = present ? file.eols[last] || file.eol : '';
  dir.write(path, joinText(file), { mode: 'replace' });
  return { path, kind: 'modified', match: 'exact' };
}

/** The file as UTF-8 text, or why it is not: edits to binary files would corrupt them. */
function readText(dir: ConfinedDir, path: string): string | { reason: string } {
  const got = dir.read(path, { maxBytes: MAX_EDIT_BYTES });
  if (!got.ok)
    return {
      reason:
        got.info.kind === 'too-large'
          ? `the file is too large to edit (${got.info.size} bytes)`
          : editRefusal(path, got.info),
    };
  const buf = got.bytes;
  if (buf.subarray(0, 8192).includes(0))
    return { reason: 'the file looks binary (it has NUL bytes); binary files are not edited' };
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(buf);
  } catch {
    return { reason: 'the file is not valid UTF-8; only UTF-8 text files are edited' };
  }
}
