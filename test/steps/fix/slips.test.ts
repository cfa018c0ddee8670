import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { roundMessage, takeAnswer } from '../../../src/steps/fix/edit-rounds.js';

/*
 * The replay corpus of edit slips real models make (issue 15). Each case under fixtures/slips/ is
 * a repository before the answer (before/), the model's answer (answer.md), how the answer ended
 * (case.json: finishReason, maxOutputTokens; default a complete answer), and what must come of
 * it: the files after (after/) and, when the answer left something to do, the exact round-2
 * message (round2.md). No round2.md means the answer must need no second round.
 *
 * The cases mostly make the same change to the same small repository, so a repository that
 * several cases start or end with is kept once under fixtures/slip-trees/ and named in case.json
 * ("before", "after") in place of the case's own folder.
 */
const CORPUS = join(import.meta.dirname, 'fixtures', 'slips');
const SHARED_TREES = join(import.meta.dirname, 'fixtures', 'slip-trees');
const cases = readdirSync(CORPUS).sort();
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface CaseMeta {
  finishReason?: string;
  maxOutputTokens?: number;
  before?: string;
  after?: string;
}

/** A case's repository before or after the answer: its own folder, else the shared tree its case.json names. */
function treeOf(at: string, meta: CaseMeta, which: 'before' | 'after'): string {
  const own = join(at, which);
  if (existsSync(own)) return own;
  const shared = meta[which];
  if (shared === undefined) throw new Error(`${at}: no ${which}/ and no "${which}" in case.json`);
  return join(SHARED_TREES, shared);
}

function tree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else out[relative(root, path)] = readFileSync(path, 'utf8');
    }
  };
  walk(root);
  return out;
}

describe('the replay corpus of edit slips', () => {
  it('holds a case for each slip real models are known to make', () => {
    for (const slip of [
      'bold-path',
      'backticked-path',
      'elision',
      'line-number-prefixes',
      'already-applied',
      'cut-off',
    ])
      expect(cases).toContain(slip);
  });

  it.each(cases)('%s: parse, apply and the round-2 message', async (name) => {
    const at = join(CORPUS, name);
    const dir = mkdtempSync(join(tmpdir(), `emend-slip-${name}-`));
    dirs.push(dir);
    const meta: CaseMeta = existsSync(join(at, 'case.json'))
      ? JSON.parse(readFileSync(join(at, 'case.json'), 'utf8'))
      : {};
    cpSync(treeOf(at, meta, 'before'), dir, { recursive: true });
    const end = { finishReason: meta.finishReason ?? 'stop', maxOutputTokens: meta.maxOutputTokens ?? 12_000 };
    const taken = await takeAnswer(dir, readFileSync(join(at, 'answer.md'), 'utf8'), end, { syntaxCheck: true });
    const needsRound2 = taken.notApplied.length > 0 || taken.syntax.length > 0 || taken.cutOff !== undefined;
    const expected = join(at, 'round2.md');
    if (existsSync(expected)) {
      expect(needsRound2).toBe(true);
      expect(roundMessage({ ...taken, stillWrong: taken.syntax })).toBe(readFileSync(expected, 'utf8').trimEnd());
    } else {
      expect(taken.notApplied).toEqual([]);
      expect(needsRound2).toBe(false);
    }
    expect(tree(dir)).toEqual(tree(treeOf(at, meta, 'after')));
  });
});
