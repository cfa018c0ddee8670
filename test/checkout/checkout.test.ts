import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
  chmodSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareCheckout, removeCheckout, checkoutPaths } from '../../src/checkout/checkout.js';
import { TaskCheckoutError } from '../../src/checkout/errors.js';
import { mirrorPath } from '../../src/checkout/mirrors.js';
import { useCheckoutTestbed } from './fixture.js';

const git = (gitDir: string, ...args: string[]) =>
  execFileSync('git', [`--git-dir=${gitDir}`, ...args], { encoding: 'utf8' }).trim();

// No database here: one project runs these.
describe('checkouts: mirrors and checkouts', () => {
  const bed = useCheckoutTestbed();
  let seq = 0;
  const taskId = () => `task-${++seq}`;

  it('makes a bare mirror on first use, then fetches into the same one for later tasks', async () => {
    const first = bed.server.createRepo('acme', 'app', { files: { 'a.txt': 'one\n', 'src/x.py': 'x = 1\n' } });
    bed.server.commit('acme', 'app', { branch: 'gone-soon', files: { 'tmp.txt': 'tmp\n' } });
    const url = bed.server.repoUrl('acme', 'app');
    const ws1 = await prepareCheckout(bed.fx.deps, { taskId: taskId(), repoUrl: url, baseBranch: 'main' });
    const mirror = mirrorPath(bed.fx.dataDir, url);
    expect(mirror).toBe(
      join(bed.fx.dataDir, 'mirrors', `127.0.0.1_${new URL(bed.server.baseUrl).port}`, 'acme', 'app.git'),
    );
    expect(git(mirror, 'rev-parse', '--is-bare-repository')).toBe('true');
    expect(git(mirror, 'rev-parse', 'refs/heads/main')).toBe(first);
    expect(ws1.baseCommit).toBe(first);
    expect(readFileSync(join(ws1.dir, 'src/x.py'), 'utf8')).toBe('x = 1\n');

    // Between the two tasks: a new commit, a new branch and a deleted branch on the origin.
    const marker = join(mirror, 'marker-of-this-mirror');
    writeFileSync(marker, 'still here');
    const inode = statSync(mirror).ino;
    const second = bed.server.commit('acme', 'app', { branch: 'main', files: { 'b.txt': 'two\n' } });
    bed.server.commit('acme', 'app', { branch: 'feature', files: { 'f.txt': 'f\n' } });
    execFileSync('git', ['--git-dir', bed.server.bareDir('acme', 'app'), 'branch', '-D', 'gone-soon']);

    const ws2 = await prepareCheckout(bed.fx.deps, { taskId: taskId(), repoUrl: url, baseBranch: 'main' });
    expect(statSync(mirror).ino).toBe(inode);
    expect(readFileSync(marker, 'utf8')).toBe('still here');
    expect(ws2.baseCommit).toBe(second);
    expect(readFileSync(join(ws2.dir, 'b.txt'), 'utf8')).toBe('two\n');
    expect(git(mirror, 'for-each-ref', '--format=%(refname)').split('\n').sort()).toEqual([
      'refs/heads/feature',
      'refs/heads/main',
    ]);
    // The first task's files are its own: the fetch did not touch them.
    expect(existsSync(join(ws1.dir, 'b.txt'))).toBe(false);

    const events = bed.fx.logLines.map((l) => JSON.parse(l).msg).filter((m: string) => m.startsWith('mirror'));
    expect(events).toEqual(['mirror created', 'mirror fetched']);
    // The mirror's config names no remote: the URL is given on each fetch.
    expect(readFileSync(join(mirror, 'config'), 'utf8')).not.toContain('127.0.0.1');
    await ws1.dispose();
    await ws2.dispose();
  });

  it("checks the base branch out at its commit into the task's own directory, its git dir beside it", async () => {
    bed.server.createRepo('acme', 'branches', { files: { 'a.txt': 'main\n' } });
    const dev = bed.server.commit('acme', 'branches', {
      branch: 'develop',
      from: 'main',
      files: { 'a.txt': 'develop\n', 'dir/new.txt': 'n\n' },
    });
    const id = taskId();
    const ws = await prepareCheckout(bed.fx.deps, {
      taskId: id,
      repoUrl: bed.server.repoUrl('acme', 'branches'),
      baseBranch: 'develop',
    });
    expect(ws).toMatchObject({ ...checkoutPaths(bed.fx.dataDir, id), baseBranch: 'develop', baseCommit: dev });
    expect(ws.dir).toBe(join(bed.fx.dataDir, 'work', id, 'tree'));
    expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('develop\n');
    expect(readFileSync(join(ws.dir, 'dir/new.txt'), 'utf8')).toBe('n\n');
    expect(readdirSync(ws.dir).sort()).toEqual(['.git', 'a.txt', 'dir']);
    // .git is only a pointer, so `git -C dir` works on the host (the validator uses it).
    expect(readFileSync(join(ws.dir, '.git'), 'utf8')).toBe(`gitdir: ${ws.gitDir}\n`);
    expect(execFileSync('git', ['-C', ws.dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim()).toBe(dev);
    expect(git(ws.gitDir, 'rev-parse', 'HEAD')).toBe(dev);
    expect(git(ws.gitDir, 'symbolic-ref', 'HEAD')).toBe('refs/heads/develop');
    // Self-contained: no remote, no alternates into the mirror, a clean status against its own tree.
    expect(git(ws.gitDir, 'remote')).toBe('');
    expect(existsSync(join(ws.gitDir, 'objects/info/alternates'))).toBe(false);
    expect(git(ws.gitDir, `--work-tree=${ws.dir}`, 'status', '--porcelain')).toBe('');
    await ws.dispose();
  });

  it('gives two parallel tasks on one repository correct work dirs, the mirror made once', async () => {
    const c1 = bed.server.createRepo('acme', 'busy', { files: { 'a.txt': '1\n' } });
    const url = bed.server.repoUrl('acme', 'busy');
    const other = bed.server.createRepo('acme', 'other');
    const [a, b, o] = await Promise.all([
      prepareCheckout(bed.fx.deps, { taskId: taskId(), repoUrl: url, baseBranch: 'main' }),
      prepareCheckout(bed.fx.deps, { taskId: taskId(), repoUrl: url, baseBranch: 'main' }),
      prepareCheckout(bed.fx.deps, {
        taskId: taskId(),
        repoUrl: bed.server.repoUrl('acme', 'other'),
        baseBranch: 'main',
      }),
    ]);
    expect([a.baseCommit, b.baseCommit, o.baseCommit]).toEqual([c1, c1, other]);
    expect(a.dir).not.toBe(b.dir);
    for (const ws of [a, b]) expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('1\n');

    const c2 = bed.server.commit('acme', 'busy', { branch: 'main', files: { 'a.txt': '2\n' } });
    const [c, d] = await Promise.all([
      prepareCheckout(bed.fx.deps, { taskId: taskId(), repoUrl: url, baseBranch: 'main' }),
      prepareCheckout(bed.fx.deps, { taskId: taskId(), repoUrl: url, baseBranch: 'main' }),
    ]);
    expect([c.baseCommit, d.baseCommit]).toEqual([c2, c2]);
    for (const ws of [c, d]) expect(readFileSync(join(ws.dir, 'a.txt'), 'utf8')).toBe('2\n');
    const created = bed.fx.logLines
      .filter((l) => JSON.parse(l).msg === 'mirror created')
      .map((l) => JSON.parse(l).repo);
    expect(created.sort()).toEqual([url, bed.server.repoUrl('acme', 'other')].sort());
    // Nothing half-made beside the mirror.
    expect(readdirSync(dirname(mirrorPath(bed.fx.dataDir, url))).sort()).toEqual([
      'busy.git',
      'busy.git.lock',
      'other.git',
      'other.git.lock',
    ]);
    for (const ws of [a, b, c, d, o]) await ws.dispose();
  });

  it('names a missing base branch, and leaves no work dir behind', async () => {
    bed.server.createRepo('acme', 'nobranch');
    const id = taskId();
    const err = await prepareCheckout(bed.fx.deps, {
      taskId: id,
      repoUrl: bed.server.repoUrl('acme', 'nobranch'),
      baseBranch: 'release/9',
    }).catch((e) => e);
    expect(err).toBeInstanceOf(TaskCheckoutError);
    expect(err).toMatchObject({
      reason: 'missing_branch',
      message: `base branch "release/9" does not exist in ${bed.server.repoUrl('acme', 'nobranch')}`,
    });
    expect(existsSync(checkoutPaths(bed.fx.dataDir, id).root)).toBe(false);
    for (const bad of ['-x', 'a..b', 'has space', '']) {
      await expect(
        prepareCheckout(bed.fx.deps, {
          taskId: taskId(),
          repoUrl: bed.server.repoUrl('acme', 'nobranch'),
          baseBranch: bad,
        }),
      ).rejects.toMatchObject({
        reason: 'bad_request',
        message: `base branch "${bad}" is not a valid branch name`,
      });
    }
  });

  it('stops at once for a cancelled task', async () => {
    bed.server.createRepo('acme', 'cancel');
    const abort = new AbortController();
    abort.abort();
    const id = taskId();
    await expect(
      prepareCheckout(bed.fx.deps, {
        taskId: id,
        repoUrl: bed.server.repoUrl('acme', 'cancel'),
        baseBranch: 'main',
        signal: abort.signal,
      }),
    ).rejects.toMatchObject({
      reason: 'aborted',
    });
    expect(existsSync(checkoutPaths(bed.fx.dataDir, id).root)).toBe(false);
  });

  it('says so when the repository does not exist', async () => {
    const url = bed.server.repoUrl('acme', 'nothing-here');
    await expect(
      prepareCheckout(bed.fx.deps, { taskId: taskId(), repoUrl: url, baseBranch: 'main' }),
    ).rejects.toMatchObject({
      reason: 'repo_not_found',
      message: expect.stringContaining(`cannot fetch ${url}`),
    });
    expect(existsSync(mirrorPath(bed.fx.dataDir, url))).toBe(false);
  });

  it('dispose removes the work dir without following symlinks out of it', async () => {
    bed.server.createRepo('acme', 'links');
    const ws = await prepareCheckout(bed.fx.deps, {
      taskId: taskId(),
      repoUrl: bed.server.repoUrl('acme', 'links'),
      baseBranch: 'main',
    });
    const outside = join(bed.fx.dataDir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep.txt'), 'keep');
    symlinkSync(outside, join(ws.dir, 'link-to-dir'));
    symlinkSync(join(outside, 'keep.txt'), join(ws.dir, 'link-to-file'));
    mkdirSync(join(ws.dir, 'locked/inner'), { recursive: true });
    writeFileSync(join(ws.dir, 'locked/inner/f'), 'x');
    chmodSync(join(ws.dir, 'locked/inner'), 0o000);
    chmodSync(join(ws.dir, 'locked'), 0o500);
    await ws.dispose();
    expect(existsSync(ws.root)).toBe(false);
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('keep');
    // The mirror stays for the next task.
    expect(existsSync(mirrorPath(bed.fx.dataDir, bed.server.repoUrl('acme', 'links')))).toBe(true);
    await ws.dispose();
  });

  it('replaces a directory left by an earlier run of the same task; removeCheckout clears one', async () => {
    bed.server.createRepo('acme', 'again', { files: { 'a.txt': 'a\n' } });
    const id = taskId();
    const url = bed.server.repoUrl('acme', 'again');
    const first = await prepareCheckout(bed.fx.deps, { taskId: id, repoUrl: url, baseBranch: 'main' });
    writeFileSync(join(first.dir, 'leftover.txt'), 'from a dead worker');
    const second = await prepareCheckout(bed.fx.deps, { taskId: id, repoUrl: url, baseBranch: 'main' });
    expect(existsSync(join(second.dir, 'leftover.txt'))).toBe(false);
    await removeCheckout(bed.fx.dataDir, id);
    expect(existsSync(second.root)).toBe(false);
    expect(() => checkoutPaths(bed.fx.dataDir, '../escape')).toThrow(TaskCheckoutError);
  });

  it('rejects URLs that are not repositories it may fetch, without echoing credentials', () => {
    expect(mirrorPath('/d', 'https://GitHub.com/Psf/Requests.git')).toBe('/d/mirrors/github.com/psf/requests.git');
    expect(mirrorPath('/d', 'https://ghe.example.com/base/o/n')).toBe('/d/mirrors/ghe.example.com/base/o/n.git');
    expect(() => mirrorPath('/d', 'https://x-access-token:s3cret@github.com/o/n')).toThrow(
      /credentials do not belong in the URL/,
    );
    try {
      mirrorPath('/d', 'https://x-access-token:s3cret@github.com/o/n');
    } catch (err) {
      expect((err as Error).message).not.toContain('s3cret');
    }
    expect(() => mirrorPath('/d', 'ssh://github.com/o/n')).toThrow(/only http and https/);
    expect(() => mirrorPath('/d', 'https://github.com/o/..')).toThrow(TaskCheckoutError);
    expect(() => mirrorPath('/d', 'https://github.com/o')).toThrow(/OWNER\/NAME/);
    expect(mirrorPath('/d', join(tmpdir(), 'some/repo.git'))).toMatch(/^\/d\/mirrors\/local\/[0-9a-f]{16}\/repo\.git$/);
  });
});
