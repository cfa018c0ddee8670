import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfinedDir, ConfinedPathError, describePath } from '../../src/checkout/confined-fs.js';

const SECRET = 'confined-fs-secret-4f1d9c';
const OUTSIDE_MARKER = 'outside-dir-marker-77ab';

// No database: runs once, on the PGlite leg (a plain *.test.ts).
describe('confined-fs: files of an untrusted tree, never followed out of it', () => {
  let base: string;
  let root: string;
  let dir: ConfinedDir;

  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'emend-confined-'));
    root = join(base, 'data', 'work', 'task', 'tree');
    mkdirSync(join(root, 'docs'), { recursive: true });
    writeFileSync(join(base, 'data', 'secret.key'), SECRET);
    mkdirSync(join(base, 'outside'));
    writeFileSync(join(base, 'outside', 'marker.txt'), OUTSIDE_MARKER);
    writeFileSync(join(root, 'real.md'), 'inside text\n');
    writeFileSync(join(root, 'docs', 'guide.md'), 'guide\n');
    writeFileSync(join(root, '.git'), 'gitdir: /elsewhere\n');
    symlinkSync('real.md', join(root, 'inside-link.md'));
    symlinkSync('inside-link.md', join(root, 'inside-chain.md'));
    symlinkSync('docs', join(root, 'docs-link'));
    symlinkSync('../../../secret.key', join(root, 'README.md'));
    symlinkSync(join(base, 'data', 'secret.key'), join(root, 'abs-secret'));
    symlinkSync('/etc/passwd', join(root, 'passwd'));
    symlinkSync('/proc/self/environ', join(root, 'environ'));
    symlinkSync(join(base, 'outside'), join(root, 'outdir'));
    symlinkSync('docs/hop2', join(root, 'hop1'));
    symlinkSync('../README.md', join(root, 'docs', 'hop2'));
    symlinkSync('/nonexistent/file', join(root, 'dangling-out'));
    symlinkSync('not-yet.md', join(root, 'dangling-in'));
    symlinkSync('.git', join(root, 'git-link'));
    symlinkSync('loop-b', join(root, 'loop-a'));
    symlinkSync('loop-a', join(root, 'loop-b'));
    execFileSync('mkfifo', [join(root, 'pipe')]);
    dir = new ConfinedDir(root, { exclude: ['.git'] });
  });
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it('reads regular files, and links that stay inside (also chains and directory links)', () => {
    expect(dir.readText('real.md')).toBe('inside text\n');
    expect(dir.readText('inside-link.md')).toBe('inside text\n');
    expect(dir.readText('inside-chain.md')).toBe('inside text\n');
    expect(dir.readText('docs-link/guide.md')).toBe('guide\n');
    expect(dir.info('docs-link')).toEqual({ kind: 'dir' });
  });

  it('refuses ".." and absolute paths before touching the disk', () => {
    expect(dir.info('../../../secret.key')).toEqual({ kind: 'invalid', reason: '".." is refused in paths' });
    expect(dir.info('docs/../../outside/marker.txt').kind).toBe('invalid');
    expect(dir.info(join(base, 'data', 'secret.key'))).toEqual({
      kind: 'invalid',
      reason: 'absolute paths are refused',
    });
    expect(dir.info('a\0b').kind).toBe('invalid');
  });

  it('never follows a link out: relative, absolute, /etc/passwd, /proc, a directory, a chain', () => {
    const cases: [string, string, string][] = [
      ['README.md', 'README.md', '../../../secret.key'],
      ['abs-secret', 'abs-secret', join(base, 'data', 'secret.key')],
      ['passwd', 'passwd', '/etc/passwd'],
      ['environ', 'environ', '/proc/self/environ'],
      ['outdir/marker.txt', 'outdir', join(base, 'outside')],
      ['hop1', 'hop1', 'docs/hop2'],
      ['docs/hop2', 'docs/hop2', '../README.md'],
      ['dangling-out', 'dangling-out', '/nonexistent/file'],
    ];
    for (const [path, link, target] of cases) {
      expect(dir.info(path), path).toEqual({ kind: 'outside', link, target });
      const read = dir.read(path);
      expect(read.ok, path).toBe(false);
      expect(dir.readText(path)).toBeUndefined();
    }
    expect(describePath('README.md', dir.info('README.md'))).toBe(
      'README.md is a symlink -> ../../../secret.key, which leads outside the repository; it is not followed',
    );
  });

  it('treats the excluded .git as outside, also through a link', () => {
    expect(dir.info('.git')).toEqual({ kind: 'outside', into: '.git' });
    expect(dir.info('.GIT')).toEqual({ kind: 'outside', into: '.GIT' });
    expect(dir.info('git-link')).toEqual({ kind: 'outside', link: 'git-link', target: '.git', into: '.git' });
  });

  it('reports a FIFO without blocking on it, a loop and a dangling link inside as unusable', () => {
    expect(dir.info('pipe')).toEqual({ kind: 'special', what: 'fifo' });
    expect(dir.read('pipe')).toEqual({ ok: false, info: { kind: 'special', what: 'fifo' } });
    expect(() => dir.write('pipe', 'x')).toThrow(/not a regular file \(a fifo\)/);
    expect(dir.info('loop-a')).toEqual({ kind: 'invalid', reason: 'a loop of symlinks' });
    expect(dir.info('dangling-in')).toEqual({
      kind: 'invalid',
      reason: 'dangling-in is a symlink to a missing target',
    });
    expect(dir.info('nothing-here')).toEqual({ kind: 'missing' });
  });

  it('takes a backslash or a drive-like prefix as part of a file name, as Linux does', () => {
    const d = new ConfinedDir(mkdtempSync(join(base, 'names-')));
    writeFileSync(join(d.root, 'a\\b.py'), 'backslash\n');
    writeFileSync(join(d.root, 'C:x.py'), 'colon\n');
    expect(d.readText('a\\b.py')).toBe('backslash\n');
    expect(d.readText('C:x.py')).toBe('colon\n');
    expect(d.walkFiles()).toEqual(['C:x.py', 'a\\b.py']);
  });

  it('caps the size it reads', () => {
    expect(dir.read('real.md', { maxBytes: 4 })).toEqual({ ok: false, info: { kind: 'too-large', size: 12 } });
    expect(dir.read('real.md', { maxBytes: 12 })).toEqual({ ok: true, bytes: Buffer.from('inside text\n'), size: 12 });
    expect(dir.read('real.md', { firstBytes: 6 })).toEqual({ ok: true, bytes: Buffer.from('inside'), size: 12 });
  });

  it('walks regular files and inside links only, never through a directory link', () => {
    const files = dir.walkFiles();
    expect(files).toEqual(['docs/guide.md', 'inside-chain.md', 'inside-link.md', 'real.md']);
    expect(files.some((f) => f.startsWith('outdir') || f.startsWith('docs-link'))).toBe(false);
  });

  it('writes inside (through inside links too) and refuses every way out, leaving the outside untouched', () => {
    const w = new ConfinedDir(mkdtempSync(join(base, 'w-')), { exclude: ['.git'] });
    writeFileSync(join(w.root, 'a.txt'), 'a\n');
    symlinkSync('a.txt', join(w.root, 'a-link'));
    symlinkSync(join(base, 'outside'), join(w.root, 'outdir'));
    symlinkSync(join(base, 'data', 'secret.key'), join(w.root, 'key'));
    symlinkSync(join(base, 'outside', 'new.txt'), join(w.root, 'dangling-out'));
    expect(w.write('a-link', 'changed\n', { mode: 'replace' })).toBe('replaced');
    expect(readFileSync(join(w.root, 'a.txt'), 'utf8')).toBe('changed\n');
    expect(lstatSync(join(w.root, 'a-link')).isSymbolicLink()).toBe(true);
    expect(w.write('sub/dir/new.txt', 'new\n', { mode: 'create', mkdirs: true })).toBe('created');
    expect(readFileSync(join(w.root, 'sub/dir/new.txt'), 'utf8')).toBe('new\n');

    expect(() => w.write('key', 'pwned')).toThrow(/key is a symlink -> .*secret\.key, which leads outside/);
    expect(() => w.write('outdir/new.txt', 'pwned', { mkdirs: true })).toThrow(/outdir is a symlink/);
    expect(() => w.mkdirs('outdir/sub')).toThrow(ConfinedPathError);
    expect(() => w.write('dangling-out', 'pwned')).toThrow(/dangling-out is a symlink/);
    expect(() => w.write('.git/hooks/pre-commit', 'pwned', { mkdirs: true })).toThrow(ConfinedPathError);
    expect(readFileSync(join(base, 'data', 'secret.key'), 'utf8')).toBe(SECRET);
    expect(existsSync(join(base, 'outside', 'new.txt'))).toBe(false);
    expect(existsSync(join(base, 'outside', 'sub'))).toBe(false);

    // removing a link removes the link, never its target
    w.remove('key');
    expect(existsSync(join(w.root, 'key'))).toBe(false);
    expect(readFileSync(join(base, 'data', 'secret.key'), 'utf8')).toBe(SECRET);
    expect(() => w.remove('outdir/marker.txt')).toThrow(/outdir is a symlink/);
    expect(readFileSync(join(base, 'outside', 'marker.txt'), 'utf8')).toBe(OUTSIDE_MARKER);
  });

  describe('a link swapped between pointing inside and outside while it is read', () => {
    let swapper: ChildProcess | undefined;
    afterAll(() => swapper?.kill('SIGKILL'));

    // A separate process flips the links as fast as it can (atomic renames), so the swap can
    // land between any two system calls of a read; a check of the path followed by a read of the
    // path would sometimes read the outside file.
    it('never yields a byte of the outside file', async () => {
      const race = mkdtempSync(join(base, 'race-'));
      mkdirSync(join(race, 'in-dir'));
      writeFileSync(join(race, 'in.txt'), 'inside\n');
      writeFileSync(join(race, 'in-dir', 'marker.txt'), 'inside dir\n');
      symlinkSync('in.txt', join(race, 'flip'));
      symlinkSync('in-dir', join(race, 'flipdir'));
      const script =
        `
        const fs = require('node:fs'); const p = require('node:path'); const d ` +
        `= ${JSON.stringify(race)};
        const set = (name, to) => { const t = p.join(d, name + '.tmp'); fs.rmSync(t, { force: true }); ` +
        `fs.symlinkSync(to, t); fs.renameSync(t, p.join(d, name)); };
        process.stdout.write('go\\n');
        for (;;) { set('flip', ${JSON.stringify(join(base, 'data', 'secret.key'))}); ` +
        `set('flipdir', ${JSON.stringify(join(base, 'outside'))}); set('flip', 'in.txt'); set('flipdir', ` +
        `'in-dir'); }`;
      swapper = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise((r) => swapper!.stdout!.once('data', r));
      const r = new ConfinedDir(race);
      const seen = { inside: 0, refused: 0, leaked: 0, plainLeaked: 0 };
      const deadline = Date.now() + 3_000;
      while (Date.now() < deadline && (seen.inside < 200 || seen.refused < 200 || seen.plainLeaked === 0)) {
        for (const path of ['flip', 'flipdir/marker.txt']) {
          const got = r.read(path);
          if (got.ok) {
            const text = got.bytes.toString();
            if (text.includes(SECRET) || text.includes(OUTSIDE_MARKER)) seen.leaked++;
            else seen.inside++;
          } else seen.refused++;
        }
        // control: a plain read of the same path does reach the outside, so the swap is live
        try {
          if (readFileSync(join(race, 'flip'), 'utf8').includes(SECRET)) seen.plainLeaked++;
        } catch {
          /* mid-rename */
        }
      }
      swapper.kill('SIGKILL');
      expect(seen.plainLeaked).toBeGreaterThan(0);
      expect(seen.inside).toBeGreaterThan(0);
      expect(seen.refused).toBeGreaterThan(0);
      expect(seen.leaked).toBe(0);
      expect(readlinkSync(join(race, 'flip'))).toBeTruthy();
    });
  });
});
