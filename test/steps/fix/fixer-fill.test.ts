import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILES_CHARS } from '../../../src/steps/fix/fixer-context.js';
import { CALC_REPO, GOOD_FIX, scriptCalcRun, stepOf } from '../../support/fix-script.js';
import { newAccount } from '../../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../../support/model-service.js';

// When the locator's re-rank keeps fewer files than the fixer's budget holds, the files it left out
// fill the rest of the budget in the deterministic ranking's order (src/steps/fix/locator.ts
// fixerFiles, src/steps/fix/fixer-context.ts). Driven through the real steps against the scripted
// model; checked on the fixer's request as the model server received it.

let svc: ModelService;

/** Four files; the bug is in calc/ops.py, and the re-rank below names only README.md. */
const FOUR_FILES: Record<string, string> = {
  'README.md': CALC_REPO['README.md']!,
  'calc/ops.py': CALC_REPO['calc/ops.py']!,
  'calc/text.py': CALC_REPO['calc/text.py']!,
  'tests/test_ops.py': CALC_REPO['tests/test_ops.py']!,
};

/** A module of `n` functions about adding, about 40 characters a line: large enough that 16 of them overflow any budget. */
function bigModule(tag: string, n: number): string {
  return Array.from(
    { length: n },
    (_, i) => `def ${tag}_add_${i}(a, b):\n    """Add a and b (${tag}, ${i})."""\n    return a + b + ${i}\n\n\n`,
  ).join('');
}

const BIG_FILES: Record<string, string> = {
  ...FOUR_FILES,
  ...Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`calc/adders_${i}.py`, bigModule(`m${i}`, 700)])),
};

/** The `## path` headings of the file section of a fixer request, in order. */
const headings = (text: string) =>
  fileSection(text)
    .split('\n')
    .filter((l) => l.startsWith('## '))
    .map((l) => l.slice(3).split(' ')[0]!);

/** The fixer's file section: from the start of its user message to the planner's advice. */
const fileSection = (text: string) => text.slice(0, text.indexOf('Advice from the planner'));

/** More files than the re-rank's shortlist of 15: the calc files and 24 small modules about adding. */
const MANY_FILES: Record<string, string> = {
  ...FOUR_FILES,
  ...Object.fromEntries(
    Array.from({ length: 24 }, (_, i) => [
      `calc/adding_${i}.py`,
      `def add_${i}(a, b):\n    """Adding with an offset of ${i}."""\n    return a + b + ${i}\n`,
    ]),
  ),
};

type Ranked = { path: string; score: number; reasons: string[] };

beforeAll(async () => {
  svc = await startModelService();
  svc.h.github.createRepo('acme', 'four', { files: FOUR_FILES });
  svc.h.github.createRepo('acme', 'big', { files: BIG_FILES });
  svc.h.github.createRepo('acme', 'many', { files: MANY_FILES });
});
afterAll(async () => {
  await svc?.close();
});

