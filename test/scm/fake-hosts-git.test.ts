import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostKind } from '../../src/scm/code-host.js';
import { giteaKind } from '../../src/scm/gitea/gitea.js';
import { gitHubKind } from '../../src/scm/github/github.js';
import { gitLabKind } from '../../src/scm/gitlab/gitlab.js';
import { type FakeGitea, startFakeGitea } from '../support/fake-gitea/server.js';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { type FakeGitLab, startFakeGitLab } from '../support/fake-gitlab/server.js';
import { type GitClient, gitClient } from '../support/git-client.js';

/**
 * Each fake code host's git smart HTTP through the git CLI, as the pr step pushes (HTTP Basic,
 * the host kind's git user and the token as password): who may clone, who may push, a protected
 * branch, a fork pushed to, fetching, and tokens kept out of the request log. One suite, run once
 * per host; the host's words and REST fork call are in HOSTS.
 */

type Fake = FakeGitHub | FakeGitLab | FakeGitea;

interface HostCase {
  name: string;
  start(): Promise<Fake>;
  kind: HostKind;
  /** A token the host has never issued. */
  unknownToken: string;
  /** The body of a 404 for a repository the caller may not see. */
  notFound: string;
  /** The body of a 403 for a push by someone who may not push. */
  pushDenied(login: string): string;
  /** The pre-receive hook's words for a push to a protected branch. */
  protectedRefusal: string;
  /** The createRepo option for users who may only read, where the host has them. */
  readers?: 'reporters' | 'readers';
  /** Forks acme/widget over REST with the token: the fork's clone URL. */
  fork(fake: Fake, token: string): Promise<string>;
}

/** POST to the host's REST API with the token; the JSON answer after checking its status. */
async function restPost(url: string, authorization: string, status: number): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', headers: { authorization } });
  expect(res.status).toBe(status);
  return (await res.json()) as Record<string, unknown>;
}

const HOSTS: HostCase[] = [
  {
    name: 'fake GitHub',
    start: startFakeGitHub,
    kind: gitHubKind,
    unknownToken: 'ghp_notatoken',
    notFound: 'Repository not found.',
    pushDenied: (login) => `Permission to acme/widget.git denied to ${login}.`,
    protectedRefusal: 'remote: error: GH006: Protected branch update failed for refs/heads/main.',
    fork: async (fake, token) =>
      (await restPost(`${fake.apiUrl}/repos/acme/widget/forks`, `token ${token}`, 202)).clone_url as string,
  },
  {
    name: 'fake GitLab',
    start: () => startFakeGitLab(),
    kind: gitLabKind,
    unknownToken: 'glpat-notatokennotatoken',
    notFound: "The project you were looking for could not be found or you don't have permission to view it.",
    pushDenied: () => 'You are not allowed to push code to this project.',
    protectedRefusal: 'remote: GitLab: You are not allowed to push code to protected branches on this project.',
    readers: 'reporters',
    fork: async (fake, token) =>
      (await restPost(`${fake.apiUrl}/projects/acme%2Fwidget/fork`, `Bearer ${token}`, 201)).http_url_to_repo as string,
  },
  {
    name: 'Gitea double',
    start: () => startFakeGitea(),
    kind: giteaKind,
    unknownToken: '0123456789abcdef0123456789abcdef01234567',
    notFound: 'Repository not found',
    pushDenied: () => 'User permission denied',
    protectedRefusal: 'remote: Gitea: Not allowed to push to protected branch main',
    readers: 'readers',
    fork: async (fake, token) =>
      (await restPost(`${fake.apiUrl}/repos/acme/widget/forks`, `token ${token}`, 202)).clone_url as string,
  },
];

