// What a test file is, in one place: the locator demotes these files in its ranking, the validator
// takes them from the change into the baseline copy. One rule, so the two cannot disagree
// (docs/decisions.md, "Issue 43: one test-file rule, and names that mean one thing").

const CODE = '(?:py|[cm]?[jt]sx?|go|java|kt|rs|rb|cs|php|ex|exs)';

/**
 * Files a runner collects as tests, by name or place:
 * - Python (pytest, unittest): `test_*.py`, `*_test.py`;
 * - JavaScript and TypeScript: `*.test.*`, `*.spec.*`, `test-*.js`, anything in `__tests__/`,
 *   code under `test/` or `tests/` (node --test and mocha collect it) that is not a helper;
 * - Go `*_test.go`; Rust integration tests `tests/*.rs`; Ruby `*_spec.rb`, `*_test.rb`;
 * - Java and Kotlin under `src/test/`: `*Test`, `*Tests`, `*IT`; C#: `*Test(s).cs`.
 */
const COLLECTED: RegExp[] = [
  /(^|\/)test_[^/]*\.py$/,
  /(^|\/)[^/]*_test\.(py|go|rb|exs)$/,
  new RegExp(String.raw`(^|/)[^/]+\.(test|spec)\.${CODE}$`),
  /(^|\/)test-[^/]*\.[cm]?[jt]s$/,
  new RegExp(String.raw`(^|/)__tests__/.+\.${CODE}$`),
  /(^|\/)tests?\/(?!(.*\/)?(helpers?|fixtures?|support|utils?|setup)([./]|$)).*\.[cm]?[jt]sx?$/,
  /(^|\/)tests\/[^/]+\.rs$/,
  /(^|\/)[^/]*_spec\.rb$/,
  /(^|\/)src\/test\/.+(Test|Tests|IT)\.(java|kt)$/,
  /(^|\/)[^/]*Tests?\.cs$/,
];

/**
 * Files only tests read: the test directories' other files (helpers, fixtures, mocks, snapshots),
 * pytest's conftest.py, and test-named files no runner collects by default (`*_tests.py`,
 * `*_tests.go`, Rust `*_test(s).rs` modules, a Java or Kotlin `*Test` outside `src/test/`).
 * They go into the baseline copy with the tests, since a new test often needs a new fixture,
 * but they are no tests of their own.
 */
const SUPPORT: RegExp[] = [
  /(^|\/)conftest\.py$/,
  /(^|\/)(tests?|__tests__|__mocks__|__snapshots__|specs?|testing|testdata)\//,
  /_tests\.(py|go)$/,
  /_tests?\.rs$/,
  /Tests?\.(java|kt)$/,
];

/** A file the repository's test runner would collect as a test file. */
export const isTestFile = (path: string): boolean => COLLECTED.some((re) => re.test(path));

/** A file only the tests read, and no test file itself (a fixture, a helper, conftest.py). */
export const isTestSupportFile = (path: string): boolean => !isTestFile(path) && SUPPORT.some((re) => re.test(path));

/** A test file, or a file only the tests read: what the locator demotes and the validator copies. */
export const isTestOrSupportFile = (path: string): boolean => isTestFile(path) || SUPPORT.some((re) => re.test(path));
