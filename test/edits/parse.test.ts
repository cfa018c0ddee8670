import { describe, expect, it } from 'vitest';
import { EDIT_FORMAT_INSTRUCTIONS, parseEdits } from '../../src/edits/index.js';

const F = '```';

describe('parsing the edit format', () => {
  it('reads fenced blocks for several files, commentary becoming notes', () => {
    const answer = [
      'The discount was applied twice.',
      '',
      'shop/pricing.py',
      F,
      '<<<<<<< SEARCH',
      'def apply_discount(total, percent):',
      '    return total - total * percent / 50',
      '=======',
      'def apply_discount(total, percent):',
      '    return total - total * percent / 100',
      '>>>>>>> REPLACE',
      F,
      '',
      'tests/test_pricing.py',
      F,
      '<<<<<<< SEARCH',
      '=======',
      'def test_it():',
      '    pass',
      '>>>>>>> REPLACE',
      F,
      '',
      'That should do it.',
    ].join('\n');
    const r = parseEdits(answer);
    expect(r.errors).toEqual([]);
    expect(r.edits).toEqual([
      {
        kind: 'replace',
        path: 'shop/pricing.py',
        search: 'def apply_discount(total, percent):\n    return total - total * percent / 50\n',
        replace: 'def apply_discount(total, percent):\n    return total - total * percent / 100\n',
      },
      { kind: 'replace', path: 'tests/test_pricing.py', search: '', replace: 'def test_it():\n    pass\n' },
    ]);
    expect(r.notes).toBe('The discount was applied twice.\n\nThat should do it.');
  });

  it('reads unfenced blocks, several per file, and blocks sharing one fence', () => {
    const answer = [
      'a.py',
      '<<<<<<< SEARCH',
      'x = 1',
      '=======',
      'x = 2',
      '>>>>>>> REPLACE',
      '<<<<<<< SEARCH',
      'y = 1',
      '=======',
      'y = 2',
      '>>>>>>> REPLACE',
      '',
      F,
      'b.py',
      '<<<<<<< SEARCH',
      'z = 1',
      '=======',
      '>>>>>>> REPLACE',
      '',
      'c.py',
      '<<<<<<< SEARCH',
      'w = 1',
      '=======',
      'w = 3',
      '>>>>>>> REPLACE',
      F,
    ].join('\n');
    const r = parseEdits(answer);
    expect(r.errors).toEqual([]);
    expect(r.edits.map((e) => [e.path, e.kind === 'replace' && e.search, e.kind === 'replace' && e.replace])).toEqual([
      ['a.py', 'x = 1\n', 'x = 2\n'],
      ['a.py', 'y = 1\n', 'y = 2\n'],
      ['b.py', 'z = 1\n', ''],
      ['c.py', 'w = 1\n', 'w = 3\n'],
    ]);
    expect(r.notes).toBe('');
  });

  it(
    'tolerates decorated paths, language tags, odd marker lengths, trailing spaces, CRLF and a missing closing ' +
      'fence',
    () => {
      const block = (header: string, fence: string, n: number) =>
        [
          header,
          fence,
          `${'<'.repeat(n)} SEARCH  `,
          'old',
          `${'='.repeat(n)}\t`,
          'new',
          `${'>'.repeat(n)} REPLACE `,
        ].join('\r\n');
      const answer = [
        block('`src/a.ts`', '```typescript', 7),
        '```',
        block('File: src/b.ts', '```ts', 5),
        '```',
        block('# src/c.ts', '~~~', 9),
        '~~~',
        block('**`src/d.ts`**:', '```', 8),
        '',
        'Closing fence forgotten above.',
      ].join('\r\n');
      const r = parseEdits(answer);
      expect(r.errors).toEqual([]);
      expect(r.edits).toEqual(
        ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d.ts'].map((path) => ({
          kind: 'replace',
          path,
          search: 'old\n',
          replace: 'new\n',
        })),
      );
      expect(r.notes).toBe('Closing fence forgotten above.');
    },
  );

  it('reads DELETE lines, and leaves sentences starting with Delete alone', () => {
    const r = parseEdits(
      'Remove the old module.\nDELETE old/mod.py\nDELETE `docs/old notes.md`\nDelete the cache by hand.\n',
    );
    expect(r.edits).toEqual([
      { kind: 'delete', path: 'old/mod.py' },
      { kind: 'delete', path: 'docs/old notes.md' },
    ]);
    expect(r.notes).toBe('Remove the old module.\nDelete the cache by hand.');
  });

  it('reports an unterminated block with its path and line, and still parses the next block', () => {
    const answer = [
      'lib/x.py',
      '<<<<<<< SEARCH',
      'a = 1',
      '=======',
      'a = 2',
      '',
      'lib/y.py',
      '<<<<<<< SEARCH',
      'b = 1',
      '=======',
      'b = 2',
      '>>>>>>> REPLACE',
    ].join('\n');
    const r = parseEdits(answer);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/line 2: unterminated block for lib\/x\.py/);
    expect(r.edits).toEqual([{ kind: 'replace', path: 'lib/y.py', search: 'b = 1\n', replace: 'b = 2\n' }]);
  });

  it('reports a block with no divider, a block with no path, and a stray REPLACE', () => {
    const r = parseEdits(
      [
        'Here is my change:',
        '<<<<<<< SEARCH',
        'a',
        '=======',
        'b',
        '>>>>>>> REPLACE',
        'x.py',
        '<<<<<<< SEARCH',
        'a',
        '>>>>>>> REPLACE',
        '>>>>>>> REPLACE',
      ].join('\n'),
    );
    expect(r.edits).toEqual([]);
    expect(r.errors).toEqual([
      expect.stringMatching(/^line 2: the block has no file path/),
      expect.stringMatching(/^line 8: unterminated block for x\.py: the "=======" line/),
      expect.stringMatching(/^line 11: a ">>>>>>> REPLACE" line with no/),
    ]);
    expect(r.notes).toBe('Here is my change:');
  });

  it('treats a SEARCH of blank lines as empty and keeps blank lines inside REPLACE', () => {
    const r = parseEdits(['new.txt', '<<<<<<< SEARCH', '', '=======', 'one', '', 'two', '>>>>>>> REPLACE'].join('\n'));
    expect(r.edits).toEqual([{ kind: 'replace', path: 'new.txt', search: '', replace: 'one\n\ntwo\n' }]);
  });

  it('picks the canonical divider when the content has underline-like lines', () => {
    const r = parseEdits(
      ['README.rst', '<<<<<<< SEARCH', 'Title', '=====', '=======', 'Title!', '=====', '>>>>>>> REPLACE'].join('\n'),
    );
    expect(r.edits).toEqual([
      { kind: 'replace', path: 'README.rst', search: 'Title\n=====\n', replace: 'Title!\n=====\n' },
    ]);
  });

  it('has instructions for the model that show the markers and the DELETE line', () => {
    for (const s of ['<<<<<<< SEARCH', '=======', '>>>>>>> REPLACE', 'DELETE path/to/file.ext'])
      expect(EDIT_FORMAT_INSTRUCTIONS).toContain(s);
    const example = parseEdits(EDIT_FORMAT_INSTRUCTIONS);
    expect(example.errors).toEqual([]);
    expect(example.edits[0]).toMatchObject({ kind: 'replace', path: 'path/to/file.ext' });
  });
});