describe.each(HOSTS)('$name: git smart HTTP through the git CLI', (host) => {
  let fake: Fake;
  let alice: { login: string; token: string };
  let stranger: { login: string; token: string };
  let readOnly: { login: string; token: string };
  let reader: { login: string; token: string };
  let git: GitClient['git'];
  let clone: GitClient['clone'];
  let client: GitClient | undefined;

  beforeAll(async () => {
    fake = await host.start();
    client = gitClient(fake.webUrl, host.kind.gitUser);
    ({ git, clone } = client);
    alice = fake.addUser('alice');
    stranger = fake.addUser('stranger');
    readOnly = fake.addUser('olga', { readOnly: true });
    reader = fake.addUser('sam');
    fake.createRepo('acme', 'widget', {
      files: { 'README.md': '# widget\n', 'src/a.py': 'x = 1\n' },
      collaborators: ['alice', 'olga'],
      protectedBranches: ['main'],
    });
    fake.createRepo('acme', 'vault', {
      private: true,
      files: { 'secret.txt': 'hush\n' },
      collaborators: ['alice'],
      ...(host.readers ? { [host.readers]: ['sam'] } : {}),
    });
  });
  afterAll(async () => {
    await fake?.close();
    client?.close();
  });

  it('clones a public repository anonymously, at /OWNER/NAME.git and /OWNER/NAME', async () => {
    for (const path of ['/acme/widget.git', '/acme/widget']) {
      const c = await clone(undefined, path);
      expect(c.status, c.stderr).toBe(0);
      expect(readFileSync(join(c.dir, 'src/a.py'), 'utf8')).toBe('x = 1\n');
      expect((await git(c.dir, undefined, 'rev-parse', 'HEAD')).stdout.trim()).toBe(
        fake.branchHead('acme', 'widget', 'main'),
      );
    }
    const anon = fake.requests.filter((r) => r.kind === 'git' && r.path.startsWith('/acme/widget'));
    expect(anon.length).toBeGreaterThan(0);
    expect(anon.every((r) => !r.authenticated && r.status === 200)).toBe(true);
    expect(anon.some((r) => r.path === '/acme/widget.git/info/refs?service=git-upload-pack')).toBe(true);
  });

  it('clones a private repository only with the token of someone who may read it', async () => {
    const anonymous = await clone(undefined, '/acme/vault.git');
    expect(anonymous.status).not.toBe(0);
    expect(anonymous.stderr).toMatch(/could not read Username|Authentication failed|terminal prompts disabled/);

    const outsider = await clone(stranger.token, '/acme/vault.git');
    expect(outsider.status).not.toBe(0);
    expect(outsider.stderr).toContain(host.notFound);

    const bad = await clone(host.unknownToken, '/acme/vault.git');
    expect(bad.status).not.toBe(0);

    const ok = await clone(alice.token, '/acme/vault.git');
    expect(ok.status, ok.stderr).toBe(0);
    expect(readFileSync(join(ok.dir, 'secret.txt'), 'utf8')).toBe('hush\n');
    if (host.readers) {
      const read = await clone(reader.token, '/acme/vault');
      expect(read.status, read.stderr).toBe(0);
      expect(readFileSync(join(read.dir, 'secret.txt'), 'utf8')).toBe('hush\n');
    }

    const statuses = fake.requests
      .filter((r) => r.path.startsWith('/acme/vault'))
      .map((r) => [r.status, r.authenticated]);
    expect(statuses).toEqual(
      expect.arrayContaining([
        [401, false],
        [404, true],
        [401, true],
        [200, true],
      ]),
    );
    expect(JSON.stringify(fake.requests)).not.toContain(alice.token);
  });

  it('takes a push from a collaborator; refuses a stranger, a reader, a read-only token (403) and an anonymous pusher (401)', async () => {
    const c = await clone(alice.token, '/acme/widget.git');
    expect(c.status, c.stderr).toBe(0);
    await git(c.dir, undefined, 'checkout', '--quiet', '-b', 'emend/fix-1');
    writeFileSync(join(c.dir, 'src/a.py'), 'x = 2\n');
    await git(c.dir, undefined, 'commit', '--quiet', '-am', 'fix it');
    const sha = (await git(c.dir, undefined, 'rev-parse', 'HEAD')).stdout.trim();

    const refused = await git(c.dir, stranger.token, 'push', '--quiet', 'origin', 'HEAD:refs/heads/emend/fix-1');
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('The requested URL returned error: 403');
    expect(refused.stderr).toContain(host.pushDenied('stranger'));
    for (const token of [reader.token, readOnly.token]) {
      const denied = await git(c.dir, token, 'push', '--quiet', 'origin', 'HEAD:refs/heads/emend/fix-1');
      expect(denied.status).not.toBe(0);
      expect(denied.stderr).toContain('The requested URL returned error: 403');
      expect(denied.stderr).not.toContain(token);
    }
    expect(fake.branchHead('acme', 'widget', 'emend/fix-1')).toBeUndefined();

    const anonymous = await git(c.dir, undefined, 'push', '--quiet', 'origin', 'HEAD:refs/heads/emend/fix-1');
    expect(anonymous.status).not.toBe(0);
    expect(fake.branchHead('acme', 'widget', 'emend/fix-1')).toBeUndefined();

    const pushed = await git(c.dir, alice.token, 'push', '--quiet', 'origin', 'HEAD:refs/heads/emend/fix-1');
    expect(pushed.status, pushed.stderr).toBe(0);
    expect(fake.branchHead('acme', 'widget', 'emend/fix-1')).toBe(sha);
    expect(fake.files('acme', 'widget', 'emend/fix-1')['src/a.py']).toBe('x = 2\n');
    expect(fake.diff('acme', 'widget', 'main', 'emend/fix-1')).toContain('+x = 2');

    const receive = fake.requests.filter((r) => r.path === '/acme/widget.git/git-receive-pack');
    expect(receive.map((r) => r.status)).toEqual([200]);
    const advert = fake.requests
      .filter((r) => r.path === '/acme/widget.git/info/refs?service=git-receive-pack')
      .map((r) => r.status);
    expect(advert).toEqual(expect.arrayContaining([403, 401, 200]));
    expect(JSON.stringify(fake.requests)).not.toContain(alice.token);
  });

  it('refuses a push to a protected branch in the host’s words, and takes pushes to a fork by its owner', async () => {
    const c = await clone(alice.token, '/acme/widget.git');
    writeFileSync(join(c.dir, 'README.md'), '# changed\n');
    await git(c.dir, undefined, 'commit', '--quiet', '-am', 'straight to main');
    const before = fake.branchHead('acme', 'widget', 'main');
    const rejected = await git(c.dir, alice.token, 'push', 'origin', 'HEAD:refs/heads/main');
    expect(rejected.status).not.toBe(0);
    expect(rejected.stderr).toContain(host.protectedRefusal);
    expect(rejected.stderr).toMatch(/\[remote rejected\].*pre-receive hook declined/);
    expect(fake.branchHead('acme', 'widget', 'main')).toBe(before);

    // The test side may still move a protected branch (a push by an admin).
    fake.commit('acme', 'widget', { branch: 'main', files: { 'admin.txt': 'ok\n' } });
    expect(fake.branchHead('acme', 'widget', 'main')).not.toBe(before);

    // A stranger forks over REST and pushes to the fork (not protected there) with the same token.
    const cloneUrl = await host.fork(fake, stranger.token);
    expect(cloneUrl).toBe(`${fake.webUrl}/stranger/widget.git`);
    await git(c.dir, undefined, 'remote', 'add', 'fork', cloneUrl);
    const toFork = await git(c.dir, stranger.token, 'push', '--quiet', 'fork', 'HEAD:refs/heads/readme');
    expect(toFork.status, toFork.stderr).toBe(0);
    expect(fake.files('stranger', 'widget', 'readme')['README.md']).toBe('# changed\n');

    // A read-only token of the owner still cannot push.
    const ownerReadOnly = fake.addUser('stranger', { token: `${host.unknownToken}readonly`, readOnly: true });
    const readOnlyPush = await git(c.dir, ownerReadOnly.token, 'push', '--quiet', 'fork', 'HEAD:refs/heads/other');
    expect(readOnlyPush.status).not.toBe(0);
    expect(readOnlyPush.stderr).toContain('The requested URL returned error: 403');
  });

  it('fetches new commits and records requests without the token', async () => {
    const c = await clone(undefined, '/acme/widget');
    const next = fake.commit('acme', 'widget', { branch: 'main', files: { 'later.txt': 'later\n' }, message: 'later' });
    const fetched = await git(c.dir, undefined, 'fetch', '--quiet', 'origin', 'main');
    expect(fetched.status, fetched.stderr).toBe(0);
    expect((await git(c.dir, undefined, 'rev-parse', 'FETCH_HEAD')).stdout.trim()).toBe(next);
    for (const r of fake.requests) {
      expect(r.path).not.toContain(alice.token);
      expect(r.path).not.toContain(stranger.token);
    }
  });
});
