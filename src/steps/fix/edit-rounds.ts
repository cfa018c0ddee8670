import type { ModelMessage } from 'ai';
import { type ApplyReport, type ParseResult, applyEdits, parseEdits } from '../../edits/index.js';
import { checkEditPath } from '../../edits/paths.js';
import type { ModelClient } from '../../llm/client.js';
import { MAX_PARSE_BYTES, syntaxErrors } from '../../locator/treesitter.js';
import { ConfinedDir } from '../../checkout/confined-fs.js';
import { LOW_OUTPUT_TOKENS } from '../../llm/usage.js';
import { clip } from '../../text/clip.js';

export interface EditRounds {
  /** Answers the model gave. */
  rounds: number;
  /** Every edit applied, across rounds, in order. */
  applied: ApplyReport['applied'];
  /** Edits of the last answer that did not apply. */
  failed: ApplyReport['failed'];
  /** What was still wrong after the last answer (empty when the model got there). */
  problems: string[];
  /** The model's commentary outside the edit blocks (the latest that had any). */
  notes: string;
}

/**
 * The fixers' conversation: asks for edits in the edit format, applies them to `dir`, and
 * sends back what did not apply (with the reason) and what `check` still finds wrong, for
 * up to `maxRounds` answers. Edits that applied stay applied; the model is told so. An answer
 * that needed correcting is counted as malformed on the step's meter.
 */
export async function editRounds(
  model: ModelClient,
  o: {
    system: string;
    user: string;
    dir: string;
    maxRounds: number;
    maxOutputTokens: number;
    log(message: string, data?: Record<string, unknown>): void;
    /** Problems of the files as they now are (e.g. over a size limit), in words for the model. */
    check?: () => Promise<string[]>;
    /** Parse the files each round changed (tree-sitter) and send back errors the round brought in. */
    syntaxCheck?: boolean;
  },
): Promise<EditRounds> {
  const messages: ModelMessage[] = [{ role: 'user', content: o.user }];
  const result: EditRounds = { rounds: 0, applied: [], failed: [], problems: [], notes: '' };
  for (;;) {
    result.rounds++;
    const { text: answer, ...end } = await model.text({
      system: o.system,
      messages,
      maxOutputTokens: o.maxOutputTokens,
    });
    const { parsed, report, notApplied, syntax, cutOff } = await takeAnswer(o.dir, answer, end, {
      syntaxCheck: o.syntaxCheck,
    });
    result.notes = parsed.notes.trim() || result.notes;
    result.applied.push(...report.applied);
    result.failed = report.failed;
    const stillWrong = [...syntax, ...((await o.check?.()) ?? [])];
    result.problems = [...(cutOff ? [cutOffNote(cutOff.maxOutputTokens)] : []), ...notApplied, ...stillWrong];
    o.log('fixer round', {
      round: result.rounds,
      applied: report.applied.length,
      failed: report.failed.length,
      already: report.already.length,
      format_errors: parsed.errors.length,
      still_wrong: stillWrong.length,
      finish_reason: end.finishReason,
      ...(cutOff && { cut_off_at_tokens: cutOff.maxOutputTokens }),
    });
    if (result.problems.length === 0) return result;
    model.noteMalformed();
    if (result.rounds >= o.maxRounds) return result;
    messages.push(
      { role: 'assistant', content: answer.trim() || '(empty answer)' },
      { role: 'user', content: roundMessage({ report, notApplied, stillWrong, cutOff }) },
    );
  }
}

/** One answer taken in: parsed, applied to `dir`, and what did not apply said for the model. */
export async function takeAnswer(
  dir: string,
  answer: string,
  end: { finishReason: string; maxOutputTokens: number },
  opts: { syntaxCheck?: boolean } = {},
): Promise<{
  parsed: ParseResult;
  report: ApplyReport;
  notApplied: string[];
  /** Syntax errors the applied edits brought in, with numbered context (only with `syntaxCheck`). */
  syntax: string[];
  cutOff?: { maxOutputTokens: number };
}> {
  const parsed = parseEdits(answer);
  const cleanBefore = opts.syntaxCheck
    ? await parsingClean(
        dir,
        parsed.edits.map((e) => e.path),
      )
    : new Set<string>();
  const cutOff = end.finishReason === 'length' ? { maxOutputTokens: end.maxOutputTokens } : undefined;
  const report = parsed.edits.length ? await applyEdits(dir, parsed.edits) : { applied: [], failed: [], already: [] };
  // The block a cut-off answer ended inside is the cut's doing, not a format error: the cut is said instead.
  const formatErrors = parsed.errors.filter((e) => !(cutOff && e === parsed.open?.error));
  const notApplied = [
    ...formatErrors.map((e) => `format: ${e}`),
    ...report.failed.map((f) => `${f.path}: ${f.reason}`),
  ];
  if (parsed.edits.length === 0 && parsed.errors.length === 0 && !cutOff)
    notApplied.push('the answer held no edit blocks');
  const syntax = await brokenSyntax(dir, report, cleanBefore);
  return { parsed, report, notApplied, syntax, ...(cutOff && { cutOff }) };
}