describe('the fixer is never shown less than its budget allows', { timeout: 180_000 }, () => {
  it('a re-rank naming README.md alone: the other files follow it, in the deterministic order, whole', async () => {
    const { h, model } = svc;
    const { fixerCalls } = scriptCalcRun(model, [GOOD_FIX], [{ path: 'README.md', reason: 'describes add()' }]);
    const { auth } = await newAccount(h, { plan: 'free' });
    const { byStep } = await runFixTask(h, auth, `${h.github.webUrl}/acme/four`, 'done');

    const locator = byStep('locator')[0]!.output as { files: Ranked[]; selected: string[]; reranked: boolean };
    expect(locator.reranked).toBe(true);
    expect(locator.selected).toEqual(['README.md']);
    // The files the re-rank left out, in the deterministic ranking's order: its scores, best first.
    const leftOut = locator.files.filter((f) => f.path !== 'README.md');
    expect(leftOut.map((f) => f.path).sort()).toEqual(['calc/ops.py', 'calc/text.py', 'tests/test_ops.py']);
    expect(leftOut.every((f) => f.reasons.includes('left out by the model'))).toBe(true);
    const scores = leftOut.map((f) => f.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));

    const user = fixerCalls().at(-1)!.messages[0]!.text;
    expect(headings(user)).toEqual(['README.md', ...leftOut.map((f) => f.path)]);
    // Each whole, as the budget easily allows.
    for (const path of Object.keys(FOUR_FILES)) expect(user).toContain(`## ${path}\n\`\`\`\n${FOUR_FILES[path]}`);
    // The task went through: the fixer could quote calc/ops.py, which the re-rank had left out.
    expect(byStep('fixer')[0]!.output.diff).toContain('+    return a + b');
  });

  it('a big repository: the fill stops at the budget, in order, every fence closed', async () => {
    const { h, model } = svc;
    const { fixerCalls } = scriptCalcRun(model, [GOOD_FIX], [{ path: 'calc/ops.py', reason: 'defines add()' }]);
    const { auth } = await newAccount(h, { plan: 'pro', credits: 5 });
    const { byStep } = await runFixTask(h, auth, `${h.github.webUrl}/acme/big`, 'done');

    const locator = byStep('locator')[0]!.output as { files: Ranked[]; selected: string[] };
    expect(locator.selected).toEqual(['calc/ops.py']);
    const order = locator.files.map((f) => f.path).filter((p) => p !== 'calc/ops.py');
    expect(order.length).toBeGreaterThan(10);

    const section = fileSection(fixerCalls().at(-1)!.messages[0]!.text);
    // The shortlist's files hold more than the budget: the section is filled up to it, not past it.
    const total = order.reduce((n, p) => n + (BIG_FILES[p]?.length ?? 0), 0);
    expect(total).toBeGreaterThan(MAX_FILES_CHARS);
    expect(section.length).toBeLessThanOrEqual(MAX_FILES_CHARS + 100);
    expect(section.length).toBeGreaterThan(MAX_FILES_CHARS * 0.8);
    const shown = headings(section);
    expect(shown[0]).toBe('calc/ops.py');
    // The files after it are the left-out ones in the deterministic order (some may not fit at all).
    const at = shown.slice(1).map((p) => order.indexOf(p));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect(at).toEqual([...at].sort((a, b) => a - b));
    expect(section.split('\n').filter((l) => /^```+\w*$/.test(l)).length % 2).toBe(0);
  });
});

describe("the fill reaches past the re-rank's shortlist, up to the plan's files", { timeout: 180_000 }, () => {
  const BEYOND = /^ranked beyond the shortlist of 15/;

  /** A fix run on MANY_FILES whose re-rank names calc/ops.py alone: the locator's output, the re-rank's and the fixer's prompts. */
  async function run(plan: 'free' | 'pro') {
    const { h, model } = svc;
    const { fixerCalls } = scriptCalcRun(model, [GOOD_FIX], [{ path: 'calc/ops.py', reason: 'defines add()' }]);
    const { auth } = await newAccount(h, { plan, credits: 5 });
    const { byStep } = await runFixTask(h, auth, `${h.github.webUrl}/acme/many`, 'done');
    const locator = byStep('locator')[0]!.output as { files: Ranked[]; selected: string[] };
    const rerank = model.calls.filter((c) => stepOf(c) === 'locator').at(-1)!.messages[0]!.text;
    return { locator, rerank, fixer: fixerCalls().at(-1)!.messages[0]!.text };
  }

  it('pro (20 files): the files ranked 16th to 20th follow the shortlist and reach the fixer', async () => {
    const { locator, rerank, fixer } = await run('pro');
    expect(locator.selected).toEqual(['calc/ops.py']);
    expect(locator.files).toHaveLength(20);
    const beyond = locator.files.slice(15);
    for (const f of beyond) expect(f.reasons.at(-1)).toMatch(BEYOND);
    // In the deterministic order (its scores, best first), none above a shortlisted file.
    const scores = beyond.map((f) => f.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(Math.min(...locator.files.slice(0, 15).map((f) => f.score))).toBeGreaterThanOrEqual(scores[0]!);
    // The model re-ranked the shortlist only: its prompt is as large as before.
    expect(rerank.split('\n').filter((l) => l.startsWith('## '))).toHaveLength(15);
    for (const f of beyond) expect(rerank).not.toContain(`## ${f.path}\n`);
    // The fixer is shown the selected file, then the 19 after it, those beyond the shortlist too, whole.
    expect(headings(fixer)).toEqual(locator.files.map((f) => f.path));
    for (const f of beyond) expect(fixer).toContain(`## ${f.path}\n\`\`\`\n${MANY_FILES[f.path]}`);
  });

  it('free (5 files): nothing beyond the shortlist is located, and the fixer is shown 5 files', async () => {
    const { locator, fixer } = await run('free');
    expect(locator.files).toHaveLength(15);
    expect(locator.files.some((f) => f.reasons.some((r) => BEYOND.test(r)))).toBe(false);
    expect(headings(fixer)).toEqual(locator.files.slice(0, 5).map((f) => f.path));
  });
});
