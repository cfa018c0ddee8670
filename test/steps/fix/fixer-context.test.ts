import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { definitionsOfFiles } from '../../../src/locator/index.js';
import type { Insight } from '../../../src/step-contract/index.js';
import {
  MAX_FILES_CHARS,
  assembleFixerFiles,
  filesBudget,
  snapToDefinition,
} from '../../../src/steps/fix/fixer-context.js';
import { checkFits } from '../../../src/llm/context-window.js';
import { estimateTokens } from '../../../src/llm/usage.js';
import { fenced } from '../../../src/steps/prompt-parts.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'emend-fixer-context-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A Python module of `n` small functions, then a class whose `parse` method is the one to change. */
function longModule(n: number, tag: string): string {
  const helpers = Array.from({ length: n }, (_, i) => `def ${tag}_helper_${i}(x):\n    return x + ${i}\n\n\n`);
  const parse = [
    'class Parser:',
    '    def parse(self, raw):',
    '        """Split a raw header line."""',
    ...Array.from({ length: 30 }, (_, i) => `        step_${i} = raw  # step ${i} of the parse`),
    "        name, _, value = raw.partition(':')",
    '        return name.strip(), value.strip()',
    '',
    '    def other(self):',
    '        return 1',
    '',
  ];
  return `${helpers.join('')}${parse.join('\n')}`;
}

const insight = (file: string, relevance: Insight['relevance'], symbols: Insight['symbols'] = []): Insight => ({
  file,
  relevance,
  symbols,
  notes: '',
});

/** Each fence opened in a section is closed: fence lines come in pairs. */
function fencesClosed(section: string): boolean {
  return section.split('\n').filter((l) => /^```+$|^```+\w*$/.test(l)).length % 2 === 0;
}

async function assemble(paths: string[], insights: Insight[], budget: number) {
  const definitions = await definitionsOfFiles(dir, paths);
  return assembleFixerFiles({ dir, paths, insights, definitions, budget });
}

