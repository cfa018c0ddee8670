import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type RankedFile, definitionsOfFiles } from '../../../src/locator/index.js';
import { applyRanking, fixerFiles, shortlistText } from '../../../src/steps/fix/locator.js';

const ranked = (path: string): RankedFile => ({ path, score: 1, reasons: ['bm25'] });

describe('the locator re-rank', () => {
  it('shows each file the definitions whose names match the request, not its first ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emend-rerank-'));
    try {
      const early = Array.from({ length: 30 }, (_, i) => `def unrelated_${i}(x):\n    return x\n\n`).join('');
      writeFileSync(
        join(dir, 'fixtures.py'),
        `${early}def show_fixture_scope(fixturedef):\n    return fixturedef.scope\n\n\nclass Other:\n    pass\n`,
      );
      const definitions = await definitionsOfFiles(dir, ['fixtures.py']);
      const text = shortlistText([ranked('fixtures.py')], definitions, 'Display the fixture scope');
      expect(text).toMatch(/\d+-\d+ function show_fixture_scope/); // defined after the first 14
      expect(text).toContain('unrelated_0'); // the rest of the 14 are the first ones, in file order
      expect(text).not.toContain('unrelated_20');
      expect(text).toContain('(14 of 32 definitions)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('drops the files the model leaves out from the selection, keeping them listed with the reason', () => {
    const files = ['a.py', 'b.py', 'c.py'].map(ranked);
    const got = applyRanking(files, [
      { path: 'c.py', reason: 'holds the bug' },
      { path: 'nope.py', reason: 'not shortlisted' },
      { path: 'a.py', reason: 'calls it' },
    ])!;
    expect(got.kept).toBe(2);
    expect(got.files.map((f) => f.path)).toEqual(['c.py', 'a.py', 'b.py']);
    expect(got.files[2]!.reasons).toContain('left out by the model');
    expect(got.files[0]!.reasons).toContain('model: holds the bug');
    // Leaving out everything is not an answer: the deterministic order stands.
    expect(applyRanking(files, [{ path: 'nope.py', reason: '' }])).toBeUndefined();
  });

  it("hands the fixer the files the re-rank left out, in the deterministic order, up to the plan's files", () => {
    const files = ['a.py', 'b.py', 'c.py', 'd.py', 'e.py'].map(ranked);
    const { files: order, kept } = applyRanking(files, [{ path: 'd.py', reason: 'holds the bug' }])!;
    const output = {
      files: order.map((f) => ({ path: f.path, score: f.score, reasons: f.reasons })),
      selected: order.slice(0, kept).map((f) => f.path),
    };
    expect(fixerFiles(output, 20)).toEqual({ selected: ['d.py'], fill: ['a.py', 'b.py', 'c.py', 'e.py'] });
    expect(fixerFiles(output, 3)).toEqual({ selected: ['d.py'], fill: ['a.py', 'b.py'] });
    // Without a re-rank the selection is the ranking's first files: nothing to fill under the limit.
    const plain = { files: files.map((f) => ({ ...f })), selected: ['a.py', 'b.py', 'c.py'] };
    expect(fixerFiles(plain, 3)).toEqual({ selected: ['a.py', 'b.py', 'c.py'], fill: [] });
    expect(fixerFiles(undefined, 5)).toEqual({ selected: [], fill: [] });
  });
});
