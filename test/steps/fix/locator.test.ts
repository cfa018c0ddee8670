import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type RankedFile, definitionsOfFiles } from '../../../src/locator/index.js';
import {
  applyRanking,
  fixerFiles,
  handOff,
  locatedCount,
  shortlistOf,
  shortlistText,
} from '../../../src/steps/fix/locator.js';

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
    expect(fixerFiles(output, 20)).toEqual({ selected: ['d.py'], fill: ['a.py', 'b.py', 'c.py', 'e.py'], beyond: [] });
    expect(fixerFiles(output, 3)).toEqual({ selected: ['d.py'], fill: ['a.py', 'b.py'], beyond: [] });
    // Without a re-rank the selection is the ranking's first files: nothing to fill under the limit.
    const plain = { files: files.map((f) => ({ ...f })), selected: ['a.py', 'b.py', 'c.py'] };
    expect(fixerFiles(plain, 3)).toEqual({ selected: ['a.py', 'b.py', 'c.py'], fill: [], beyond: [] });
    expect(fixerFiles(undefined, 5)).toEqual({ selected: [], fill: [], beyond: [] });
  });

  it("counts a retry's failing-test files against the plan's files, once, and never fills with them", () => {
    const files = ['a.py', 'b.py', 'c.py', 'd.py', 'e.py'].map(ranked);
    const { files: order, kept } = applyRanking(files, [{ path: 'd.py', reason: 'holds the bug' }])!;
    const output = { files: order, selected: order.slice(0, kept).map((f) => f.path) };
    expect(fixerFiles(output, 3, ['tests/test_d.py'])).toEqual({
      selected: ['d.py', 'tests/test_d.py'],
      fill: ['a.py'],
      beyond: [],
    });
    // A failing test's file that the locator also ranked is selected, not filled again.
    expect(fixerFiles(output, 3, ['a.py'])).toEqual({ selected: ['d.py', 'a.py'], fill: ['b.py'], beyond: [] });
    // The selection may pass the limit with them; the fill then takes nothing.
    expect(fixerFiles(output, 2, ['x.py', 'y.py'])).toEqual({
      selected: ['d.py', 'x.py', 'y.py'],
      fill: [],
      beyond: [],
    });
  });
});

describe("the locator's files beyond the re-rank's shortlist", () => {
  const ranking = Array.from({ length: 60 }, (_, i) => ranked(`f${String(i + 1).padStart(2, '0')}.py`));
  const paths = (files: RankedFile[]) => files.map((f) => f.path);

  it("hands on the plan's files when they are more than the shortlist, after the re-ranked ones, never selected", () => {
    expect([5, 15, 20, 50].map(locatedCount)).toEqual([15, 15, 20, 50]);
    const located = ranking.slice(0, locatedCount(20));
    const shortlist = shortlistOf(located);
    expect(paths(shortlist)).toEqual(paths(ranking.slice(0, 15)));
    const reranked = applyRanking(shortlist, [{ path: 'f07.py', reason: 'holds the bug' }])!;
    const out = handOff(located, reranked, 20);
    expect(out.selected).toEqual(['f07.py']);
    expect(paths(out.files)).toEqual([
      'f07.py',
      ...paths(shortlist).filter((p) => p !== 'f07.py'),
      ...paths(ranking.slice(15, 20)),
    ]);
    // The files beyond the shortlist say why they are there and were not selected.
    for (const f of out.files.slice(15))
      expect(f.reasons.at(-1)).toMatch(/^ranked beyond the shortlist of 15: not re-ranked or selected/);
    for (const f of out.files.slice(0, 15)) expect(f.reasons.join(' ')).not.toContain('beyond the shortlist');
    // The fixer's fill reaches them after the shortlist's left-out files, up to the plan's files in all.
    const handed = fixerFiles(out, 20);
    expect(handed.fill).toEqual(paths(shortlist).filter((p) => p !== 'f07.py'));
    expect(handed.beyond).toEqual(paths(ranking.slice(15, 20)));
    // A retry's failing-test files count against the plan's files: the last ones beyond are dropped first.
    expect(fixerFiles(out, 20, ['tests/test_a.py', 'tests/test_b.py']).beyond).toEqual(paths(ranking.slice(15, 18)));
  });

  it('without a re-rank, selects the shortlist as before and fills from beyond it', () => {
    const out = handOff(ranking.slice(0, locatedCount(50)), undefined, 50);
    expect(out.selected).toEqual(paths(ranking.slice(0, 15)));
    expect(paths(out.files)).toEqual(paths(ranking.slice(0, 50)));
    expect(fixerFiles(out, 50)).toEqual({ selected: out.selected, fill: [], beyond: paths(ranking.slice(15, 50)) });
  });

  it('with a plan of 5 files, nothing beyond the shortlist is located and nothing beyond 5 is handed on', () => {
    const out = handOff(ranking.slice(0, locatedCount(5)), undefined, 5);
    expect(out.files).toHaveLength(15);
    expect(out.selected).toEqual(paths(ranking.slice(0, 5)));
    expect(fixerFiles(out, 5)).toEqual({ selected: paths(ranking.slice(0, 5)), fill: [], beyond: [] });
    const reranked = handOff(
      ranking.slice(0, 15),
      applyRanking(ranking.slice(0, 15), [{ path: 'f09.py', reason: '' }]),
      5,
    );
    expect(fixerFiles(reranked, 5)).toEqual({
      selected: ['f09.py'],
      fill: ['f01.py', 'f02.py', 'f03.py', 'f04.py'],
      beyond: [],
    });
  });
});