describe("the fixer's file section", () => {
  it('shows a long top-ranked file whole when it fits the budget', async () => {
    const source = longModule(250, 'a'); // over 1,000 lines: the old view showed only excerpts
    expect(source.split('\n').length).toBeGreaterThan(1_000);
    writeFileSync(join(dir, 'big.py'), source);
    const [section] = await assemble(['big.py'], [insight('big.py', 'high')], 120_000);
    expect(section).toBe(`## big.py\n${fenced(source)}`);
  });

  it("snaps the inspector's symbol to its definition and shows the full body, even from wrong lines", async () => {
    const source = longModule(600, 'b'); // about 20K characters: over the budget below
    writeFileSync(join(dir, 'top.py'), 'x = 1\n'.repeat(10));
    writeFileSync(join(dir, 'big.py'), source);
    const lines = source.split('\n');
    const start = lines.indexOf('    def parse(self, raw):') + 1;
    // The inspector named `parse` with lines that miss its end (off by a few, as models are).
    const sym = { name: 'Parser.parse', start_line: start + 2, end_line: start + 5, change: 'keep the value' };
    const sections = await assemble(['top.py', 'big.py'], [insight('big.py', 'low', [sym])], 12_000);
    const big = sections[1]!;
    expect(big).toMatch(/^## big\.py \(\d+ lines: outline and excerpts/);
    const body = lines.slice(start - 1, start + 33).join('\n');
    expect(big).toContain(body); // signature to the last line, verbatim
    expect(big).toContain("        name, _, value = raw.partition(':')");
    expect(big).not.toContain('return x + 20\n'); // far bodies are left out...
    expect(big).toContain('def b_helper_20(x):'); // ...their signatures are in the outline
    const defs = (await definitionsOfFiles(dir, ['big.py']))['big.py']!;
    expect(snapToDefinition(defs, { name: 'parse', start_line: 1, end_line: 1 })?.[2]).toBe(start); // by name
    expect(snapToDefinition(defs, { name: 'nothing', start_line: start + 9, end_line: start + 9 })?.[0]).toBe('parse');
  });

  it('cuts at a line boundary and closes every fence when the budget is short', async () => {
    const source = longModule(400, 'c');
    writeFileSync(join(dir, 'big.py'), source);
    const lines = new Set(source.split('\n'));
    const [section] = await assemble(['big.py'], [insight('big.py', 'high')], 6_000);
    expect(section!.length).toBeLessThanOrEqual(6_000);
    expect(section).toContain('(cut; it goes on to line');
    expect(fencesClosed(section!)).toBe(true);
    const inFences = section!.split(/^```+\w*$/m).filter((_, i) => i % 2 === 1);
    for (const block of inFences)
      for (const line of block.split('\n').filter(Boolean)) expect(lines.has(line) || line === '...').toBe(true);
  });

  it('spends the budget by rank: the first file whole, the next as outline and definitions; not evenly', async () => {
    const a = longModule(120, 'first');
    const b = longModule(120, 'second');
    writeFileSync(join(dir, 'a.py'), a);
    writeFileSync(join(dir, 'b.py'), b);
    const both = [insight('a.py', 'high'), insight('b.py', 'high')];
    const budget = Math.ceil(a.length * 1.8); // one whole file fits (WHOLE_SHARE), not two
    const [first, second] = await assemble(['a.py', 'b.py'], both, budget);
    expect(first).toBe(`## a.py\n${fenced(a)}`);
    expect(second).toMatch(/^## b\.py \(\d+ lines: outline and excerpts/);
    expect(first!.length + second!.length).toBeLessThanOrEqual(budget);
    // The other order: the other file first.
    const [again] = await assemble(['b.py', 'a.py'], both, budget);
    expect(again).toBe(`## b.py\n${fenced(b)}`);
  });

  it('keeps the later files: their named definitions survive a first file that would fill the budget', async () => {
    writeFileSync(join(dir, 'a.py'), longModule(300, 'a'));
    const b = longModule(300, 'b');
    writeFileSync(join(dir, 'b.py'), b);
    const start = b.split('\n').indexOf('    def parse(self, raw):') + 1;
    const sym = { name: 'parse', start_line: start, end_line: start + 33, change: '' };
    const [, second] = await assemble(
      ['a.py', 'b.py'],
      [insight('a.py', 'high'), insight('b.py', 'low', [sym])],
      12_000,
    );
    expect(second).toContain("        name, _, value = raw.partition(':')");
  });

  it('shows a link out of the checkout as a link, never its target', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'emend-outside-'));
    try {
      writeFileSync(join(outside, 'secret.py'), 'TOKEN = 1\n');
      symlinkSync(join(outside, 'secret.py'), join(dir, 'linked.py'));
      const [section] = await assemble(['linked.py'], [], 10_000);
      expect(section).toContain('outside the repository');
      expect(section).not.toContain('TOKEN');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("sizes the section from the model's window: every round still fits, at most MAX_FILES_CHARS", () => {
    const o = { contextTokens: 64_000, outputTokens: 12_000, rounds: 3, rest: 5_000 };
    const budget = filesBudget(o);
    expect(budget).toBeGreaterThan(50_000);
    // The third round resends the prompt with two answers and two messages; it must pass the client's check.
    const third = estimateTokens(o.rest + budget) + 2 * (12_000 + 4_000);
    expect(() => checkFits('fixer', 'm', { tokens: 64_000, source: 'configuration' }, third, 12_000)).not.toThrow();
    expect(filesBudget({ ...o, contextTokens: 1_000_000 })).toBe(MAX_FILES_CHARS);
    expect(filesBudget({ ...o, contextTokens: 8_192 })).toBe(0); // an 8K local model: nothing fits, the check says so
  });

  it('spends budget left at the end on the definitions of a partly shown file that match the request', async () => {
    const source = longModule(600, 'd');
    writeFileSync(join(dir, 'top.py'), 'x = 1\n');
    writeFileSync(join(dir, 'big.py'), source);
    const paths = ['top.py', 'big.py'];
    const definitions = await definitionsOfFiles(dir, paths);
    const insights = [insight('top.py', 'high')];
    const base = { dir, paths, insights, definitions, budget: 15_000 };
    const [, without] = assembleFixerFiles(base);
    const [, withRequest] = assembleFixerFiles({ ...base, request: 'Parser.other returns the wrong value' });
    expect(without).not.toContain('    def other(self):\n        return 1');
    expect(withRequest).toContain('    def other(self):\n        return 1');
    expect(withRequest!.length).toBeLessThanOrEqual(15_000);
  });

  it('fills what the ranked files leave with the fill files, in their order, whole or as outlines as they fit', async () => {
    writeFileSync(join(dir, 'README.md'), '# calc\n\nTiny helpers.\n');
    writeFileSync(join(dir, 'small.py'), 'def shout(s):\n    return s.upper()\n');
    const big = longModule(600, 'e'); // about 20K characters
    writeFileSync(join(dir, 'big.py'), big);
    writeFileSync(join(dir, 'last.py'), 'def last():\n    return 0\n');
    const paths = ['README.md'];
    const fill = ['big.py', 'small.py', 'last.py'];
    const definitions = await definitionsOfFiles(dir, [...paths, ...fill]);
    const base = { dir, paths, insights: [], definitions };
    // A budget for everything: each fill file whole, after the ranked one, in the fill's order.
    const all = assembleFixerFiles({ ...base, fill, budget: 120_000 });
    expect(all.map((s) => s.split('\n')[0])).toEqual(['## README.md', '## big.py', '## small.py', '## last.py']);
    expect(all[1]).toBe(`## big.py\n${fenced(big)}`);
    // Without the fill, the ranked file alone: the budget is not what limits it.
    expect(assembleFixerFiles({ ...base, budget: 120_000 })).toEqual(all.slice(0, 1));
    // A budget that holds the small files but not big.py whole: big.py as its outline, the others whole.
    const tight = assembleFixerFiles({ ...base, fill, budget: 8_000 });
    expect(tight.map((s) => s.split('\n')[0]!.split(' ')[1])).toEqual(['README.md', 'big.py', 'small.py', 'last.py']);
    expect(tight[1]).toMatch(/^## big\.py \(\d+ lines: outline and excerpts/);
    expect(tight[1]).toContain('def e_helper_0(x):');
    expect(tight[2]).toBe(`## small.py\n${fenced('def shout(s):\n    return s.upper()\n')}`);
    expect(tight.join('\n\n').length).toBeLessThanOrEqual(8_000);
    for (const section of tight) expect(fencesClosed(section)).toBe(true);
  });

  it('gives the fill only what the ranked files leave: their layout is the same with or without it', async () => {
    const a = longModule(300, 'a');
    writeFileSync(join(dir, 'a.py'), a);
    for (const n of [1, 2, 3, 4, 5, 6]) writeFileSync(join(dir, `f${n}.py`), longModule(300, `f${n}`));
    const fill = ['f1.py', 'f2.py', 'f3.py', 'f4.py', 'f5.py', 'f6.py'];
    const definitions = await definitionsOfFiles(dir, ['a.py', ...fill]);
    const base = { dir, paths: ['a.py'], insights: [insight('a.py', 'high')], definitions, budget: 40_000 };
    const alone = assembleFixerFiles(base);
    const filled = assembleFixerFiles({ ...base, fill });
    expect(filled[0]).toBe(alone[0]);
    expect(filled.length).toBeGreaterThan(1);
    // The fill's files in its order, within the budget, each fence closed.
    const order = filled.slice(1).map((s) => fill.findIndex((p) => s.startsWith(`## ${p}`)));
    expect(order).toEqual([...order].sort((x, y) => x - y));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect(filled.join('\n\n').length).toBeLessThanOrEqual(40_000);
    for (const section of filled) expect(fencesClosed(section)).toBe(true);
  });

  it('lays the files beyond the shortlist out last: however many, their outlines take no room from the fill', async () => {
    writeFileSync(join(dir, 'a.py'), longModule(100, 'a'));
    const fill = ['g1.py', 'g2.py'];
    for (const p of fill) writeFileSync(join(dir, p), longModule(700, p.slice(0, 2)));
    // As large as the fill's files and ranked after them: none is worth showing whole before them.
    const beyond = Array.from({ length: 40 }, (_, i) => `h${i}.py`);
    for (const p of beyond) writeFileSync(join(dir, p), longModule(700, p.replace('.py', '')));
    const definitions = await definitionsOfFiles(dir, ['a.py', ...fill, ...beyond]);
    const base = { dir, paths: ['a.py'], insights: [insight('a.py', 'high')], definitions, budget: 60_000, fill };
    const without = assembleFixerFiles(base);
    const withBeyond = assembleFixerFiles({ ...base, beyond });
    // The fill's files as they were: the forty files after them do not keep back room for their outlines.
    expect(withBeyond.slice(0, without.length)).toEqual(without);
    expect(without[1]).toBe(`## g1.py\n${fenced(longModule(700, 'g1'))}`);
    // Laid out as one list, they would: the fill's first file would get less.
    const asOne = assembleFixerFiles({ ...base, fill: [...fill, ...beyond] });
    expect(asOne[1]!.length).toBeLessThan(without[1]!.length);
    // What the fill leaves goes to them, in their order, within the budget.
    const after = withBeyond.slice(without.length).map((s) => beyond.findIndex((p) => s.startsWith(`## ${p}`)));
    expect(after.length).toBeGreaterThan(0);
    expect(after).toEqual([...after].sort((x, y) => x - y));
    expect(withBeyond.join('\n\n').length).toBeLessThanOrEqual(60_000);
  });

  it('spends what the layout leaves on the cheapest by size and rank: a small file ranked after a large one is shown whole first', async () => {
    writeFileSync(join(dir, 'top.py'), 'def main():\n    return 0\n');
    const big = longModule(1_500, 'big'); // about 60K characters, ranked second
    writeFileSync(join(dir, 'big.py'), big);
    const small = longModule(40, 'small'); // about 3K characters, ranked third, beyond the shortlist
    writeFileSync(join(dir, 'small.py'), small);
    const definitions = await definitionsOfFiles(dir, ['top.py', 'big.py', 'small.py']);
    const base = { dir, paths: ['top.py', 'big.py'], insights: [insight('top.py', 'high')], definitions };
    // Room for big.py whole, not for both: big.py stays its outline, small.py is whole.
    const budget = big.length + 1_000;
    const [, bigShown, smallShown] = assembleFixerFiles({ ...base, beyond: ['small.py'], budget });
    expect(bigShown).toMatch(/^## big\.py \(\d+ lines: outline and excerpts/);
    expect(smallShown).toBe(`## small.py\n${fenced(small)}`);
    // Without the small file, the room shows big.py whole: nothing cheaper wanted it.
    const [, alone] = assembleFixerFiles({ ...base, budget });
    expect(alone).toBe(`## big.py\n${fenced(big)}`);
    // Rank still weighs: of two files of one size with room for one, the better-ranked is whole.
    writeFileSync(join(dir, 'twin.py'), longModule(40, 'twin'));
    const both = await definitionsOfFiles(dir, ['top.py', 'small.py', 'twin.py']);
    const room = small.length + 2_000;
    const twins = assembleFixerFiles({
      dir,
      paths: ['top.py'],
      insights: [insight('top.py', 'high')],
      definitions: both,
      beyond: ['twin.py', 'small.py'],
      budget: room,
    });
    expect(twins[1]).toBe(`## twin.py\n${fenced(longModule(40, 'twin'))}`);
    expect(twins[2]).toMatch(/^## small\.py \(\d+ lines: outline/);
    for (const section of [...twins, bigShown!, smallShown!]) expect(fencesClosed(section)).toBe(true);
  });
});
