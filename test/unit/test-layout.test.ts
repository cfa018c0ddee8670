import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const TEST_DIR = resolve(import.meta.dirname, '..');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'fixtures' || e.name === 'node_modules' ? [] : testFiles(path);
    return e.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Lines of committed test files that match `pattern`, as "file:line: text". */
function offending(pattern: RegExp): string[] {
  return testFiles(TEST_DIR).flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (pattern.test(line) ? [`test/${relative(TEST_DIR, file)}:${i + 1}: ${line.trim()}`] : [])),
  );
}

// What keeps skips rare and visible (docs/operations.md, "CI and set-up"): a file's leg is in
// its name, and a missing requirement is decided in test/support/requirements.ts.
describe('how test files say where and whether they run', () => {
  it(
    'no file picks its leg by skipping: name it *.pglite.test.ts or *.postgres.test.ts (or put it under ' +
      'test/unit/)',
    () => {
      expect(offending(/\.(runIf|skipIf)\([^)]*inject\(\s*'dbKind'/)).toEqual([]);
    },
  );

  it('no test is skipped or left to do by a flag in committed code', () => {
    expect(offending(/\b(it|test|describe)\.(skip|todo)\b/)).toEqual([]);
  });
});
