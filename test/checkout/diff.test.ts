import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { prepareCheckout } from '../../src/checkout/checkout.js';
import { checkoutDiff } from '../../src/checkout/diff.js';
import { type GitHttpServer, startGitHttp } from '../support/git-http.js';
import { checkoutFixture } from './fixture.js';

describe('checkouts: the diff of a task', () => {
  let server: GitHttpServer;
  let fx: ReturnType<typeof checkoutFixture>;
  let seq = 0;
  beforeAll(async () => {
    server = await startGitHttp();
    server.createRepo('acme', 'lib', {
      files: {
        'src/calc.py': 'def add(a, b):\n    return a - b\n',
        'README.md': '# lib\n',
        'old.txt': 'remove me\n',
        '.gitignore': '*.log\n',
      },
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    fx = checkoutFixture();
  });
  afterEach(() => fx.cleanup());
  const prepare = () =>
    prepareCheckout(fx.deps, { taskId: `diff-${++seq}`, repoUrl: server.repoUrl('acme', 'lib'), baseBranch: 'main' });

  it(
    'sees a same-size edit made in place within the ' + "checkout's second, when the diff runs in a later second",
    async () => {
      // git's "racy git" rule: such an edit matches the index entry's stat (size, inode, mtime and
      // ctime to the second), so only the index file's own mtime tells git to compare contents.
      const nextSecond = () => new Promise((r) => setTimeout(r, 1_000 - (Date.now() % 1_000) + 20));
      const sameSecond = (a: string, b: string) =>
        Math.floor(statSync(a).mtimeMs / 1000) === Math.floor(statSync(b).mtimeMs / 1000);
      let ws = await prepare();
      // tried again in the rare case the checkout and the edit straddle a second (git then sees the new mtime anyway)
      for (let attempt = 0; attempt < 5; attempt++) {
        await nextSecond();
        ws = await prepare();
        writeFileSync(join(ws.dir, 'src/calc.py'), 'def add(a, b):\n    return a + b\n', { flag: 'r+' });
        if (sameSecond(join(ws.dir, 'src/calc.py'), join(ws.gitDir, 'index'))) break;
      }
      expect(sameSecond(join(ws.dir, 'src/calc.py'), join(ws.gitDir, 'index'))).toBe(true);
      await nextSecond();
      expect(await checkoutDiff(fx.deps, ws)).toContain('-    return a - b\n+    return a + b\n');
    },
  );

  it('is empty for an untouched checkout', async () => {
    const ws = await prepare();
    expect(await checkoutDiff(fx.deps, ws)).toBe('');
  });

  it('shows modified, new (also in new directories) and deleted files, not ignored ones', async () => {
    const ws = await prepare();
    writeFileSync(join(ws.dir, 'src/calc.py'), 'def add(a, b):\n    return a + b\n');
    mkdirSync(join(ws.dir, 'tests'));
    writeFileSync(
      join(ws.dir, 'tests/test_calc.py'),
      'from src.calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n',
    );
    rmSync(join(ws.dir, 'old.txt'));
    writeFileSync(join(ws.dir, 'debug.log'), 'noise\n');
    const indexBefore = readFileSync(join(ws.gitDir, 'index'));

    const diff = await checkoutDiff(fx.deps, ws);
    expect(diff).toMatch(
      /diff --git a\/src\/calc\.py b\/src\/calc\.py\nindex [0-9a-f]+\.\.[0-9a-f]+ 100644\n--- a\/src\/calc\.py\n\+\+\+ b\/src\/calc\.py\n@@ -1,2 \+1,2 @@\n def add\(a, b\):\n- {4}return a - b\n\+ {4}return a \+ b\n/,
    );
    expect(diff).toContain('diff --git a/tests/test_calc.py b/tests/test_calc.py\nnew file mode 100644\n');
    expect(diff).toContain('--- /dev/null\n+++ b/tests/test_calc.py\n@@ -0,0 +1,4 @@\n+from src.calc import add\n');
    expect(diff).toContain('diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n');
    expect(diff).not.toContain('debug.log');
    // The diff applies to the base commit and gives the same files.
    const check = join(fx.dataDir, 'check');
    execFileSync('git', ['clone', '--quiet', server.bareDir('acme', 'lib'), check]);
    execFileSync('git', ['apply', '--index', '-'], { cwd: check, input: diff });
    expect(readFileSync(join(check, 'tests/test_calc.py'), 'utf8')).toBe(
      readFileSync(join(ws.dir, 'tests/test_calc.py'), 'utf8'),
    );
    expect(existsSync(join(check, 'old.txt'))).toBe(false);
    // The task's own index and HEAD are as they were; no throwaway index is left.
    expect(readFileSync(join(ws.gitDir, 'index')).equals(indexBefore)).toBe(true);
    expect(execFileSync('git', [`--git-dir=${ws.gitDir}`, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim()).toBe(
      ws.baseCommit,
    );
    expect(execFileSync('ls', [ws.gitDir], { encoding: 'utf8' })).not.toContain('diff-index');
  });

  it('ignores a .git planted in the files in place of the pointer, and runs nothing it configures', async () => {
    const ws = await prepare();
    const pwned = join(fx.dataDir, 'pwned');
    rmSync(join(ws.dir, '.git'));
    mkdirSync(join(ws.dir, '.git/hooks'), { recursive: true });
    writeFileSync(
      join(ws.dir, '.git/config'),
      `[core]\n\tfsmonitor = touch ${pwned}\n\thooksPath = .git/hooks\n[diff]\n\texternal = touch ${pwned}\n`,
    );
    writeFileSync(join(ws.dir, '.git/HEAD'), 'ref: refs/heads/main\n');
    // A filter driver named in .gitattributes would run a command from config when staging.
    writeFileSync(join(ws.dir, '.gitattributes'), '*.py filter=evil diff=evil\n');
    writeFileSync(join(ws.dir, 'src/calc.py'), 'changed = True\n');
    const diff = await checkoutDiff(fx.deps, ws);
    expect(diff).toContain('+changed = True');
    expect(diff).toContain('b/.gitattributes');
    expect(diff).not.toContain('.git/config');
    expect(existsSync(pwned)).toBe(false);
  });

  it('gives binary patches when asked', async () => {
    const ws = await prepare();
    writeFileSync(join(ws.dir, 'logo.bin'), Buffer.from([0, 1, 2, 3, 255, 0, 7]));
    expect(await checkoutDiff(fx.deps, ws)).toContain('Binary files /dev/null and b/logo.bin differ');
    expect(await checkoutDiff(fx.deps, ws, { binary: true })).toContain('GIT binary patch');
  });
});
