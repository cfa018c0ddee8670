import { describe, expect, it } from 'vitest';
import { nameWords, titleNamedDirectories, titleNamedFiles } from '../../src/locator/title-names.js';

describe("files named with the title's words", () => {
  it('splits a name at camelCase, kebab- and snake-case, and drops a plural', () => {
    expect(nameWords('lib/features/modeling/behavior/SubProcessStartEventBehavior.js')).toEqual([
      'sub',
      'process',
      'start',
      'event',
      'behavior',
    ]);
    expect(nameWords('src/rules/no-unused-vars.js')).toEqual(['unused', 'var']);
    expect(nameWords('pkg/label_utils.py')).toEqual(['label', 'util']);
  });

  it('finds the file whose telling words are all in the title; a word many files share tells nothing', () => {
    const behaviors = Array.from({ length: 12 }, (_, k) => `lib/behavior/Other${'ABCDEFGHIJKL'[k]}xyzBehavior.js`);
    const paths = [
      'lib/behavior/SubProcessStartEventBehavior.js',
      'lib/behavior/SubProcessPlaneBehavior.js',
      'lib/replace/ReplaceOptions.js',
      'lib/util/EventUtil.js',
      ...behaviors,
    ];
    const found = titleNamedFiles(
      paths,
      'Morphing a call activity to an expanded sub-process should add a start event',
    );
    // `behavior` is in 14 of 16 names: the rest of the name decides.
    expect([...found.entries()]).toEqual([[0, ['sub', 'process', 'start', 'event']]]);
    // "plane" is not in the title; "event" alone is one word, too few; nothing of "replace options".
    expect(found.has(1)).toBe(false);
    expect(found.has(3)).toBe(false);
  });

  it('a name of one telling word is left to the file-name rule', () => {
    const paths = ['lib/Modeler.js', 'lib/Viewer.js', 'lib/NavigatedViewer.js'];
    expect(titleNamedFiles(paths, 'The modeler breaks in the viewer').size).toBe(0);
    expect([...titleNamedFiles(paths, 'Navigated viewer scrolls wrong').keys()]).toEqual([2]);
  });

  it("finds the files of a directory named with the title's words, and only that directory's", () => {
    const paths = [
      'lib/linter/code-path-analysis/code-path-state.js',
      'lib/linter/code-path-analysis/fork-context.js',
      'lib/linter/code-path-analysis/nested/deeper.js',
      'lib/linter/linter.js',
      'lib/rules/no-unreachable.js',
      'lib/source-code/token-store/cursor.js',
    ];
    const found = titleNamedDirectories(paths, 'Code path analysis for (a && b) ?? c');
    expect([...found.entries()]).toEqual([
      // The words as both sides compare them (nameWords): a final `s` off.
      [0, ['code', 'path', 'analysi']],
      [1, ['code', 'path', 'analysi']],
    ]);
    // One telling word ("linter") is too few; a directory of the title's words only in part is none.
    expect(titleNamedDirectories(paths, 'The linter crashes').size).toBe(0);
    expect(titleNamedDirectories(paths, 'Code path is wrong').size).toBe(0);
  });
});
