import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScmError } from '../../src/scm/code-host.js';
import { gitea, giteaKind } from '../../src/scm/gitea/gitea.js';
import { HOST_KINDS } from '../../src/scm/kinds.js';
import { useFake } from '../support/code-hosts.js';
import { type FakeGitea, startFakeGitea } from '../support/fake-gitea/server.js';

/** The Gitea adapter against the Gitea double over real HTTP: every CodeHost method and Gitea's refusals. */

describe('Gitea adapter', () => {
  let fake: FakeGitea;
  const tokens: string[] = [];
  const errors: ScmError[] = [];
  const user = (login: string, opts: { readOnly?: boolean; email?: string } = {}) => {
    const u = fake.addUser(login, opts);
    tokens.push(u.token);
    return u;
  };
  const host = (token?: string) => gitea({ apiUrl: fake.apiUrl, fetch, token });
  /** The ScmError a call fails with, kept so the last test can check that none carries a token. */
  const failure = async (p: Promise<unknown>): Promise<ScmError> => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ScmError);
    errors.push(err as ScmError);
    return err as ScmError;
  };

  let acme: { login: string; token: string };
  let alice: { login: string; token: string };
  let reader: { login: string; token: string };
  let stranger: { login: string; token: string };
  let readOnly: { login: string; token: string };

  beforeAll(async () => {
    fake = await startFakeGitea();
    acme = user('acme');
    alice = user('alice');
    reader = user('rita');
    stranger = user('sam');
    readOnly = user('olga', { readOnly: true });
    fake.createRepo('acme', 'widget', { files: { 'a.py': 'x = 1\n' }, collaborators: ['alice'], readers: ['rita'] });
    fake.createRepo('acme', 'vault', { private: true, readers: ['rita'] });
    fake.createRepo('acme', 'handbook', { visibility: 'internal' });
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('is the gitea kind, registered', () => {
    expect(HOST_KINDS.gitea).toBe(giteaKind);
    expect(giteaKind.kind).toBe('gitea');
    expect(giteaKind.brand).toBe('gitea');
    expect(giteaKind.client).toBe(gitea);
  });

  it('reads the token user; an unknown token is a 401 in Gitea words', async () => {
    expect(await host(alice.token).user()).toBe('alice');
    const err = await failure(host('0123456789abcdef0123456789abcdef01234567').user());
    expect(err.status).toBe(401);
    expect(err.message).toBe(
      'checking the token: the code host answered HTTP 401: invalid username, password or token',
    );
  });

  it('maps visibility and push rights from the caller’s point of view', async () => {
    const widget = await host(alice.token).repo('acme', 'widget');
    expect(widget).toMatchObject({
      owner: 'acme',
      name: 'widget',
      fullName: 'acme/widget',
      private: false,
      visibility: 'public',
      defaultBranch: 'main',
      htmlUrl: `${fake.webUrl}/acme/widget`,
      cloneUrl: `${fake.webUrl}/acme/widget.git`,
      fork: false,
      canPush: true,
    });
    expect((await host(reader.token).repo('acme', 'widget'))?.canPush).toBe(false);
    expect((await host().repo('acme', 'widget'))?.canPush).toBe(false);
    expect(await host(acme.token).repo('acme', 'vault')).toMatchObject({
      private: true,
      visibility: 'private',
      canPush: true,
    });
    expect(await host(reader.token).repo('acme', 'vault')).toMatchObject({ visibility: 'private', canPush: false });
    expect(await host(stranger.token).repo('acme', 'vault')).toBeNull();
    expect(await host().repo('acme', 'vault')).toBeNull();
    // internal: every signed-in user reads it, anonymous callers do not see it. Gitea tells it only
    // by the owner's visibility (a limited organisation): the repository says private and internal false.
    const raw = await fetch(`${fake.apiUrl}/repos/acme/handbook`, {
      headers: { authorization: `token ${stranger.token}` },
    });
    expect(await raw.json()).toMatchObject({ private: false, internal: false, owner: { visibility: 'limited' } });
    expect(await host(stranger.token).repo('acme', 'handbook')).toMatchObject({
      private: true,
      visibility: 'internal',
      canPush: false,
    });
    expect(await host().repo('acme', 'handbook')).toBeNull();
    expect(await host(alice.token).repo('acme', 'no-such')).toBeNull();
  });

  it('creates a private repository for the token user, once', async () => {
    const made = await host(alice.token).createRepo('site', true, 'a site');
    expect(made).toMatchObject({ owner: 'alice', name: 'site', private: true, visibility: 'private', canPush: true });
    expect(fake.repo('alice', 'site')).toMatchObject({ private: true, fork: false });
    expect(fake.branchHead('alice', 'site', 'main')).toBeUndefined();
    const again = await failure(host(alice.token).createRepo('site', true));
    expect(again.status).toBe(409);
    expect(again.message).toContain('The repository with the same name already exists.');
  });

  it('forks once and finds the fork again, also under another name and when Gitea answers 409', async () => {
    const forksPosted = () => fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/forks'));
    const before = forksPosted().length;
    const first = await host(stranger.token).fork('acme', 'widget');
    expect(first).toMatchObject({ owner: 'sam', name: 'widget', fork: true, canPush: true });
    expect(await host(stranger.token).fork('acme', 'widget')).toEqual(first);
    expect(forksPosted().length - before).toBe(1);

    // rita's fork has another name: found among the repository's forks
    const made = await fetch(`${fake.apiUrl}/repos/acme/widget/forks`, {
      method: 'POST',
      headers: { authorization: `token ${reader.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'widget-rita' }),
    });
    expect(made.status).toBe(202);
    expect(await host(reader.token).fork('acme', 'widget')).toMatchObject({ owner: 'rita', name: 'widget-rita' });

    // the list read before the fork appeared (a race): the POST answers 409 and the fork is found then
    fake.failNext('GET', /\/repos\/acme\/widget\/forks$/, { status: 200, body: [] });
    const count = forksPosted().length;
    expect(await host(reader.token).fork('acme', 'widget')).toMatchObject({ owner: 'rita', name: 'widget-rita' });
    expect(
      forksPosted()
        .slice(count)
        .map((r) => r.status),
    ).toEqual([409]);
  });

  it('reports a name taken by a repository that is not the fork in Gitea words', async () => {
    const carol = user('carol');
    fake.createRepo('carol', 'widget');
    const err = await failure(host(carol.token).fork('acme', 'widget'));
    expect(err.status).toBe(409);
    expect(err.message).toBe(
      'forking acme/widget: the code host answered HTTP 409: repository already exists [uname: carol, name: widget]',
    );
  });

  it('brings a fork up to its parent; an older server without merge-upstream is a 404', async () => {
    const upstream = fake.commit('acme', 'widget', { branch: 'main', files: { 'b.py': 'y = 2\n' } });
    expect(fake.branchHead('sam', 'widget', 'main')).not.toBe(upstream);
    await host(stranger.token).syncFork('sam', 'widget', 'main');
    expect(fake.branchHead('sam', 'widget', 'main')).toBe(upstream);
    await host(stranger.token).syncFork('sam', 'widget', 'main');
    expect(fake.branchHead('sam', 'widget', 'main')).toBe(upstream);

    // a server with neither Gitea's nor Forgejo's route: both tried, the 404 reported
    fake.failNext('POST', /merge-upstream$/, { status: 404 });
    const tried = fake.requests.length;
    const old = await failure(host(stranger.token).syncFork('sam', 'widget', 'main'));
    expect(old.status).toBe(404);
    expect(old.message).toMatch(/^syncing the fork sam\/widget: the code host answered HTTP 404/);
    expect(fake.requests.slice(tried).map((r) => [r.path, r.status])).toEqual([
      ['/api/v1/repos/sam/widget/merge-upstream', 404],
      ['/api/v1/repos/sam/widget/sync_fork/main', 404],
    ]);
  });

  it('opens a draft from a fork as a WIP: title, reads it back, and refuses a second one as pull_exists', async () => {
    fake.commit('sam', 'widget', { branch: 'emend/1-fix', files: { 'a.py': 'x = 3\n' } });
    const from = { owner: 'sam', name: 'widget' };
    const opened = await host(stranger.token).openPull({
      owner: 'acme',
      name: 'widget',
      branch: 'emend/1-fix',
      from,
      base: 'main',
      title: 'Fix x',
      body: 'the summary',
      draft: true,
    });
    expect(opened).toEqual({ number: 1, url: `${fake.webUrl}/acme/widget/pulls/1`, draft: true });
    const [stored] = fake.pulls('acme', 'widget');
    expect(stored).toMatchObject({
      title: 'WIP: Fix x',
      body: 'the summary',
      user: 'sam',
      head: { owner: 'sam', repo: 'widget', ref: 'emend/1-fix' },
      base: 'main',
    });
    expect((await host(stranger.token).pull('acme', 'widget', 1)).draft).toBe(true);

    const again = await failure(
      host(stranger.token).openPull({
        owner: 'acme',
        name: 'widget',
        branch: 'emend/1-fix',
        from,
        base: 'main',
        title: 'Fix x',
        body: '',
        draft: true,
      }),
    );
    expect(again.status).toBe(409);
    expect(again.refusal).toBe('pull_exists');
    expect(again.message).toContain('pull request already exists for these targets');
    expect(await host(stranger.token).openPullFrom('acme', 'widget', 'emend/1-fix', from)).toEqual(opened);
    expect(await host(stranger.token).openPullFrom('acme', 'widget', 'emend/1-fix')).toBeUndefined();
    expect(await host(stranger.token).openPullFrom('acme', 'widget', 'emend/2-other', from)).toBeUndefined();
  });

  it('opens a ready pull request in the repository itself', async () => {
    fake.commit('acme', 'widget', { branch: 'emend/3-ready', files: { 'c.py': 'z = 1\n' } });
    const opened = await host(alice.token).openPull({
      owner: 'acme',
      name: 'widget',
      branch: 'emend/3-ready',
      base: 'main',
      title: 'Add z',
      body: 'b',
      draft: false,
    });
    expect(opened.draft).toBe(false);
    expect(fake.pulls('acme', 'widget').find((p) => p.number === opened.number)?.title).toBe('Add z');
    expect(await host(alice.token).openPullFrom('acme', 'widget', 'emend/3-ready')).toEqual(opened);
  });

  it('refuses a read-only token’s pull request naming the scope it lacks', async () => {
    const err = await failure(
      host(readOnly.token).openPull({
        owner: 'acme',
        name: 'widget',
        branch: 'emend/3-ready',
        base: 'main',
        title: 't',
        body: '',
        draft: false,
      }),
    );
    expect(err.status).toBe(403);
    expect(err.message).toBe(
      'opening a pull request on acme/widget: the code host answered HTTP 403: ' +
        'token does not have at least one of required scope(s): [write:repository]',
    );
  });

  it('reads a merged pull request back with merged_at and the commits of others after ours', async () => {
    const ours = fake.commit('acme', 'widget', {
      branch: 'emend/4-merge',
      files: { 'd.py': 'w = 1\n' },
      author: { name: 'emend', email: 'bot@emend.example' },
    });
    const opened = await host(alice.token).openPull({
      owner: 'acme',
      name: 'widget',
      branch: 'emend/4-merge',
      base: 'main',
      title: 'Add w',
      body: '',
      draft: false,
    });
    const open = await host(alice.token).pull('acme', 'widget', opened.number);
    expect(open).toMatchObject({ state: 'open', merged: false, mergedAt: null, headSha: ours });
    const theirs = fake.commit('acme', 'widget', {
      branch: 'emend/4-merge',
      files: { 'd.py': 'w = 2\n' },
      message: 'tweak',
      author: { name: 'Alice', email: 'alice@users.example.com' },
    });
    fake.mergePull('acme', 'widget', opened.number);
    const merged = await host().pull('acme', 'widget', opened.number);
    expect(merged).toMatchObject({ number: opened.number, state: 'closed', merged: true, headSha: theirs });
    expect(merged.mergedAt).toBeInstanceOf(Date);
    expect(Math.abs(Date.now() - (merged.mergedAt as Date).getTime())).toBeLessThan(60_000);
    expect(merged.url).toBe(`${fake.webUrl}/acme/widget/pulls/${opened.number}`);
    const commits = await host().pullCommits('acme', 'widget', opened.number);
    expect(commits.map((c) => [c.sha, c.authorEmail, c.committerEmail])).toEqual([
      [ours, 'bot@emend.example', 'bot@emend.example'],
      [theirs, 'alice@users.example.com', 'alice@users.example.com'],
    ]);
    expect(commits[1]?.message.trim()).toBe('tweak');
    const missing = await failure(host().pull('acme', 'widget', 999));
    expect(missing.status).toBe(404);
  });

  it('reads every page of a long list of commits', async () => {
    for (let i = 0; i < 52; i++)
      fake.commit('acme', 'widget', { branch: 'emend/5-long', files: { 'e.txt': `${i}\n` } });
    const opened = await host(alice.token).openPull({
      owner: 'acme',
      name: 'widget',
      branch: 'emend/5-long',
      base: 'main',
      title: 'Long',
      body: '',
      draft: false,
    });
    expect(await host().pullCommits('acme', 'widget', opened.number)).toHaveLength(52);
  });

  it('takes the API address with a trailing slash', async () => {
    expect(await gitea({ apiUrl: `${fake.apiUrl}/`, fetch, token: alice.token }).user()).toBe('alice');
  });

  it('turns an unreachable host and one that never answers into ScmError(null) without hanging', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const gone = await failure(gitea({ apiUrl: `http://127.0.0.1:${port}/api/v1`, fetch, token: alice.token }).user());
    expect(gone.status).toBeNull();
    expect(gone.message).toBe('checking the token: the code host could not be reached');

    const silent = createServer(() => {
      /* never answers */
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const apiUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/api/v1`;
      const started = Date.now();
      const slow = await failure(gitea({ apiUrl, fetch, token: alice.token, timeoutMs: 300 }).repo('acme', 'widget'));
      expect(slow.status).toBeNull();
      expect(slow.message).toBe('reading acme/widget: the code host did not answer in time');
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  it('never puts a token in an error message', () => {
    expect(errors.length).toBeGreaterThan(8);
    for (const err of errors) for (const token of tokens) expect(err.message).not.toContain(token);
  });
});

describe('giteaKind', () => {
  it('reads OWNER/NAME repository paths by Gitea’s name rules', () => {
    expect(giteaKind.repoPath(['acme', 'widget'])).toEqual({ owner: 'acme', name: 'widget' });
    expect(giteaKind.repoPath(['my.org', 'a_b-c.d'])).toEqual({ owner: 'my.org', name: 'a_b-c.d' });
    expect(giteaKind.repoPath(['acme'])).toBe('the path must be OWNER/NAME');
    expect(giteaKind.repoPath(['group', 'sub', 'project'])).toBe('the path must be OWNER/NAME');
    for (const bad of [
      ['-acme', 'widget'],
      ['acme-', 'widget'],
      ['ac..me', 'widget'],
      ['acme', '..'],
      ['acme', '.'],
      ['acme', 'wid get'],
    ])
      expect(giteaKind.repoPath(bad)).toBe('the owner or repository name is not valid');
  });

  it('reads a pull request’s web path back', () => {
    expect(giteaKind.pullOfPath('acme/widget/pulls/12')).toEqual({ owner: 'acme', name: 'widget', number: 12 });
    expect(giteaKind.pullOfPath('acme/widget/pull/12')).toBeUndefined();
    expect(giteaKind.pullOfPath('acme/widget/issues/12')).toBeUndefined();
  });
});

describe('Gitea adapter on an instance under a sub-path', () => {
  const live = useFake(() => startFakeGitea({ subPath: '/gitea' }));

  it('calls the API under the sub-path the operator wrote and reads web addresses with it', async () => {
    const { fake } = live;
    expect(fake.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/gitea\/api\/v1$/);
    const alice = fake.addUser('alice');
    fake.createRepo('acme', 'widget', { collaborators: ['alice'] });
    const host = gitea({ apiUrl: fake.apiUrl, fetch, token: alice.token });
    expect(await host.user()).toBe('alice');
    expect(await host.repo('acme', 'widget')).toMatchObject({
      htmlUrl: `${fake.webUrl}/acme/widget`,
      cloneUrl: `${fake.webUrl}/acme/widget.git`,
      canPush: true,
    });
    // the same API without the sub-path is not Gitea's
    const root = fake.apiUrl.replace('/gitea/api/v1', '/api/v1');
    const outside = await gitea({ apiUrl: root, fetch, token: alice.token })
      .user()
      .then(
        () => undefined,
        (e: unknown) => e as ScmError,
      );
    expect(outside?.status).toBe(404);
    expect(fake.requests.map((r) => r.path)).toContain('/gitea/api/v1/user');
  });
});

describe('Gitea adapter on Forgejo', () => {
  const live = useFake(() => startFakeGitea({ flavour: 'forgejo' }));

  it('syncs a fork through Forgejo’s sync_fork when merge-upstream is not there', async () => {
    const { fake } = live;
    const sam = fake.addUser('sam');
    fake.createRepo('acme', 'widget');
    const host = gitea({ apiUrl: fake.apiUrl, fetch, token: sam.token });
    const fork = await host.fork('acme', 'widget');
    const upstream = fake.commit('acme', 'widget', { branch: 'main', files: { 'b.txt': 'b\n' } });
    const seen = fake.requests.length;
    await host.syncFork(fork.owner, fork.name, 'main');
    expect(fake.branchHead('sam', 'widget', 'main')).toBe(upstream);
    expect(fake.requests.slice(seen).map((r) => [r.method, r.path, r.status])).toEqual([
      ['POST', '/api/v1/repos/sam/widget/merge-upstream', 404],
      ['POST', '/api/v1/repos/sam/widget/sync_fork/main', 204],
    ]);
  });
});
