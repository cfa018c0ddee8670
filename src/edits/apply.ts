import { mkdir, readFile, realpath, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { place } from './match.js';
import { resolveInside } from './paths.js';
import { joinText, spliceLines, splitText, toLines } from './text.js';
import type { ApplyReport, Edit } from './types.js';

type Applied = ApplyReport['applied'][number];
type Outcome = Applied | { path: string; reason: string };

/**
 * Applies edits in order, each to the file as the previous ones left it (they are written
 * straight away, so a later block sees an earlier one's result). One edit failing does not stop
 * the rest: the model gets back every failure at once and can fix them in one more answer.
 */
export async function applyEdits(root: string, edits: Edit[]): Promise<ApplyReport> {
  const report: ApplyReport = { applied: [], failed: [] };
  let rootReal: string;
  try {
    rootReal = await realpath(root);
  } catch {
    for (const e of edits) report.failed.push({ path: e.path, reason: `the repository root ${root} does not exist` });
    return report;
  }
  for (const edit of edits) {
    let outcome: Outcome;
    try {
      outcome = await applyOne(rootReal, edit);
    } catch (err) {
      outcome = { path: edit.path, reason: `could not apply the edit: ${(err as Error).message}` };
    }
    if ('reason' in outcome) report.failed.push(outcome);
    else report.applied.push(outcome);
  }
  return report;
}

async function applyOne(rootReal: string, edit: Edit): Promise<Outcome> {
  const resolved = await resolveInside(rootReal, edit.path);
  if (!resolved.ok) return { path: edit.path, reason: resolved.reason };
  const { rel: path, abs } = resolved;
  const st = await stat(abs).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (st && !st.isFile()) return { path, reason: 'not a regular file (a directory?)' };

  if (edit.kind === 'delete') {
    if (!st) return { path, reason: 'cannot delete: no such file' };
    await unlink(abs);
    return { path, kind: 'deleted', match: 'exact' };
  }
  const search = edit.kind === 'create' ? '' : edit.search;
  const replacement = edit.kind === 'create' ? edit.content : edit.replace;

  if (!st) {
    if (search.trim() !== '') {
      return { path, reason: 'the file does not exist; to create it, use a block with an empty SEARCH part' };
    }
    await mkdir(dirname(abs), { recursive: true });
    // 'wx': never overwrite something that appeared since the stat.
    await writeFile(abs, toLines(replacement).map((l) => `${l}\n`).join(''), { flag: 'wx' });
    return { path, kind: 'created', match: 'new' };
  }

  const read = await readText(abs);
  if (typeof read !== 'string') return { path, reason: read.reason };
  if (search.trim() === '') {
    if (edit.kind === 'create') return { path, reason: 'cannot create: the file exists; quote the lines to replace in SEARCH' };
    if (read.length > 0) return { path, reason: 'SEARCH is empty but path exists; quote the lines to replace' };
    await writeFile(abs, toLines(replacement).map((l) => `${l}\n`).join(''));
    return { path, kind: 'modified', match: 'exact' };
  }

  const file = splitText(read);
  const found = place(file.lines, toLines(search), toLines(replacement));
  if (!found.ok) return { path, reason: found.reason };
  spliceLines(file, found.start, found.end, found.replacement);
  await writeFile(abs, joinText(file));
  return { path, kind: 'modified', match: found.match };
}

/** The file as UTF-8 text, or why it is not: edits to binary files would corrupt them. */
async function readText(abs: string): Promise<string | { reason: string }> {
  const buf = await readFile(abs);
  if (buf.subarray(0, 8192).includes(0)) return { reason: 'the file looks binary (it has NUL bytes); binary files are not edited' };
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(buf);
  } catch {
    return { reason: 'the file is not valid UTF-8; only UTF-8 text files are edited' };
  }
}
