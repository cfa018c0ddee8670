import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { parsePatch } from 'diff';
import { afterAll, describe, expect, it } from 'vitest';
import { applyEdits, parseEdits } from '../../src/edits/index.js';
import { editsFromUnifiedDiff, formatEdits } from '../../src/edits/from-diff.js';

/*
 * The converter is proved the way the oracle uses it: the diff turned into an answer in the
 * fixer's format, that answer read by the real parser and applied by the real applier, and the
 * result compared file by file with what `git apply` makes of the same diff.
 */

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'emend-from-diff-'));
  dirs.push(d);
  return d;
};

function writeTree(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

function readTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out[relative(root, p)] = readFileSync(p, 'utf8');
    }
  };
  walk(root);
  return out;
}

/** The tree `git apply` makes and the tree the converted answer makes, from the same files. */
async function bothWays(files: Record<string, string>, diff: string) {
  const byGit = tempDir();
  writeTree(byGit, files);
  writeFileSync(join(byGit, '.the.patch'), diff);
  execFileSync('git', ['apply', '--whitespace=nowarn', '.the.patch'], { cwd: byGit });
  rmSync(join(byGit, '.the.patch'));

  const byEdits = tempDir();
  writeTree(byEdits, files);
  const converted = editsFromUnifiedDiff(diff, (p) => files[p]);
  const answer = formatEdits(converted.edits);
  const parsed = parseEdits(answer);
  const report = await applyEdits(byEdits, parsed.edits);
  return { git: readTree(byGit), edits: readTree(byEdits), converted, parsed, report };
}

/**
 * The files a patch's hunks need, made up: each hunk's old lines at its old line numbers, every
 * other line a filler no hunk quotes. With `echo`, each hunk's old lines appear a second time
 * after the file's end, so the converter must widen SEARCH to the lines around to be unique.
 */
function madeUpFiles(diff: string, echo: boolean): Record<string, string> {
  const files: Record<string, string> = {};
  for (const p of parsePatch(diff)) {
    const path = p.oldFileName?.replace(/^a\//, '');
    if (!path || path === '/dev/null') continue;
    const lines: string[] = [];
    const copies: string[] = [];
    for (const h of p.hunks) {
      const old = h.lines.filter((l) => l[0] === ' ' || l[0] === '-').map((l) => l.slice(1));
      while (lines.length < h.oldStart - 1) lines.push(`filler ${path} ${lines.length + 1}`);
      lines.push(...old);
      copies.push(`filler between copies ${copies.length}`, ...old);
    }
    for (let i = 0; i < 5; i++) lines.push(`filler ${path} end ${i}`);
    files[path] = `${[...lines, ...(echo ? copies : [])].join('\n')}\n`;
  }
  return files;
}

const patches = readFileSync(join(import.meta.dirname, 'fixtures/swe-lite-eval-patches.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as { instance_id: string; patch: string });

describe('unified diff → search/replace edits', () => {
  it('reproduces every gold patch of swe-lite-eval exactly, with its context unique and repeated', async () => {
    expect(patches).toHaveLength(41);
    for (const { instance_id, patch } of patches) {
      for (const echo of [false, true]) {
        const r = await bothWays(madeUpFiles(patch, echo), patch);
        expect(r.converted.errors, instance_id).toEqual([]);
        expect(r.parsed.errors, instance_id).toEqual([]);
        expect(r.parsed.edits, instance_id).toEqual(r.converted.edits);
        expect(r.report.failed, instance_id).toEqual([]);
        expect(
          r.report.applied.every((a) => a.match === 'exact' || a.match === 'new'),
          instance_id,
        ).toBe(true);
        expect(r.edits, `${instance_id}${echo ? ' (repeated context)' : ''}`).toEqual(r.git);
      }
    }
  });

  it('widens a hunk whose context repeats and starts on a blank line until it is unique', async () => {
    const body = ['def a():', '    return 1', '', 'def b():', '    return 1', ''];
    const files = { 'm.py': `${body.join('\n')}\n` };
    const diff = [
      '--- a/m.py',
      '+++ b/m.py',
      '@@ -4,3 +4,3 @@',
      ' def b():',
      '-    return 1',
      '+    return 2',
      ' ',
    ].join('\n');
    const r = await bothWays(files, `${diff}\n`);
    expect(r.edits).toEqual(r.git);
    expect(r.git['m.py']).toContain('    return 2');
    const [edit] = r.converted.edits;
    // `    return 1` alone is in the file twice; the block quotes `def b():` and ends on text.
    expect(edit).toMatchObject({
      kind: 'replace',
      search: 'def b():\n    return 1\n',
      replace: 'def b():\n    return 2\n',
    });
  });

  it('creates, deletes and renames files as the format says', async () => {
    const files = { 'old.txt': 'one\ntwo\nthree\n', 'gone.txt': 'bye\n' };
    const diff = [
      'diff --git a/new.txt b/new.txt',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/new.txt',
      '@@ -0,0 +1,2 @@',
      '+hello',
      '+```',
      'diff --git a/gone.txt b/gone.txt',
      'deleted file mode 100644',
      '--- a/gone.txt',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-bye',
      'diff --git a/old.txt b/moved.txt',
      'similarity index 70%',
      'rename from old.txt',
      'rename to moved.txt',
      '--- a/old.txt',
      '+++ b/moved.txt',
      '@@ -1,3 +1,3 @@',
      ' one',
      '-two',
      '+TWO',
      ' three',
    ].join('\n');
    const r = await bothWays(files, `${diff}\n`);
    expect(r.converted.errors).toEqual([]);
    expect(r.edits).toEqual(r.git);
    expect(r.edits).toEqual({ 'new.txt': 'hello\n```\n', 'moved.txt': 'one\nTWO\nthree\n' });
    // The new file's content holds a fence: the answer's fence is longer, so the parser keeps it.
    expect(formatEdits(r.converted.edits)).toContain('````\n<<<<<<< SEARCH');
  });

  it('says what it cannot convert, naming the file', () => {
    const link = ['diff --git a/x b/x', 'new file mode 120000', '--- /dev/null', '+++ b/x', '@@ -0,0 +1 @@', '+y'];
    expect(editsFromUnifiedDiff(`${link.join('\n')}\n\\ No newline at end of file\n`, () => undefined).errors).toEqual([
      'x: the diff makes a symlink, which the edit format cannot say',
    ]);
    const missing = ['--- a/y.txt', '+++ b/y.txt', '@@ -1 +1 @@', '-a', '+b'].join('\n');
    expect(editsFromUnifiedDiff(`${missing}\n`, () => undefined).errors).toEqual([
      'y.txt: the diff changes it but the file does not exist',
    ]);
    const stale = ['--- a/z.txt', '+++ b/z.txt', '@@ -1 +1 @@', '-a', '+b'].join('\n');
    expect(editsFromUnifiedDiff(`${stale}\n`, () => 'q\n').errors).toEqual([
      'z.txt: the lines of hunk @@ -1 @@ are not in the file',
    ]);
  });
});
