// Which test file of a change a test belongs to. What a test file is lives in one place for the
// locator and the validator both: src/text/test-paths.ts (docs/validator.md, "Reproduction test").

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
