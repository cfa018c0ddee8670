import { afterAll, describe, expect, it } from 'vitest';
import { locate } from '../../src/locator/index.js';
import { isTestFile, isTestOrSupportFile, isTestSupportFile } from '../../src/text/test-paths.js';
import { changeTests } from '../../src/validator/reproduction.js';
import { type Files, fixtureRepo, removeFixtureRepos } from '../support/fixture-repos.js';

// What a test file is (src/text/test-paths.ts): one rule, which the locator's ranking and the
// validator's reproduction test both follow, so they cannot disagree about a path.

/** Paths across ecosystems: a test file a runner collects, a file only tests read, or code. */
const TABLE: [path: string, kind: 'test' | 'support' | 'code'][] = [
  ['tests/test_calc.py', 'test'],
  ['pkg/calc_test.py', 'test'],
  ['tests/conftest.py', 'support'],
  ['tests/helpers.py', 'support'],
  ['pkg/calc_tests.py', 'support'],
  ['numpy/testing/utils.py', 'support'],
  ['pkg/calc.py', 'code'],
  ['testing.py', 'code'],
  ['src/calc.test.ts', 'test'],
  ['web/src/App.spec.tsx', 'test'],
  ['lib/__tests__/calc.js', 'test'],
  ['test-calc.js', 'test'],
  ['test/calc.js', 'test'],
  ['test/fixtures/input.js', 'support'],
  ['lib/__mocks__/fs.js', 'support'],
  ['specs/calc.js', 'support'],
  ['src/calc.ts', 'code'],
  ['src/latest/calc.ts', 'code'],
  ['calc/calc_test.go', 'test'],
  ['calc/calc_tests.go', 'support'],
  ['calc/testdata/input.txt', 'support'],
  ['calc/calc.go', 'code'],
  ['tests/integration.rs', 'test'],
  ['src/calc_test.rs', 'support'],
  ['src/lib.rs', 'code'],
  ['spec/calc_spec.rb', 'test'],
  ['test/calc_test.rb', 'test'],
  ['lib/calc.rb', 'code'],
  ['src/test/java/com/acme/CalcTest.java', 'test'],
  ['src/androidTest/java/com/acme/CalcTest.java', 'support'],
  ['src/main/java/com/acme/Calc.java', 'code'],
  ['Calc.Tests/CalcTests.cs', 'test'],
  ['Calc/Calc.cs', 'code'],
];

describe('what a test file is', () => {
  afterAll(() => removeFixtureRepos());

  it('sorts paths across ecosystems into test files, files only tests read, and code', () => {
    const kind = (p: string) => (isTestFile(p) ? 'test' : isTestSupportFile(p) ? 'support' : 'code');
    expect(TABLE.map(([p]) => [p, kind(p)])).toEqual(TABLE);
    expect(TABLE.filter(([p, k]) => isTestOrSupportFile(p) !== (k !== 'code'))).toEqual([]);
  });

  it('is the same for the locator (which demotes them) and the validator (which takes them along)', async () => {
    const files: Files = Object.fromEntries(TABLE.map(([p]) => [p, 'widget total widget\n']));
    const repo = fixtureRepo({ 'README.md': '# calc\n' }, files);
    const { copied, tests } = await changeTests({ dir: repo.dir }, repo.base);
    const ranked = (await locate(repo.dir, 'The widget total is wrong', { top: 100 })).files;
    const demoted = ranked.filter((f) => f.reasons.some((r) => r.startsWith('test file, demoted'))).map((f) => f.path);
    // Every path of the table the locator reads (it skips no source file here) is ranked.
    expect(ranked.map((f) => f.path).sort()).toEqual(TABLE.map(([p]) => p).sort());
    const expected = TABLE.filter(([, k]) => k !== 'code').map(([p]) => p);
    expect(demoted.sort()).toEqual([...expected].sort());
    expect([...copied].sort()).toEqual([...expected].sort());
    expect([...tests].sort()).toEqual(
      TABLE.filter(([, k]) => k === 'test')
        .map(([p]) => p)
        .sort(),
    );
  });
});
