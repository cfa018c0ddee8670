import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitClient, gitClient } from '../support/git-client.js';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';

describe('fake GitHub: git smart HTTP through the git CLI', () => {
  let gh: FakeGitHub;
  let alice: { login: string; token: string };
  let stranger: { login: string; token: string };

  let git: GitClient['git'];
  let clone: GitClient['clone'];
  let client: GitClient | undefined;

  beforeAll(async () => {
    gh = await startFakeGitHub();
    client = gitClient(gh.webUrl, 'x-access-token');
    ({ git, clone } = client);
    alice = gh.addUser('alice');
    stranger = gh.addUser('stranger');
    gh.createRepo('acme', 'widget', {
      files: { 'README.md': '# widget\n', 'src/a.py': 'x = 1\n' },
      collaborators: ['alice'],
      protectedBranches: ['main'],
    });
    gh.createRepo('acme', 'vault', { private: true, files: { 'secret.txt': 'hush\n' }, collaborators: ['alice'] });
  });
  afterAll(async () => {
    await gh?.close();
    client?.close();
  });

  it('clones a public repository anonymously, at /OWNER/NAME.git and /OWNER/NAME', async () => {
    for (const path of ['/acme/widget.git', '/acme/widget']) {
      const c = await clone(undefined, path);
      expect(c.status, c.stderr).toBe(0);
      expect(readFileSync(join(c.dir, 'src/a.py'), 'utf8')).toBe('x = 1\n');
      expect((await git(c.dir, undefined, 'rev-parse', 'HEAD')).stdout.trim()).toBe(
        gh.branchHead('acme', 'widget', 'main'),
      );
    }
    const anon = gh.requests.filter((r) => r.kind === 'git' && r.path.startsWith('/acme/widget'));
    expect(anon.length).toBeGreaterThan(0);
    expect(anon.every((r) => !r.authenticated && r.status === 200)).toBe(true);
    expect(anon.some((r) => r.path === '/acme/widget.git/info/refs?service=git-upload-pack')).toBe(true);
  });

  it('clones a private repository only with the token of someone with access', async () => {
    const anonymous = await clone(undefined, '/acme/vault.git');
    expect(anonymous.status).not.toBe(0);
    expect(anonymous.stderr).toMatch(/could not read Username|Authentication failed|terminal prompts disabled/);

    const outsider = await clone(stranger.token, '/acme/vault.git');
    expect(outsider.status).not.toBe(0);
    expect(outsider.stderr).toContain('Repository not found.');

    const bad = await clone('ghp_notatoken', '/acme/vault.git');
    expect(bad.status).not.toBe(0);

    const ok = await clone(alice.token, '/acme/vault.git');
    expect(ok.status, ok.stderr).toBe(0);
    expect(readFileSync(join(ok.dir, 'secret.txt'), 'utf8')).toBe('hush\n');

    const statuses = gh.requests
      .filter((r) => r.path.startsWith('/acme/vault.git/info/refs'))
      .map((r) => [r.status, r.authenticated]);
    expect(statuses).toEqual(
      expect.arrayContaining([
        [401, false],
        [404, true],
        [401, true],
        [200, true],
      ]),
    );
    expect(JSON.stringify(gh.requests)).not.toContain(alice.token);
  });

  it('takes a push from a collaborator, refuses a stranger with 403 and an anonymous pusher with 401', async () => {
    const c = await clone(alice.token, '/acme/widget.git');
    expect(c.status, c.stderr).toBe(0);
    await git(c.dir, undefined, 'checkout', '--quiet', '-b', 'emend/fix-1');
    writeFileSync(join(c.dir, 'src/a.py'), 'x = 2\n');
    await git(c.dir, undefined, 'commit', '--quiet', '-am', 'fix it');
    const sha = (await git(c.dir, undefined, 'rev-parse', 'HEAD')).stdout.trim();

    const refused = await git(c.dir, stranger.token, 'push', '--quiet', 'origin', 'HEAD:refs/heads/emend/fix-1');
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('The requested URL returned error: 403');
    expect(refused.stderr).toContain('Permission to acme/widget.git denied to stranger.');
    expect(gh.branchHead('acme', 'widget', 'emend/fix-1')).toBeUndefined();

    const anonymous = await git(c.dir, undefined, 'push', '--quiet', 'origin', 'HEAD:refs/heads/emend/fix-1');
    expect(anonymous.status).not.toBe(0);

    const pushed = await git(c.dir, alice.token, 'push', '--quiet', 'origin', 'HEAD:refs/heads/emend/fix-1');
    expect(pushed.status, pushed.stderr).toBe(0);
    expect(gh.branchHead('acme', 'widget', 'emend/fix-1')).toBe(sha);
    expect(gh.files('acme', 'widget', 'emend/fix-1')['src/a.py']).toBe('x = 2\n');
    expect(gh.diff('acme', 'widget', 'main', 'emend/fix-1')).toContain('+x = 2');

    const receive = gh.requests.filter((r) => r.path === '/acme/widget.git/git-receive-pack');
    expect(receive.map((r) => r.status)).toEqual([200]);
    const advert = gh.requests
      .filter((r) => r.path === '/acme/widget.git/info/refs?service=git-receive-pack')
      .map((r) => r.status);
    expect(advert).toEqual(expect.arrayContaining([403, 401, 200]));
  });

  it('rejects a push to a protected branch with GH006, and pushes to a fork by its owner', async () => {
    const c = await clone(alice.token, '/acme/widget.git');
    writeFileSync(join(c.dir, 'README.md'), '# changed\n');
    await git(c.dir, undefined, 'commit', '--quiet', '-am', 'straight to main');
    const before = gh.branchHead('acme', 'widget', 'main');
    const rejected = await git(c.dir, alice.token, 'push', 'origin', 'HEAD:refs/heads/main');
    expect(rejected.status).not.toBe(0);
    expect(rejected.stderr).toContain('remote: error: GH006: Protected branch update failed for refs/heads/main.');
    expect(rejected.stderr).toMatch(/\[remote rejected\].*pre-receive hook declined/);
    expect(gh.branchHead('acme', 'widget', 'main')).toBe(before);

    // The test side may still move a protected branch (a push by an admin).
    gh.commit('acme', 'widget', { branch: 'main', files: { 'admin.txt': 'ok\n' } });
    expect(gh.branchHead('acme', 'widget', 'main')).not.toBe(before);

    // A stranger forks over REST and pushes to the fork (not protected there) with the same token.
    const fork = await fetch(`${gh.apiUrl}/repos/acme/widget/forks`, {
      method: 'POST',
      headers: { authorization: `token ${stranger.token}` },
    });
    expect(fork.status).toBe(202);
    const cloneUrl = ((await fork.json()) as { clone_url: string }).clone_url;
    expect(cloneUrl).toBe(`${gh.webUrl}/stranger/widget.git`);
    await git(c.dir, undefined, 'remote', 'add', 'fork', cloneUrl);
    const toFork = await git(c.dir, stranger.token, 'push', '--quiet', 'fork', 'HEAD:refs/heads/readme');
    expect(toFork.status, toFork.stderr).toBe(0);
    expect(gh.files('stranger', 'widget', 'readme')['README.md']).toBe('# changed\n');

    // A read-only token of the owner still cannot push.
    const reader = gh.addUser('stranger', { token: 'ghp_readonlyreadonlyreadonlyreadonlyread', readOnly: true });
    const readOnly = await git(c.dir, reader.token, 'push', '--quiet', 'fork', 'HEAD:refs/heads/other');
    expect(readOnly.status).not.toBe(0);
    expect(readOnly.stderr).toContain('The requested URL returned error: 403');
  });

  it('fetches new commits and records requests without the token', async () => {
    const c = await clone(undefined, '/acme/widget');
    const next = gh.commit('acme', 'widget', { branch: 'main', files: { 'later.txt': 'later\n' }, message: 'later' });
    const fetched = await git(c.dir, undefined, 'fetch', '--quiet', 'origin', 'main');
    expect(fetched.status, fetched.stderr).toBe(0);
    expect((await git(c.dir, undefined, 'rev-parse', 'FETCH_HEAD')).stdout.trim()).toBe(next);
    for (const r of gh.requests) {
      expect(r.path).not.toContain(alice.token);
      expect(r.path).not.toContain(stranger.token);
    }
  });
});
