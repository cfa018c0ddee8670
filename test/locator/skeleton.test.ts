import { describe, expect, it } from 'vitest';
import { fileSkeleton, sliceLines } from '../../src/locator/skeleton.js';

const PY = `import os


class Session(object):
    """A session."""

    def __init__(self):
        self.headers = {}
        self.hooks = {}

    def send(self, request, **kwargs):
        adapter = self.get_adapter(request.url)
        return adapter.send(request, **kwargs)


def session():
    return Session()
`;

const TS = `import { x } from './x.js';

export interface Options {
  top?: number;
}

export class Ranker {
  private readonly weights = new Map<string, number>();

  rank(files: string[],
       options: Options): string[] {
    return files.slice(0, options.top);
  }
}

export function main(): void {
  new Ranker().rank([], {});
}
`;

describe('file skeletons', () => {
  it('Python: signatures with line numbers, bodies elided, symbols with line ranges', async () => {
    const out = await fileSkeleton('requests/sessions.py', PY);
    expect(out.language).toBe('python');
    expect(out.symbols).toEqual([
      { name: 'Session', kind: 'class', startLine: 4, endLine: 13 },
      { name: '__init__', kind: 'method', startLine: 7, endLine: 9 },
      { name: 'send', kind: 'method', startLine: 11, endLine: 13 },
      { name: 'session', kind: 'function', startLine: 16, endLine: 17 },
    ]);
    expect(out.skeleton).toBe(
      [
        '   1| import os',
        '   4| class Session(object):',
        '   5|     """A session."""',
        '   7|     def __init__(self):',
        '    |         ...',
        '  11|     def send(self, request, **kwargs):',
        '    |         ...',
        '  16| def session():',
        '  17|     return Session()',
      ].join('\n'),
    );
  });

  it('TypeScript: multi-line signatures kept whole', async () => {
    const out = await fileSkeleton('src/rank.ts', TS);
    expect(out.language).toBe('typescript');
    expect(out.symbols.map((s) => `${s.kind} ${s.name} ${s.startLine}-${s.endLine}`)).toEqual([
      'interface Options 3-5',
      'class Ranker 7-14',
      'method rank 10-13',
      'function main 16-18',
    ]);
    expect(out.skeleton).toContain(
      '  10|   rank(files: string[],\n  11|        options: Options): string[] {\n    |     ...',
    );
    expect(out.skeleton).toContain('  16| export function main(): void {');
    expect(out.skeleton).not.toContain('options.top');
  });

  it('falls back to regular expressions and indentation for a language without a grammar', async () => {
    const kt =
      'package shop\n\nimport x.y\n\nclass Cart {\n    fun total(): Int {\n        return items.sum()\n    }\n}\n';
    const out = await fileSkeleton('Cart.kt', kt);
    expect(out.language).toBe('kotlin');
    expect(out.symbols).toEqual([
      { name: 'Cart', kind: 'class', startLine: 5, endLine: 9 },
      { name: 'total', kind: 'method', startLine: 6, endLine: 8 },
    ]);
    expect(out.skeleton).toContain('   5| class Cart {\n   6|     fun total(): Int {\n    |         ...');
    expect((await fileSkeleton('notes.txt', 'just text\n')).language).toBeNull();
  });

  it('sliceLines numbers the lines it shows, clamped to the file', () => {
    expect(sliceLines(PY, 11, 12)).toBe(
      '  11|     def send(self, request, **kwargs):\n  12|         adapter = self.get_adapter(request.url)',
    );
    expect(sliceLines('a\nb\n', 0, 99)).toBe('   1| a\n   2| b\n   3|');
  });
});
