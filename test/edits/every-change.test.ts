import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EDIT_FORMAT_INSTRUCTIONS, applyEdits, parseEdits } from '../../src/edits/index.js';
import { editsFromUnifiedDiff, formatEdits } from '../../src/edits/from-diff.js';

/*
 * Every change a unified diff can say (docs/edit-format.md, "From a unified diff"): a final newline
 * added or removed, a mode, a rename with or without content, an empty file. Each diff is made by
 * git itself from a real repository, then applied twice to copies of the base commit: by
 * `git apply`, and as the oracle does (converted, formatted as an answer, parsed, applied). The two
 * trees must be the same git tree, modes included.
 */

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'emend-every-change-'));
  dirs.push(d);
  return d;
};

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
  });

type Files = Record<string, string | { text: string; exec: true }>;

function write(root: string, files: Files): void {
  for (const [path, f] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), typeof f === 'string' ? f : f.text);
    chmodSync(join(root, path), typeof f === 'string' ? 0o644 : 0o755);
  }
}

/** A repository at `base`, and the diff git writes for the change `change` makes to it. */
function repoWithDiff(base: Files, change: (root: string) => void): { root: string; diff: string } {
  const root = tempDir();
  git(root, 'init', '-q');
  git(root, 'config', 'core.fileMode', 'true');
  write(root, base);
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', 'base');
  change(root);
  git(root, 'add', '-A');
  const diff = git(root, 'diff', '--cached', '-M', 'HEAD');
  git(root, 'reset', '-q', '--hard', 'HEAD');
  return { root, diff };
}

/** The tree id of a work tree's files and modes, as git records them. */
const treeOf = (root: string): string => {
  git(root, 'add', '-A');
  return git(root, 'write-tree').trim();
};

async function bothWays(base: Files, change: (root: string) => void) {
  const { root, diff } = repoWithDiff(base, change);
  const byGit = tempDir();
  cpSync(root, byGit, { recursive: true });
  execFileSync('git', ['apply', '-'], { cwd: byGit, input: diff });

  const byEdits = tempDir();
  cpSync(root, byEdits, { recursive: true });
  const converted = editsFromUnifiedDiff(diff, (p) => {
    const f = join(root, p);
    return existsSync(f) ? readFileSync(f, 'utf8') : undefined;
  });
  const answer = formatEdits(converted.edits);
  const parsed = parseEdits(answer);
  const report = await applyEdits(byEdits, parsed.edits);
  return { diff, converted, answer, parsed, report, git: treeOf(byGit), edits: treeOf(byEdits), byEdits };
}

const modeOf = (path: string): number => statSync(path).mode & 0o777;

describe('every change a unified diff can say', () => {
  it('removes and adds a final newline, and keeps a missing one through a hunk elsewhere', async () => {
    const lines = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join('\n');
    const r = await bothWays({ 'drop.txt': `a\nb\n`, 'add.txt': 'a\nb', 'keep.txt': lines }, (root) => {
      writeFileSync(join(root, 'drop.txt'), 'a\nB');
      writeFileSync(join(root, 'add.txt'), 'a\nb\n');
      writeFileSync(join(root, 'keep.txt'), lines.replace('line 2\n', 'line two\n').replace('line 12', 'line XII'));
    });
    expect(r.diff).toContain('\\ No newline at end of file');
    expect(r.converted.errors).toEqual([]);
    expect(r.answer).toContain('NO FINAL NEWLINE drop.txt');
    expect(r.answer).toMatch(/^FINAL NEWLINE add\.txt$/m);
    expect(r.answer).not.toContain('FINAL NEWLINE keep.txt');
    expect(r.report.failed).toEqual([]);
    expect(readFileSync(join(r.byEdits, 'drop.txt'), 'utf8')).toBe('a\nB');
    expect(readFileSync(join(r.byEdits, 'add.txt'), 'utf8')).toBe('a\nb\n');
    expect(r.edits).toBe(r.git);
  });

  it('changes a mode alone, and a mode with content', async () => {
    const r = await bothWays({ 'run.sh': 'echo hi\n', 'tool.sh': { text: 'echo a\n', exec: true } }, (root) => {
      chmodSync(join(root, 'run.sh'), 0o755);
      writeFileSync(join(root, 'tool.sh'), 'echo b\n');
      chmodSync(join(root, 'tool.sh'), 0o644);
    });
    expect(r.diff).toMatch(/old mode 100644\nnew mode 100755/);
    expect(r.converted.errors).toEqual([]);
    expect(r.answer).toContain('CHMOD +x run.sh');
    expect(r.answer).toContain('CHMOD -x tool.sh');
    expect(modeOf(join(r.byEdits, 'run.sh')) & 0o111).not.toBe(0);
    expect(modeOf(join(r.byEdits, 'tool.sh')) & 0o111).toBe(0);
    expect(r.edits).toBe(r.git);
  });

  it('renames a file whole, with its content changed, and an executable one keeping its mode', async () => {
    const body = Array.from({ length: 10 }, (_, i) => `row ${i}`).join('\n');
    const r = await bothWays(
      { 'a.txt': `${body}\n`, 'b.txt': `${body} b\n`, 'bin/go': { text: 'echo go\n', exec: true } },
      (root) => {
        mkdirSync(join(root, 'docs'));
        execFileSync('mv', ['a.txt', 'docs/a.md'], { cwd: root });
        rmSync(join(root, 'b.txt'));
        writeFileSync(join(root, 'c.txt'), `${body.replace('row 5', 'ROW 5')} b\n`);
        execFileSync('mv', ['bin/go', 'bin/run'], { cwd: root });
      },
    );
    expect(r.diff).toContain('similarity index 100%');
    expect(r.diff).toMatch(/similarity index [1-9]\d%\nrename from b\.txt\nrename to c\.txt/);
    expect(r.converted.errors).toEqual([]);
    expect(r.answer).toContain('RENAME a.txt docs/a.md');
    expect(r.answer).toContain('RENAME bin/go bin/run');
    expect(r.report.failed).toEqual([]);
    expect(r.report.applied).toContainEqual({ path: 'docs/a.md', kind: 'renamed', match: 'exact', from: 'a.txt' });
    expect(modeOf(join(r.byEdits, 'bin/run')) & 0o111).not.toBe(0);
    expect(r.edits).toBe(r.git);
  });

  it('creates an empty file, a file without a final newline and an executable one, and deletes an empty file', async () => {
    const r = await bothWays({ 'keep.txt': 'k\n' }, (root) => {
      writeFileSync(join(root, 'empty'), '');
      writeFileSync(join(root, 'short.txt'), 'no end');
      writeFileSync(join(root, 'new.sh'), 'echo new\n');
      chmodSync(join(root, 'new.sh'), 0o755);
    });
    expect(r.diff).toMatch(/diff --git a\/empty b\/empty\nnew file mode 100644\nindex 0+\.\.e69de29\n(?!---)/);
    expect(r.converted.errors).toEqual([]);
    expect(r.report.failed).toEqual([]);
    expect(readFileSync(join(r.byEdits, 'empty'), 'utf8')).toBe('');
    expect(readFileSync(join(r.byEdits, 'short.txt'), 'utf8')).toBe('no end');
    expect(r.edits).toBe(r.git);

    // Git's header alone says an empty file goes: no ---/+++ lines name it.
    const gone = await bothWays({ 'old-empty': '', 'keep.txt': 'k\n' }, (root) => rmSync(join(root, 'old-empty')));
    expect(gone.diff).toMatch(/deleted file mode 100644\nindex e69de29\.\.0+\n?$/);
    expect(gone.report.failed).toEqual([]);
    expect(existsSync(join(gone.byEdits, 'old-empty'))).toBe(false);
    expect(gone.edits).toBe(gone.git);
  });
});

