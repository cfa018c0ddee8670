import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyEdits } from '../../src/edits/index.js';
import { fuzzyFind } from '../../src/edits/fuzzy.js';
import { FUZZY_MIN, place, unnumbered } from '../../src/edits/match.js';

const FILE = ['def total(items):', '    s = 0', '    for i in items:', '        s += i', '    return s', ''];

describe('line-number prefixes copied from numbered excerpts', () => {
  it('are stripped when every SEARCH line carries one and the rest matches', () => {
    const got = place(
      FILE,
      [' 2|     s = 0', ' 3|     for i in items:'],
      [' 2|     s = 0.0', ' 3|     for i in items:'],
    );
    expect(got).toEqual({
      ok: true,
      start: 1,
      end: 3,
      replacement: ['    s = 0.0', '    for i in items:'],
      match: 'exact',
    });
  });

  it('are stripped from SEARCH even when REPLACE has none', () => {
    const got = place(FILE, ['5|     return s'], ['    return round(s, 2)']);
    expect(got).toEqual({ ok: true, start: 4, end: 5, replacement: ['    return round(s, 2)'], match: 'exact' });
  });

  it('are kept when only some lines carry one (the text is then not a copied excerpt)', () => {
    expect(unnumbered(['1| a', 'b'])).toBeUndefined();
    expect(unnumbered(['10| a', '11|', '12|  b'])).toEqual(['a', '', ' b']);
  });

  it('are kept when the file really holds the numbered text', () => {
    const table = ['1| one', '2| two'];
    expect(place(table, ['1| one'], ['1| uno'])).toEqual({
      ok: true,
      start: 0,
      end: 1,
      replacement: ['1| uno'],
      match: 'exact',
    });
  });
});

describe('an edit already applied', () => {
  it('is recognised when SEARCH is gone and REPLACE stands once where it was', () => {
    const after = FILE.map((l) => (l === '    return s' ? '    return round(s, 2)' : l));
    expect(place(after, ['    return s'], ['    return round(s, 2)'])).toEqual({ ok: 'already', start: 4, end: 5 });
  });

  it('is recognised when REPLACE grows SEARCH and the file holds all of REPLACE', () => {
    const grown = ['import os', 'import sys', '', 'x = 1'];
    expect(place(grown, ['import os'], ['import os', 'import sys'])).toEqual({ ok: 'already', start: 0, end: 2 });
  });

  it('is not claimed the first time a growing edit applies', () => {
    const got = place(['import os', '', 'x = 1'], ['import os'], ['import os', 'import sys']);
    expect(got).toMatchObject({ ok: true, start: 0, end: 1, match: 'exact' });
  });

  it('is not claimed when REPLACE appears in more than one place', () => {
    const twice = ['a = 1', 'b = 2', 'a = 1'];
    expect(place(twice, ['a = 0'], ['a = 1'])).toMatchObject({ ok: false });
  });

  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('is reported apart from applied and failed edits, and the file is left untouched', async () => {
    const root = mkdtempSync(join(tmpdir(), 'emend-already-'));
    dirs.push(root);
    writeFileSync(join(root, 'sum.py'), FILE.join('\n'));
    const edit = { kind: 'replace' as const, path: 'sum.py', search: '    return s\n', replace: '    return -s\n' };
    const first = await applyEdits(root, [edit]);
    const written = readFileSync(join(root, 'sum.py'), 'utf8');
    const second = await applyEdits(root, [edit]);
    expect(first.applied).toHaveLength(1);
    expect(second).toEqual({ applied: [], failed: [], already: [{ path: 'sum.py', startLine: 5, endLine: 5 }] });
    expect(readFileSync(join(root, 'sum.py'), 'utf8')).toBe(written);
  });
});

describe('a SEARCH that skips lines with "..."', () => {
  const body = Array.from({ length: 12 }, (_, i) => `    total_${i} = compute_something_long(value_${i}, factor)`);
  const search = [...body.slice(0, 5), '    ...', ...body.slice(6, 12)];

  it('is never matched fuzzily: REPLACE would drop the lines "..." stands for', () => {
    // Without the "..." rule this would be a fuzzy match: one short line of twelve differs.
    expect(fuzzyFind(body, search).best!.score).toBeGreaterThanOrEqual(FUZZY_MIN);
    const got = place(body, search, ['x']);
    expect(got).toEqual({
      ok: false,
      reason:
        'SEARCH skips lines with "..." (its line 6); SEARCH must quote every line it replaces: copy them all, ' +
        'or send two smaller blocks around the part left out.',
    });
  });

  it('still matches where the file really has the "..." line', () => {
    const stub = ['def g():', '    ...', ''];
    expect(place(stub, ['def g():', '    ...'], ['def g():', '    return 1'])).toMatchObject({
      ok: true,
      match: 'exact',
    });
  });
});