/** What the model is told after an answer that left something to do: the next round's message. */
export function roundMessage(r: {
  report: ApplyReport;
  /** Format errors and edits that did not apply, each `where: why`. */
  notApplied: string[];
  /** What the `check` hook still finds wrong. */
  stillWrong: string[];
  /** The answer stopped at the output limit (finish reason `length`), which was this many tokens. */
  cutOff?: { maxOutputTokens: number };
}): string {
  const done = r.report.applied.map((a) => `${a.path} (${a.kind})`);
  const already = r.report.already.map((a) => `${a.path} (lines ${a.startLine}-${a.endLine})`);
  const list = (items: string[]) => items.map((p) => `- ${clip(p, 2_500)}`).join('\n');
  return [
    r.cutOff ? cutOffNote(r.cutOff.maxOutputTokens) : '',
    done.length ? `Applied: ${done.join(', ')}. Those edits are in place now.` : '',
    already.length ? `Already in place, left as they are (do not send them again): ${already.join(', ')}.` : '',
    r.notApplied.length ? `These did not apply:\n${list(r.notApplied)}` : '',
    r.stillWrong.length ? `Still to fix:\n${list(r.stillWrong)}` : '',
    'Send corrected blocks for these only, quoting the current file contents exactly.',
  ]
    .filter(Boolean)
    .join('\n');
}

/** Why the answer ended early, and what to send: said instead of the half block's format error. */
function cutOffNote(limit: number): string {
  const low =
    limit < LOW_OUTPUT_TOKENS
      ? ` The task's budget leaves only ${limit} output tokens an answer, too few for large blocks.`
      : '';
  return (
    `Your answer was cut off at the output limit (${limit} tokens): resend the remaining blocks, smaller ` +
    `(a few lines of SEARCH each, one change per block).${low}`
  );
}

/** The paths among these that are files tree-sitter parses without an error now. */
async function parsingClean(dir: string, paths: string[]): Promise<Set<string>> {
  const clean = new Set<string>();
  const files = new ConfinedDir(dir, { exclude: ['.git'] });
  for (const path of new Set(paths)) {
    const text = checkEditPath(path).ok ? files.readText(path, { maxBytes: MAX_PARSE_BYTES }) : undefined;
    if (text !== undefined && (await syntaxErrors(path, text))?.length === 0) clean.add(path);
  }
  return clean;
}

/**
 * Syntax errors the answer brought into files that parsed clean before it (or that it created),
 * each with numbered lines around it: errors already in the file are not the model's to fix.
 */
async function brokenSyntax(dir: string, report: ApplyReport, cleanBefore: Set<string>): Promise<string[]> {
  const files = new ConfinedDir(dir, { exclude: ['.git'] });
  const out: string[] = [];
  for (const a of report.applied) {
    if (a.kind === 'deleted' || (a.kind === 'modified' && !cleanBefore.has(a.path))) continue;
    const text = files.readText(a.path, { maxBytes: MAX_PARSE_BYTES });
    const errors = text === undefined ? null : await syntaxErrors(a.path, text, 2);
    if (!errors?.length) continue;
    const lines = text!.split('\n');
    for (const e of errors) {
      out.push(
        `${a.path}: after your edit the file no longer parses: ${e.what} at ` +
          `${e.line === e.endLine ? `line ${e.line}` : `lines ${e.line}-${e.endLine}`}:\n` +
          numbered(lines, e.line - 5, Math.min(e.endLine + 1, e.line + 8)),
      );
    }
  }
  return out;
}

/** Lines [from, to) of a file, numbered: for pointing at an error, never for copying into SEARCH. */
function numbered(lines: string[], from: number, to: number): string {
  const start = Math.max(0, from);
  const stop = Math.min(lines.length, to);
  const width = String(stop).length;
  return lines
    .slice(start, stop)
    .map((l, i) => `${String(start + i + 1).padStart(width)}| ${l}`)
    .join('\n');
}