describe('the directives in an answer', () => {
  it('reads RENAME, CHMOD and [NO] FINAL NEWLINE lines, quoted paths included, and leaves sentences as commentary', () => {
    const r = parseEdits(
      [
        'RENAME old/a.txt new/a.txt',
        'RENAME `my file.txt` -> `your file.txt`',
        'CHMOD +x bin/run',
        'CHMOD -x `a b.sh`',
        'NO FINAL NEWLINE data.csv',
        'FINAL NEWLINE data.txt',
        'Rename the module later.',
        'RENAME just-one-path',
      ].join('\n'),
    );
    expect(r.edits).toEqual([
      { kind: 'rename', path: 'old/a.txt', to: 'new/a.txt' },
      { kind: 'rename', path: 'my file.txt', to: 'your file.txt' },
      { kind: 'mode', path: 'bin/run', executable: true },
      { kind: 'mode', path: 'a b.sh', executable: false },
      { kind: 'final-newline', path: 'data.csv', present: false },
      { kind: 'final-newline', path: 'data.txt', present: true },
    ]);
    expect(r.notes).toBe('Rename the module later.\nRENAME just-one-path');
    // The model is told each of them.
    for (const s of ['RENAME old/path.ext new/path.ext', 'NO FINAL NEWLINE', 'CHMOD +x'])
      expect(EDIT_FORMAT_INSTRUCTIONS).toContain(s);
  });

  it('refuses to rename, chmod or change the final newline outside the checkout, into .git, through a link out or over a file', async () => {
    const root = tempDir();
    const outside = tempDir();
    writeFileSync(join(outside, 'key'), 'secret\n');
    chmodSync(join(outside, 'key'), 0o600);
    mkdirSync(join(root, '.git'));
    write(root, { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    symlinkSync(join(outside, 'key'), join(root, 'link'));
    symlinkSync(outside, join(root, 'out'));
    const r = await applyEdits(root, [
      { kind: 'rename', path: 'a.txt', to: '../escaped.txt' },
      { kind: 'rename', path: 'a.txt', to: '.git/hooks/pre-commit' },
      { kind: 'rename', path: 'a.txt', to: 'out/moved' },
      { kind: 'rename', path: 'a.txt', to: 'b.txt' },
      { kind: 'rename', path: 'link', to: 'inside' },
      { kind: 'mode', path: 'link', executable: true },
      { kind: 'final-newline', path: 'link', present: false },
      { kind: 'mode', path: 'missing.sh', executable: true },
    ]);
    expect(r.applied).toEqual([]);
    expect(r.failed.map((f) => [f.path, f.reason.split(';')[0]!.split(',')[0]])).toEqual([
      ['a.txt', 'cannot rename to ../escaped.txt: ".." is refused in paths'],
      ['a.txt', 'cannot rename to .git/hooks/pre-commit: paths inside .git are refused'],
      ['a.txt', expect.stringMatching(/^cannot rename to out\/moved: out is a symlink -> /)],
      ['a.txt', 'cannot rename to b.txt: it exists'],
      ['link', expect.stringMatching(/^link is a symlink -> /)],
      ['link', expect.stringMatching(/^link is a symlink -> /)],
      ['link', expect.stringMatching(/^link is a symlink -> /)],
      ['missing.sh', 'cannot change the mode: no such file'],
    ]);
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('a\n');
    expect(readFileSync(join(outside, 'key'), 'utf8')).toBe('secret\n');
    expect(modeOf(join(outside, 'key'))).toBe(0o600);
    expect(existsSync(join(outside, 'moved'))).toBe(false);
  });
});
