import { describe, expect, it } from 'vitest';
import { isTestFile, isTestOrSupportFile } from '../../src/text/test-paths.js';
import { testFileOf } from '../../src/validator/test-files.js';

describe("the change's test files", () => {
  it('are the files a runner collects, in every ecosystem the validator detects', () => {
    const collected = [
      'test_calc.py',
      'tests/test_calc.py',
      'pkg/calc_test.py',
      'src/calc.test.ts',
      'web/src/App.spec.tsx',
      'lib/__tests__/calc.js',
      'test/calc.js',
      'tests/unit/calc.mjs',
      'test-calc.js',
      'calc/calc_test.go',
      'tests/integration.rs',
      'spec/calc_spec.rb',
      'src/test/java/com/acme/CalcTest.java',
      'src/test/kotlin/com/acme/CalcTests.kt',
      'Calc.Tests/CalcTests.cs',
    ];
    const notCollected = [
      'calc.py',
      'src/calc.ts',
      'testing.py',
      'contest.py',
      'tests/helpers.py',
      'tests/conftest.py',
      'test/helpers/make.js',
      'test/fixtures/input.js',
      'test/setup.ts',
      'src/main/java/com/acme/Calc.java',
      'src/lib.rs',
      'docs/testing.md',
    ];
    expect(collected.filter((p) => !isTestFile(p))).toEqual([]);
    expect(notCollected.filter(isTestFile)).toEqual([]);
  });

  it('take along the files only tests read (conftest.py, fixtures, helpers, snapshots), but not the code', () => {
    for (const p of ['conftest.py', 'tests/conftest.py', 'test/fixtures/input.js', 'tests/data/a.json'])
      expect(isTestOrSupportFile(p), p).toBe(true);
    for (const p of ['__snapshots__/a.snap', 'testdata/x.txt', 'spec/support/h.rb'])
      expect(isTestOrSupportFile(p), p).toBe(true);
    for (const p of ['calc.py', 'src/calc.ts', 'package.json', 'pytest.ini', 'latest/x.py'])
      expect(isTestOrSupportFile(p), p).toBe(false);
  });

  it("tell a test's file from its id, else from the file or frame its failure names", () => {
    const files = ['tests/test_mean.py', 'test/avg.test.ts', 'stats/mean_test.go', 'src/test/java/a/MeanTest.java'];
    expect(testFileOf('tests/test_mean.py::test_halves', files)).toBe('tests/test_mean.py');
    expect(testFileOf('tests/test_mean.py::TestMean::test_halves', files)).toBe('tests/test_mean.py');
    expect(testFileOf('test/avg.test.ts > avg > halves', files)).toBe('test/avg.test.ts');
    expect(testFileOf('tests/test_mean.py', files)).toBe('tests/test_mean.py');
    expect(testFileOf('example.com/m/stats TestMean', files)).toBe('stats/mean_test.go');
    expect(testFileOf('a.MeanTest.halves', files)).toBe('src/test/java/a/MeanTest.java');
    expect(testFileOf('MeanTest > halves', files)).toBe('src/test/java/a/MeanTest.java');
    // node's TAP names a test without its file: its failure's location names it
    expect(testFileOf('halves', files)).toBeUndefined();
    expect(testFileOf('halves', files, { file: 'test/avg.test.ts' })).toBe('test/avg.test.ts');
    expect(testFileOf('halves', files, { frame: { path: 'test/avg.test.ts' } })).toBe('test/avg.test.ts');
    // a test of another file, even one failing in the code, is not the change's
    expect(testFileOf('tests/test_stats.py::test_mean', files, { frame: { path: 'stats.py' } })).toBeUndefined();
    expect(testFileOf('example.com/m/other TestMean', files)).toBeUndefined();
    expect(testFileOf('b.MeanTest.halves', files)).toBeUndefined();
  });
});
