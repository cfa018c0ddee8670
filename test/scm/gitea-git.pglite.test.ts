import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitClient, gitClient } from '../support/git-client.js';
import { giteaKind } from '../../src/scm/gitea/gitea.js';
import { type FakeGitea, startFakeGitea } from '../support/fake-gitea/server.js';

/** git over smart HTTP against the Gitea double, as the pr step pushes: Basic auth, the token as password. */

describe('Gitea double: git smart HTTP through the git CLI', () => {
  let fake: FakeGitea;
  let alice: { login: string; token: string };
  let stranger: { login: string; token: string };
  let readOnly: { login: string; token: string };

  let git: GitClient['git'];
  let clone: GitClient['clone'];
  let client: GitClient | undefined;

  beforeAll(async () => {
    fake = await startFakeGitea();
    client = gitClient(fake.webUrl, giteaKind.gitUser);
    ({ git, clone } = client);
    alice = fake.addUser('alice');
    stranger = fake.addUser('sam');
    readOnly = fake.addUser('olga', { readOnly: true });
    fake.createRepo('acme', 'widget', {
      files: { 'a.py': 'x = 1\n' },
      collaborators: ['alice', 'olga'],
      protectedBranches: ['main'],
    });
    fake.createRepo('acme', 'vault', { private: true, files: { 'secret.txt': 'hush\n' }, readers: ['sam'] });
  });
  afterAll(async () => {
    await fake?.close();
    client?.close();
  });

  it('clones public repositories anonymously and private ones with a token that may read them', async () => {
    const open = await clone(undefined, '/acme/widget.git');
    expect(open.status, open.stderr).toBe(0);
    expect(readFileSync(join(open.dir, 'a.py'), 'utf8')).toBe('x = 1\n');

    const anonymous = await clone(undefined, '/acme/vault.git');
    expect(anonymous.status).not.toBe(0);
    const outsider = await clone(alice.token, '/acme/vault.git');
    expect(outsider.status).not.toBe(0);
    expect(outsider.stderr).toContain('Repository not found');
    const unknownToken = await clone('0123456789abcdef0123456789abcdef01234567', '/acme/vault.git');
    expect(unknownToken.status).not.toBe(0);
    const reader = await clone(stranger.token, '/acme/vault');
    expect(reader.status, reader.stderr).toBe(0);
    expect(readFileSync(join(reader.dir, 'secret.txt'), 'utf8')).toBe('hush\n');
    const refs = fake.requests.filter((r) => r.path.startsWith('/acme/vault')).map((r) => [r.status, r.authenticated]);
    expect(refs).toEqual(
      expect.arrayContaining([
        [401, false],
        [404, true],
        [401, true],
        [200, true],
      ]),
    );
  });

  it('takes a collaborator’s push; refuses a reader, a read-only token and an anonymous pusher', async () => {
    const c = await clone(alice.token, '/acme/widget.git');
    await git(c.dir, undefined, 'checkout', '--quiet', '-b', 'emend/1-fix');
    writeFileSync(join(c.dir, 'a.py'), 'x = 2\n');
    await git(c.dir, undefined, 'commit', '--quiet', '-am', 'fix');
    const sha = (await git(c.dir, undefined, 'rev-parse', 'HEAD')).stdout.trim();

    for (const token of [stranger.token, readOnly.token]) {
      const refused = await git(c.dir, token, 'push', '--quiet', 'origin', 'HEAD:refs/heads/emend/1-fix');
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toContain('The requested URL returned error: 403');
    }
    const anonymous = await git(c.dir, undefined, 'push', '--quiet', 'origin', 'HEAD:refs/heads/emend/1-fix');
    expect(anonymous.status).not.toBe(0);
    expect(fake.branchHead('acme', 'widget', 'emend/1-fix')).toBeUndefined();

    const pushed = await git(c.dir, alice.token, 'push', '--quiet', 'origin', 'HEAD:refs/heads/emend/1-fix');
    expect(pushed.status, pushed.stderr).toBe(0);
    expect(fake.branchHead('acme', 'widget', 'emend/1-fix')).toBe(sha);
    expect(fake.diff('acme', 'widget', 'main', 'emend/1-fix')).toContain('+x = 2');
    expect(JSON.stringify(fake.requests)).not.toContain(alice.token);
  });

  it('refuses a push to a protected branch in Gitea’s words', async () => {
    const before = fake.branchHead('acme', 'widget', 'main');
    const c = await clone(alice.token, '/acme/widget.git');
    writeFileSync(join(c.dir, 'a.py'), 'x = 9\n');
    await git(c.dir, undefined, 'commit', '--quiet', '-am', 'straight to main');
    const refused = await git(c.dir, alice.token, 'push', 'origin', 'HEAD:refs/heads/main');
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('remote: Gitea: Not allowed to push to protected branch main');
    expect(refused.stderr).toContain('pre-receive hook declined');
    expect(fake.branchHead('acme', 'widget', 'main')).toBe(before);
  });
});
