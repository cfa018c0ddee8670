// Which of a change's files are tests: the path rules the common runners collect by, one place
// for every ecosystem the validator detects (docs/validator.md, "Reproduction test").

const CODE = String.raw`(?:py|[cm]?[jt]sx?|go|java|kt|rs|rb|cs|php|ex|exs)`;

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
 * Files only tests read: the test directories' other files (helpers, fixtures, snapshots) and
 * pytest's conftest.py. They go into the baseline copy with the tests, since a new test often
 * needs a new fixture, but they are no tests of their own.
 */
const SUPPORT: RegExp[] = [/(^|\/)conftest\.py$/, /(^|\/)(tests?|__tests__|spec|testdata|__snapshots__)\//];

/** A file the repository's test runner would collect as a test file. */
export const isTestFile = (path: string): boolean => COLLECTED.some((re) => re.test(path));

/** A test file, or a file only the tests read. */
export const isTestPath = (path: string): boolean => isTestFile(path) || SUPPORT.some((re) => re.test(path));

/** What a runner said about a failing test, as far as the file it is in goes. */
export interface TestWhere {
  /** The file the runner named for the test (jest's `FAIL path`, node's `location:`). */
  file?: string;
  /** The innermost frame in the checkout. */
  frame?: { path: string };
}

/**
 * The change's test file a test id belongs to, or undefined: by the id (pytest's
 * `path::test`, vitest's `path > test`, node's failing file `path`, go's `package Test`,
 * Surefire's and Gradle's class), else by what the runner said of the failure (the file it
 * named, or a frame inside one of the files).
 */
export function testFileOf(id: string, files: readonly string[], where?: TestWhere): string | undefined {
  for (const file of files) {
    if (id === file || id.startsWith(`${file}::`) || id.startsWith(`${file} > `) || id.startsWith(`${file} › `))
      return file;
    if (file.endsWith('_test.go') && goPackageOf(id, file)) return file;
    if (/\.(java|kt)$/.test(file) && jvmClassOf(id, file)) return file;
  }
  if (where?.file && files.includes(where.file)) return where.file;
  if (where?.frame && files.includes(where.frame.path)) return where.frame.path;
  return undefined;
}

/** go test ids are `import/path TestName`: the package's path ends with the file's directory (not the root's). */
function goPackageOf(id: string, file: string): boolean {
  const pkg = /^(\S+) \S/.exec(id)?.[1];
  const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
  return pkg !== undefined && dir !== '' && (pkg === dir || pkg.endsWith(`/${dir}`));
}

/** Gradle's `Class > test` and Surefire's `com.x.Class.test`: the class names the file (`src/test/java/com/x/Class.java`). */
function jvmClassOf(id: string, file: string): boolean {
  const cls = id.includes(' > ') ? id.slice(0, id.indexOf(' > ')) : id.replace(/\.\w+$/, '');
  if (!/^[\w.$]+$/.test(cls)) return false;
  const path = `/${file.replace(/\.(java|kt)$/, '')}`;
  return path.endsWith(`/${cls.replaceAll('.', '/')}`);
}
