import { describe, expect, it } from 'vitest';
import { testedFiles } from '../../src/locator/tested-by.js';

describe('a source file and its test file', () => {
  it('pairs a test with the source of its name, less the marks that make it a test', () => {
    const paths = [
      'lib/features/grid-snapping/behavior/LayoutConnectionBehavior.js', // 0
      'test/spec/features/grid-snapping/behavior/LayoutConnectionBehaviorSpec.js', // 1
      'requests/adapters.py', // 2
      'tests/test_adapters.py', // 3
      'src/parser.ts', // 4
      'src/parser.test.ts', // 5
      'src/lexer.js', // 6
      'test/lexer-spec.js', // 7
    ];
    expect([...testedFiles(paths).entries()].sort((a, b) => a[0] - b[0])).toEqual([
      [1, 0],
      [3, 2],
      [5, 4],
      [7, 6],
    ]);
  });

  it('takes the source sharing the most directories, and none where two share as many', () => {
    const paths = [
      'src/oscar/apps/basket/utils.py', // 0
      'src/oscar/apps/offer/utils.py', // 1
      'tests/integration/basket/test_utils.py', // 2
      'tests/test_utils.py', // 3
      'src/a/index.js', // 4
      'src/b/index.js', // 5
      'test/index.test.js', // 6
    ];
    const found = testedFiles(paths);
    expect(found.get(2)).toBe(0);
    expect(found.has(3)).toBe(false);
    expect(found.has(6)).toBe(false);
  });

  it('a test named for nothing in the repository, or no test at all, pairs with nothing', () => {
    expect(testedFiles(['src/a.js', 'test/b.test.js', 'src/c.js']).size).toBe(0);
    // A source file named like a test's mark is no test.
    expect(testedFiles(['src/spec.js', 'src/testing.js']).size).toBe(0);
  });
});
