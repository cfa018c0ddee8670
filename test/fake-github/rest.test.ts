import { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';

/** The status and body of a failed Octokit call. */
async function failure(p: Promise<unknown>): Promise<{
  status: number;
  data: Record<string, unknown>;
  headers: Record<string, string | number | undefined>;
  message: string;
}> {
  try {
    await p;
  } catch (err) {
    const e = err as {
      status: number;
      response: { data: Record<string, unknown>; headers: Record<string, string | number | undefined> };
      message: string;
    };
    return { status: e.status, data: e.response.data, headers: e.response.headers, message: e.message };
  }
  throw new Error('expected the call to fail');
}

describe('fake GitHub: REST through Octokit', () => {
  let gh: FakeGitHub;
  let alice: { login: string; token: string };
  let bob: { login: string; token: string };
  let carol: { login: string; token: string };
  const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
  const client = (token?: string) => new Octokit({ ...(token ? { auth: token } : {}), baseUrl: gh.apiUrl, log: quiet });

  beforeAll(async () => {
    gh = await startFakeGitHub();
    alice = gh.addUser('alice');
    bob = gh.addUser('bob', { token: 'ghp_bobbobbobbobbobbobbobbobbobbobbobbobb' });
    carol = gh.addUser('carol');
    gh.createRepo('acme', 'widget', {
      files: { 'README.md': '# widget\n', 'src/a.py': 'x = 1\n' },
      collaborators: ['alice'],
      protectedBranches: ['main'],
    });
    gh.createRepo('acme', 'secret', { private: true, collaborators: ['alice'] });
    gh.createRepo('acme', 'nodrafts', { allowDrafts: false, collaborators: ['alice'] });
  });
  afterAll(async () => {
    await gh?.close();
  });

  it('answers GET /user for the token, token and Bearer alike, and 401 Bad credentials for an unknown token', async () => {
    expect(alice.token).toMatch(/^ghp_[A-Za-z0-9]{36}$/);
    const { data, headers } = await client(alice.token).rest.users.getAuthenticated();
    expect(data).toMatchObject({ login: 'alice', type: 'User', name: 'alice' });
    expect(typeof data.id).toBe('number');
    expect(headers['x-ratelimit-resource']).toBe('core');

    const bearer = await fetch(`${gh.apiUrl}/user`, { headers: { authorization: `Bearer ${bob.token}` } });
    expect(((await bearer.json()) as { login: string }).login).toBe('bob');

    const bad = await failure(client('ghp_nope').rest.users.getAuthenticated());
    expect(bad.status).toBe(401);
    expect(bad.data).toMatchObject({
      message: 'Bad credentials',
      documentation_url: expect.stringMatching(/^https:\/\/docs\.github\.com\/rest/),
    });

    const anonymous = await failure(client().rest.users.getAuthenticated());
    expect(anonymous.status).toBe(401);
    expect(anonymous.data.message).toBe('Requires authentication');
  });

  it('counts the rate limit down per token', async () => {
    const first = await client(carol.token).rest.users.getAuthenticated();
    const second = await client(carol.token).rest.users.getAuthenticated();
    const other = await client(gh.addUser('dave').token).rest.users.getAuthenticated();
    expect(first.headers['x-ratelimit-limit']).toBe('5000');
    expect(Number(second.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-remaining']) - 1);
    expect(Number(second.headers['x-ratelimit-used'])).toBe(Number(first.headers['x-ratelimit-used']) + 1);
    expect(Number(other.headers['x-ratelimit-remaining'])).toBeGreaterThan(
      Number(second.headers['x-ratelimit-remaining']),
    );
    expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    const anon = await client().rest.repos.get({ owner: 'acme', repo: 'widget' });
    expect(anon.headers['x-ratelimit-limit']).toBe('60');
  });

  it('shows public repositories to anyone, private ones only to people with access (404 otherwise)', async () => {
    const pub = await client().rest.repos.get({ owner: 'acme', repo: 'widget' });
    expect(pub.data).toMatchObject({
      name: 'widget',
      full_name: 'acme/widget',
      owner: { login: 'acme', type: 'User' },
      private: false,
      visibility: 'public',
      default_branch: 'main',
      fork: false,
      html_url: `${gh.webUrl}/acme/widget`,
      clone_url: `${gh.webUrl}/acme/widget.git`,
      permissions: { admin: false, push: false, pull: true },
    });
    const asCollaborator = await client(alice.token).rest.repos.get({ owner: 'acme', repo: 'widget' });
    expect(asCollaborator.data.permissions).toMatchObject({ admin: false, push: true, pull: true });

    const priv = await client(alice.token).rest.repos.get({ owner: 'acme', repo: 'secret' });
    expect(priv.data).toMatchObject({ private: true, visibility: 'private', permissions: { push: true } });

    for (const token of [bob.token, undefined]) {
      const hidden = await failure(client(token).rest.repos.get({ owner: 'acme', repo: 'secret' }));
      expect(hidden.status).toBe(404);
      expect(hidden.data).toMatchObject({
        message: 'Not Found',
        documentation_url: 'https://docs.github.com/rest/repos/repos#get-a-repository',
      });
      expect(hidden.headers['x-ratelimit-remaining']).toBeDefined();
    }
    const missing = await failure(client(bob.token).rest.repos.get({ owner: 'acme', repo: 'nope' }));
    expect(missing.status).toBe(404);
  });

  it('creates repositories for the caller, empty or initialised, and 422 on a duplicate name', async () => {
    const { status, data } = await client(bob.token).rest.repos.createForAuthenticatedUser({
      name: 'scratch',
      private: true,
      description: 'mine',
    });
    expect(status).toBe(201);
    expect(data).toMatchObject({
      full_name: 'bob/scratch',
      private: true,
      description: 'mine',
      owner: { login: 'bob' },
      permissions: { admin: true },
    });
    expect(gh.branchHead('bob', 'scratch', 'main')).toBeUndefined();

    await client(bob.token).rest.repos.createForAuthenticatedUser({ name: 'inited', auto_init: true });
    expect(Object.keys(gh.files('bob', 'inited', 'main'))).toEqual(['README.md']);

    const dup = await failure(client(bob.token).rest.repos.createForAuthenticatedUser({ name: 'scratch' }));
    expect(dup.status).toBe(422);
    expect(dup.data).toMatchObject({
      message: 'Validation Failed',
      errors: [
        { resource: 'Repository', code: 'custom', field: 'name', message: 'name already exists on this account' },
      ],
      documentation_url: expect.stringContaining('docs.github.com/rest/repos'),
    });
    expect(dup.message).toContain('name already exists on this account');
    expect(gh.repo('bob', 'scratch')).toEqual({ private: true, defaultBranch: 'main', fork: false, allowDrafts: true });
  });

  it('forks (returning the existing fork the second time) and syncs a fork branch with its upstream', async () => {
    const first = await client(bob.token).rest.repos.createFork({ owner: 'acme', repo: 'widget' });
    expect(first.status).toBe(202);
    expect(first.data).toMatchObject({
      full_name: 'bob/widget',
      fork: true,
      owner: { login: 'bob' },
      default_branch: 'main',
      clone_url: `${gh.webUrl}/bob/widget.git`,
    });
    expect(first.data.parent).toMatchObject({
      full_name: 'acme/widget',
      name: 'widget',
      owner: { login: 'acme' },
      clone_url: `${gh.webUrl}/acme/widget.git`,
      default_branch: 'main',
    });
    const again = await client(bob.token).rest.repos.createFork({ owner: 'acme', repo: 'widget' });
    expect(again.data.id).toBe(first.data.id);
    expect(gh.repo('bob', 'widget')).toMatchObject({ fork: true, parent: 'acme/widget' });
    expect(gh.branchHead('bob', 'widget', 'main')).toBe(gh.branchHead('acme', 'widget', 'main'));

    const upstream = gh.commit('acme', 'widget', {
      branch: 'main',
      files: { 'src/a.py': 'x = 2\n' },
      message: 'upstream moves',
    });
    const synced = await client(bob.token).rest.repos.mergeUpstream({ owner: 'bob', repo: 'widget', branch: 'main' });
    expect(synced.status).toBe(200);
    expect(synced.data).toMatchObject({ merge_type: 'fast-forward', base_branch: 'acme:main' });
    expect(gh.branchHead('bob', 'widget', 'main')).toBe(upstream);

    const noop = await client(bob.token).rest.repos.mergeUpstream({ owner: 'bob', repo: 'widget', branch: 'main' });
    expect(noop.data.merge_type).toBe('none');

    gh.commit('bob', 'widget', { branch: 'main', files: { 'mine.txt': 'fork only\n' } });
    gh.commit('acme', 'widget', { branch: 'main', files: { 'theirs.txt': 'upstream only\n' } });
    const diverged = await failure(
      client(bob.token).rest.repos.mergeUpstream({ owner: 'bob', repo: 'widget', branch: 'main' }),
    );
    expect(diverged.status).toBe(409);

    const notMine = await failure(
      client(carol.token).rest.repos.mergeUpstream({ owner: 'bob', repo: 'widget', branch: 'main' }),
    );
    expect(notMine.status).toBe(403);

    const hidden = await failure(client(bob.token).rest.repos.createFork({ owner: 'acme', repo: 'secret' }));
    expect(hidden.status).toBe(404);
  });

  it('reads branches: head commit and protection; 404 Branch not found', async () => {
    gh.commit('acme', 'widget', { branch: 'feature/slash', files: { 'b.txt': 'b\n' } });
    const main = await client(alice.token).rest.repos.getBranch({ owner: 'acme', repo: 'widget', branch: 'main' });
    expect(main.data).toMatchObject({
      name: 'main',
      commit: { sha: gh.branchHead('acme', 'widget', 'main') },
      protected: true,
    });
    const slash = await client(alice.token).rest.repos.getBranch({
      owner: 'acme',
      repo: 'widget',
      branch: 'feature/slash',
    });
    expect(slash.data).toMatchObject({
      name: 'feature/slash',
      protected: false,
      commit: { sha: gh.branchHead('acme', 'widget', 'feature/slash') },
    });
    const missing = await failure(
      client(alice.token).rest.repos.getBranch({ owner: 'acme', repo: 'widget', branch: 'nope' }),
    );
    expect(missing.status).toBe(404);
    expect(missing.data.message).toBe('Branch not found');
  });

  it('opens pull requests, same-repository and from a fork, and reads them and their commits', async () => {
    gh.commit('acme', 'widget', {
      branch: 'fix-1',
      files: { 'src/a.py': 'x = 3\n' },
      message: 'fix one',
      author: { name: 'Alice', email: 'alice@users.example.com' },
    });
    const created = await client(alice.token).rest.pulls.create({
      owner: 'acme',
      repo: 'widget',
      head: 'fix-1',
      base: 'main',
      title: 'Fix one',
      body: 'Because.',
    });
    expect(created.status).toBe(201);
    const pr = created.data;
    expect(pr).toMatchObject({
      number: 1,
      html_url: `${gh.webUrl}/acme/widget/pull/1`,
      state: 'open',
      draft: false,
      title: 'Fix one',
      body: 'Because.',
      merged: false,
      merged_at: null,
      user: { login: 'alice' },
      head: {
        ref: 'fix-1',
        sha: gh.branchHead('acme', 'widget', 'fix-1'),
        label: 'acme:fix-1',
        repo: { full_name: 'acme/widget' },
      },
      base: { ref: 'main', sha: gh.branchHead('acme', 'widget', 'main'), repo: { full_name: 'acme/widget' } },
    });

    const commits = await client(alice.token).rest.pulls.listCommits({ owner: 'acme', repo: 'widget', pull_number: 1 });
    expect(commits.data).toHaveLength(1);
    expect(commits.data[0]).toMatchObject({
      commit: { message: 'fix one', author: { name: 'Alice', email: 'alice@users.example.com' } },
      author: { login: 'alice' },
    });
    expect(commits.data[0]!.commit.author!.date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    // A push to the head shows in head.sha; a merge closes the pull.
    const later = gh.commit('acme', 'widget', {
      branch: 'fix-1',
      files: { 'src/a.py': 'x = 4\n' },
      message: 'fix one, again',
    });
    expect((await client().rest.pulls.get({ owner: 'acme', repo: 'widget', pull_number: 1 })).data.head.sha).toBe(
      later,
    );
    const merge = gh.mergePull('acme', 'widget', 1);
    const merged = (await client(alice.token).rest.pulls.get({ owner: 'acme', repo: 'widget', pull_number: 1 })).data;
    expect(merged).toMatchObject({ state: 'closed', merged: true, merge_commit_sha: merge, head: { sha: later } });
    expect(merged.merged_at).toMatch(/Z$/);
    expect(gh.branchHead('acme', 'widget', 'main')).toBe(merge);
    expect(gh.files('acme', 'widget', 'main')['src/a.py']).toBe('x = 4\n');
    expect(
      (await client(alice.token).rest.pulls.listCommits({ owner: 'acme', repo: 'widget', pull_number: 1 })).data.map(
        (c) => c.commit.message,
      ),
    ).toEqual(['fix one', 'fix one, again']);
    expect(gh.pulls('acme', 'widget')[0]).toMatchObject({
      number: 1,
      head: { owner: 'acme', ref: 'fix-1' },
      base: 'main',
      state: 'closed',
      merged: true,
    });

    // From bob's fork, as a draft.
    await client(bob.token)
      .rest.repos.mergeUpstream({ owner: 'bob', repo: 'widget', branch: 'main' })
      .catch(() => undefined);
    gh.commit('bob', 'widget', {
      branch: 'bob-fix',
      from: 'main',
      files: { 'bob.txt': 'hello\n' },
      message: 'bob fix',
    });
    const fromFork = await client(bob.token).rest.pulls.create({
      owner: 'acme',
      repo: 'widget',
      head: 'bob:bob-fix',
      base: 'main',
      title: 'From a fork',
      draft: true,
      maintainer_can_modify: true,
    });
    expect(fromFork.data).toMatchObject({
      number: 2,
      draft: true,
      head: { ref: 'bob-fix', label: 'bob:bob-fix', repo: { full_name: 'bob/widget' } },
      maintainer_can_modify: true,
    });
    const forkCommits = await client().rest.pulls.listCommits({ owner: 'acme', repo: 'widget', pull_number: 2 });
    expect(forkCommits.data.map((c) => c.commit.message)).toContain('bob fix');
    expect(gh.diff('acme', 'widget', 'main', 'refs/pull/2/head')).toContain('+hello');

    const missing = await failure(client(bob.token).rest.pulls.get({ owner: 'acme', repo: 'widget', pull_number: 99 }));
    expect(missing.status).toBe(404);
  });

  it('refuses pull requests as GitHub does', async () => {
    const c = client(alice.token);
    const noHead = await failure(
      c.rest.pulls.create({ owner: 'acme', repo: 'widget', head: 'does-not-exist', base: 'main', title: 't' }),
    );
    expect(noHead.status).toBe(422);
    expect(noHead.data.errors).toEqual([{ resource: 'PullRequest', code: 'invalid', field: 'head' }]);

    const noBase = await failure(
      c.rest.pulls.create({ owner: 'acme', repo: 'widget', head: 'fix-1', base: 'nope', title: 't' }),
    );
    expect(noBase.data.errors).toEqual([{ resource: 'PullRequest', code: 'invalid', field: 'base' }]);

    // A branch whose commits are all on main already (fix-1 was merged).
    const nothing = await failure(
      c.rest.pulls.create({ owner: 'acme', repo: 'widget', head: 'fix-1', base: 'main', title: 't' }),
    );
    expect(nothing.status).toBe(422);
    expect(nothing.message).toContain('No commits between main and fix-1');
    expect(nothing.data.errors).toEqual([
      { resource: 'PullRequest', code: 'custom', message: 'No commits between main and fix-1' },
    ]);
    gh.commit('acme', 'widget', { branch: 'behind', files: { 'z.txt': 'z\n' } });

    gh.commit('acme', 'nodrafts', { branch: 'wip', files: { 'w.txt': 'w\n' } });
    const noDraft = await failure(
      c.rest.pulls.create({ owner: 'acme', repo: 'nodrafts', head: 'wip', base: 'main', title: 't', draft: true }),
    );
    expect(noDraft.status).toBe(422);
    expect(noDraft.message).toContain('Draft pull requests are not supported in this repository.');
    expect(gh.repo('acme', 'nodrafts')?.allowDrafts).toBe(false);
    const notDraft = await c.rest.pulls.create({
      owner: 'acme',
      repo: 'nodrafts',
      head: 'wip',
      base: 'main',
      title: 't',
    });
    expect(notDraft.status).toBe(201);
    const twice = await failure(
      c.rest.pulls.create({ owner: 'acme', repo: 'nodrafts', head: 'wip', base: 'main', title: 't' }),
    );
    expect(twice.status).toBe(422);
    expect(twice.message).toContain('A pull request already exists for acme:wip.');

    const hidden = await failure(
      client(bob.token).rest.pulls.create({ owner: 'acme', repo: 'secret', head: 'main', base: 'main', title: 't' }),
    );
    expect(hidden.status).toBe(404);
    const anonymous = await failure(
      client().rest.pulls.create({ owner: 'acme', repo: 'widget', head: 'behind', base: 'main', title: 't' }),
    );
    expect(anonymous.status).toBe(401);
    const readOnly = gh.addUser('reader', { readOnly: true });
    const forbidden = await failure(
      client(readOnly.token).rest.pulls.create({
        owner: 'acme',
        repo: 'widget',
        head: 'behind',
        base: 'main',
        title: 't',
      }),
    );
    expect(forbidden.status).toBe(403);
    expect(forbidden.data.message).toBe('Resource not accessible by personal access token');
  });

  it('answers anything else with GitHub 404 and injects failures with failNext', async () => {
    const other = await fetch(`${gh.apiUrl}/repos/acme/widget/issues`, {
      headers: { authorization: `token ${alice.token}` },
    });
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({
      message: 'Not Found',
      documentation_url: 'https://docs.github.com/rest',
      status: '404',
    });
    expect(other.headers.get('x-ratelimit-remaining')).not.toBeNull();

    gh.failNext('GET', /^\/repos\/acme\/widget$/, {
      status: 403,
      body: {
        message: 'API rate limit exceeded for user ID 1.',
        documentation_url: 'https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting',
      },
      headers: { 'x-ratelimit-remaining': '0' },
    });
    const limited = await failure(client(alice.token).rest.repos.get({ owner: 'acme', repo: 'widget' }));
    expect(limited.status).toBe(403);
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect(limited.data.message).toContain('rate limit');
    expect((await client(alice.token).rest.repos.get({ owner: 'acme', repo: 'widget' })).status).toBe(200);

    gh.failNext('POST', /\/pulls$/, { status: 502 });
    const bad = await failure(
      client(alice.token).rest.pulls.create({
        owner: 'acme',
        repo: 'widget',
        head: 'behind',
        base: 'main',
        title: 't',
      }),
    );
    expect(bad.status).toBe(502);
    expect(bad.data.message).toBe('Bad Gateway');

    const rest = gh.requests.filter((r) => r.kind === 'rest');
    expect(rest.some((r) => r.path === '/api/v3/repos/acme/widget' && r.status === 403 && r.authenticated)).toBe(true);
    expect(JSON.stringify(gh.requests)).not.toContain(alice.token);
  });
});
