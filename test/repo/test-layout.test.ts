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
/**
 * Folders of test/ that test the system as a whole or the project around the code, not one
 * folder of src/: each is a folder of the repository (web/, scripts/, packages/client as client/)
 * or of test/support/ (the doubles' own tests), or a whole-system kind (e2e, soak, repo-wide
 * checks, the command line).
 */
const NOT_A_SRC_FOLDER = [
  'cli',
  'client',
  'deploy',
  'e2e',
  'fake-github',
  'fake-gitlab',
  'repo',
  'scripted-model',
  'scripts',
  'soak',
  'support',
  'web',
];

describe('where test files live', () => {
  it('test/ mirrors src/: every other test folder is named for the src/ folder it tests', () => {
    const srcDirs = (dir: string, prefix: string): string[] =>
      readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .flatMap((e) => [`${prefix}${e.name}`, ...srcDirs(join(dir, e.name), `${prefix}${e.name}/`)]);
    const src = new Set(srcDirs(resolve(TEST_DIR, '..', 'src'), ''));
    const testDirs = new Set(
      testFiles(TEST_DIR)
        .map((f) => relative(TEST_DIR, f).split('/').slice(0, -1).join('/'))
        .filter((d) => d !== '' && !NOT_A_SRC_FOLDER.includes(d.split('/')[0]!)),
    );
    expect([...testDirs].filter((d) => !src.has(d)).sort()).toEqual([]);
  });
});

describe('how test files say where and whether they run', () => {
  it('no file picks its leg by skipping: name it *.test.ts (once), *.db.test.ts (each database) or *.postgres.test.ts', () => {
    expect(offending(/\.(runIf|skipIf)\([^)]*inject\(\s*'dbKind'/)).toEqual([]);
  });

  it('no test is skipped or left to do by a flag in committed code', () => {
    expect(offending(/\b(it|test|describe)\.(skip|todo)\b/)).toEqual([]);
  });
});
