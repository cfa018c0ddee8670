import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CodeHost, ScmError } from '../../src/scm/code-host.js';
import { gitLab, gitLabKind } from '../../src/scm/gitlab/gitlab.js';
import { HOST_KINDS } from '../../src/scm/kinds.js';
import { ACCESS, type FakeGitLab, startFakeGitLab } from '../support/fake-gitlab/server.js';
import { isolatedGitEnv } from '../support/git-env.js';

/** The GitLab adapter against the fake GitLab over real HTTP (gitbeaker through our fetch). */

describe('GitLab adapter against the fake GitLab', () => {
  let gl: FakeGitLab;
  let home: string;
  let owner: { login: string; token: string };
  let dev: { login: string; token: string };
  let reporter: { login: string; token: string };
  let stranger: { login: string; token: string };
  const host = (token?: string): CodeHost => gitLab({ apiUrl: gl.apiUrl, fetch, token });

  const git = (cwd: string, token: string, ...args: string[]) => {
    const basic = Buffer.from(`${gitLabKind.gitUser}:${token}`).toString('base64');
    const child = spawn('git', ['-c', `http.extraHeader=Authorization: Basic ${basic}`, ...args], {
      cwd,
      env: {
        ...isolatedGitEnv(home),
        GIT_AUTHOR_NAME: 'Dev',
        GIT_AUTHOR_EMAIL: 'dev@users.example.com',
        GIT_COMMITTER_NAME: 'Dev',
        GIT_COMMITTER_EMAIL: 'dev@users.example.com',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    return new Promise<{ status: number | null; stderr: string }>((resolve) =>
      child.on('close', (status) => resolve({ status, stderr })),
    );
  };

  beforeAll(async () => {
    gl = await startFakeGitLab();
    home = mkdtempSync(join(tmpdir(), 'emend-gitlab-adapter-'));
    owner = gl.addUser('olga');
    dev = gl.addUser('dev');
    reporter = gl.addUser('rita');
    stranger = gl.addUser('stan');
    gl.createRepo('acme/platform/tools', 'widget', {
      files: { 'README.md': '# widget\n', 'src/a.py': 'x = 1\n' },
      collaborators: ['dev'],
      reporters: ['rita'],
      protectedBranches: ['main'],
    });
    gl.createRepo('acme/platform', 'inside', { visibility: 'internal' });
    gl.createRepo('acme', 'vault', { visibility: 'private', reporters: ['rita'] });
    gl.createRepo('olga', 'notes', { visibility: 'private' });
    gl.addGroupMember('acme/platform', 'olga', ACCESS.maintainer);
  });
  afterAll(async () => {
    await gl?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('is registered as the gitlab kind, with merge requests and the oauth2 git user', () => {
    expect(HOST_KINDS.gitlab).toBe(gitLabKind);
    expect(gitLabKind.kind).toBe('gitlab');
    expect(gitLabKind.brand).toBe('gitlab');
    expect(gitLabKind.pullNoun).toBe('merge request');
    expect(gitLabKind.gitUser).toBe('oauth2');
    expect(gitLabKind.oauth).toEqual({
      authorizePath: '/oauth/authorize',
      tokenPath: '/oauth/token',
      connectScope: 'api',
      loginScope: 'read_user',
    });
  });

  it('reads nested-group paths and merge request URLs, and says why other paths are not projects', () => {
    expect(gitLabKind.repoPath(['acme', 'platform', 'tools', 'widget'])).toEqual({
      owner: 'acme/platform/tools',
      name: 'widget',
    });
    expect(gitLabKind.repoPath(['alice', 'calc'])).toEqual({ owner: 'alice', name: 'calc' });
    expect(gitLabKind.repoPath(['acme', 'widget', '-', 'tree', 'main'])).toMatch(/page of the project/);
    expect(gitLabKind.repoPath(['widget'])).toMatch(/GROUP\/…\/PROJECT/);
    expect(gitLabKind.repoPath(Array.from({ length: 21 }, (_, i) => `g${i}`))).toMatch(/2 to 20/);
    expect(gitLabKind.repoPath(['acme', '-widget'])).toMatch(/"-widget" is not a valid/);
    expect(gitLabKind.repoPath(['acme', 'widget.atom'])).toMatch(/not a valid/);
    expect(gitLabKind.repoPath(['acme', 'wid get'])).toMatch(/not a valid/);
    expect(gitLabKind.pullOfPath('acme/platform/tools/widget/-/merge_requests/7')).toEqual({
      owner: 'acme/platform/tools',
      name: 'widget',
      number: 7,
    });
    expect(gitLabKind.pullOfPath('acme/widget/pull/7')).toBeUndefined();
  });

  it('names the token user', async () => {
    expect(await host(dev.token).user()).toBe('dev');
    const err = await host('glpat-wrongwrongwrongwrong')
      .user()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScmError);
    expect((err as ScmError).status).toBe(401);
    expect((err as ScmError).message).toBe('checking the token: the code host answered HTTP 401: 401 Unauthorized');
  });

  it('maps a project in a nested group, with canPush from the access level', async () => {
    const asDev = await host(dev.token).repo('acme/platform/tools', 'widget');
    expect(asDev).toEqual({
      owner: 'acme/platform/tools',
      name: 'widget',
      fullName: 'acme/platform/tools/widget',
      private: false,
      visibility: 'public',
      defaultBranch: 'main',
      htmlUrl: `${gl.webUrl}/acme/platform/tools/widget`,
      cloneUrl: `${gl.webUrl}/acme/platform/tools/widget.git`,
      fork: false,
      canPush: true,
    });
    // Maintainer through a parent group; Reporter reads only; others and anonymous read a public project.
    expect((await host(owner.token).repo('acme/platform/tools', 'widget'))?.canPush).toBe(true);
    expect((await host(reporter.token).repo('acme/platform/tools', 'widget'))?.canPush).toBe(false);
    expect((await host(stranger.token).repo('acme/platform/tools', 'widget'))?.canPush).toBe(false);
    expect((await host().repo('acme/platform/tools', 'widget'))?.canPush).toBe(false);
  });

  it('maps visibility: internal is private to the access rules and hidden from anonymous callers', async () => {
    const inside = await host(stranger.token).repo('acme/platform', 'inside');
    expect(inside).toMatchObject({ visibility: 'internal', private: true, canPush: false });
    expect(await host().repo('acme/platform', 'inside')).toBeNull();
    expect(await host(reporter.token).repo('acme', 'vault')).toMatchObject({ visibility: 'private', private: true });
    expect(await host(stranger.token).repo('acme', 'vault')).toBeNull();
    expect(await host(owner.token).repo('olga', 'notes')).toMatchObject({ owner: 'olga', canPush: true });
    expect(await host(dev.token).repo('acme', 'nothing-here')).toBeNull();
  });

  it('creates a private or public project in the token user namespace, and reports a taken name', async () => {
    const made = await host(dev.token).createRepo('site', true, 'a site');
    expect(made).toMatchObject({ owner: 'dev', name: 'site', fullName: 'dev/site', visibility: 'private' });
    expect(gl.repo('dev', 'site')).toMatchObject({ visibility: 'private' });
    expect(gl.branchHead('dev', 'site', 'main')).toBeUndefined();
    expect(await host(dev.token).createRepo('blog', false)).toMatchObject({ visibility: 'public', private: false });
    const err = await host(dev.token)
      .createRepo('site', true)
      .catch((e: unknown) => e);
    expect((err as ScmError).message).toBe(
      'creating the repository site: the code host answered HTTP 400: name has already been taken; path has already been taken',
    );
  });

  it('forks once and finds the fork again; syncFork is a no-op', async () => {
    const gh = host(reporter.token);
    const fork = await gh.fork('acme/platform/tools', 'widget');
    expect(fork).toMatchObject({ owner: 'rita', name: 'widget', fork: true, canPush: true });
    expect(await gh.fork('acme/platform/tools', 'widget')).toEqual(fork);
    const forkCalls = gl.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/fork'));
    expect(forkCalls).toHaveLength(1);
    expect(gl.repo('rita', 'widget')).toMatchObject({ fork: true, parent: 'acme/platform/tools/widget' });
    const before = gl.requests.length;
    await gh.syncFork('rita', 'widget', 'main');
    expect(gl.requests.length).toBe(before);
  });

  it('opens a merge request in place, a draft by the Draft: prefix, and refuses a second one as pull_exists', async () => {
    gl.commit('acme/platform/tools', 'widget', {
      branch: 'emend/1-fix',
      files: { 'src/a.py': 'x = 2\n' },
      message: 'fix',
    });
    const gh = host(dev.token);
    const opened = await gh.openPull({
      owner: 'acme/platform/tools',
      name: 'widget',
      branch: 'emend/1-fix',
      base: 'main',
      title: 'Fix a',
      body: 'summary, files, validation, task id',
      draft: true,
    });
    expect(opened).toEqual({
      number: 1,
      url: `${gl.webUrl}/acme/platform/tools/widget/-/merge_requests/1`,
      draft: true,
    });
    const [mr] = gl.pulls('acme/platform/tools', 'widget');
    expect(mr).toMatchObject({ title: 'Draft: Fix a', body: 'summary, files, validation, task id', draft: true });
    expect(mr?.head).toEqual({ owner: 'acme/platform/tools', repo: 'widget', ref: 'emend/1-fix' });

    const again = await gh
      .openPull({
        owner: 'acme/platform/tools',
        name: 'widget',
        branch: 'emend/1-fix',
        base: 'main',
        title: 'Fix a',
        body: '',
        draft: false,
      })
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ScmError);
    expect((again as ScmError).status).toBe(409);
    expect((again as ScmError).refusal).toBe('pull_exists');
    expect((again as ScmError).message).toMatch(/Another open merge request already exists for this source branch: !1/);
    expect(await gh.openPullFrom('acme/platform/tools', 'widget', 'emend/1-fix')).toEqual(opened);
    expect(await gh.openPullFrom('acme/platform/tools', 'widget', 'emend/other')).toBeUndefined();
  });

  it('opens a merge request from a fork on the fork with target_project_id, and finds it by source project', async () => {
    const gh = host(reporter.token);
    gl.commit('rita', 'widget', { branch: 'emend/2-fix', files: { 'src/a.py': 'x = 3\n' }, message: 'fix from fork' });
    const from = { owner: 'rita', name: 'widget' };
    const opened = await gh.openPull({
      owner: 'acme/platform/tools',
      name: 'widget',
      branch: 'emend/2-fix',
      from,
      base: 'main',
      title: 'Fix from a fork',
      body: 'body',
      draft: false,
    });
    expect(opened.draft).toBe(false);
    const mr = gl.pulls('acme/platform/tools', 'widget').find((p) => p.number === opened.number);
    expect(mr?.head).toEqual({ owner: 'rita', repo: 'widget', ref: 'emend/2-fix' });
    expect(mr?.title).toBe('Fix from a fork');
    expect(gl.diff('acme/platform/tools', 'widget', 'main', `refs/pull/${opened.number}/head`)).toContain('+x = 3');
    const create = gl.requests.find((r) => r.method === 'POST' && r.path.endsWith('/merge_requests'));
    expect(create).toBeDefined();
    expect(
      gl.requests.some((r) => r.method === 'POST' && r.path === '/api/v4/projects/rita%2Fwidget/merge_requests'),
    ).toBe(true);
    expect(await gh.openPullFrom('acme/platform/tools', 'widget', 'emend/2-fix', from)).toEqual(opened);
    // The same branch name in the target project itself would be another merge request: none is open.
    expect(await gh.openPullFrom('acme/platform/tools', 'widget', 'emend/2-fix')).toBeUndefined();
    expect(await gh.openPullFrom('acme/platform/tools', 'widget', 'emend/1-fix', from)).toBeUndefined();
    // A Reporter cannot open one from the target project's own branches.
    const refused = await gh
      .openPull({
        owner: 'acme/platform/tools',
        name: 'widget',
        branch: 'emend/1-fix',
        base: 'main',
        title: 't',
        body: '',
        draft: false,
      })
      .catch((e: unknown) => e);
    expect((refused as ScmError).status).toBe(403);
    expect((refused as ScmError).message).toMatch(/HTTP 403: 403 Forbidden$/);
  });

  it('reads a merged merge request back with merged_at, its head and the commits others added', async () => {
    const gh = host(dev.token);
    gl.commit('acme/platform/tools', 'widget', {
      branch: 'emend/1-fix',
      files: { 'src/b.py': 'y = 1\n' },
      message: 'reviewer touch',
      author: { name: 'Reviewer', email: 'reviewer@example.com' },
    });
    const open = await gh.pull('acme/platform/tools', 'widget', 1);
    expect(open).toMatchObject({ number: 1, state: 'open', merged: false, mergedAt: null, draft: true });
    expect(open.headSha).toBe(gl.branchHead('acme/platform/tools', 'widget', 'emend/1-fix'));
    gl.mergePull('acme/platform/tools', 'widget', 1);
    const merged = await gh.pull('acme/platform/tools', 'widget', 1);
    expect(merged).toMatchObject({ state: 'closed', merged: true, headSha: open.headSha });
    expect(merged.mergedAt).toBeInstanceOf(Date);
    expect(merged.mergedAt!.toISOString()).toBe(
      new Date(gl.pulls('acme/platform/tools', 'widget')[0]!.merged_at!).toISOString(),
    );
    const commits = await gh.pullCommits('acme/platform/tools', 'widget', 1);
    expect(commits.map((c) => c.message)).toEqual(['fix', 'reviewer touch']);
    expect(commits[1]).toMatchObject({ authorEmail: 'reviewer@example.com', committerEmail: 'reviewer@example.com' });
    expect(commits[1]!.sha).toBe(open.headSha);
    const missing = await gh.pull('acme/platform/tools', 'widget', 99).catch((e: unknown) => e);
    expect((missing as ScmError).status).toBe(404);
  });

  it('turns an expired OAuth token into an ScmError with GitLab words', async () => {
    gl.failNext('GET', /^\/user$/, {
      status: 401,
      body: {
        error: 'invalid_token',
        error_description: 'Token is expired. You can either do re-authorization or token refresh.',
      },
    });
    const err = (await host(dev.token)
      .user()
      .catch((e: unknown) => e)) as ScmError;
    expect(err.status).toBe(401);
    expect(err.message).toBe(
      'checking the token: the code host answered HTTP 401: Token is expired. You can either do re-authorization or token refresh.',
    );
  });

  it('reads a proxy page that is not JSON by its status text, once (no retry of 502)', async () => {
    gl.failNext('GET', /^\/projects\/acme%2Fvault$/, {
      status: 502,
      body: '<html>bad gateway</html>',
      headers: { 'content-type': 'text/html' },
    });
    const before = gl.requests.length;
    const err = (await host(reporter.token)
      .repo('acme', 'vault')
      .catch((e: unknown) => e)) as ScmError;
    expect(err.status).toBe(502);
    expect(err.message).toBe('reading acme/vault: the code host answered HTTP 502: Bad Gateway');
    expect(gl.requests.length).toBe(before + 1);
  });

  it('sends everything through the given fetch with a Bearer token, under a relative URL root', async () => {
    const seen: { url: string; auth: string | null }[] = [];
    const viaPrefix: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      seen.push({ url, auth: new Headers(init?.headers).get('authorization') });
      // The operator's API root is /gitlab/api/v4 (a relative URL root): the fake serves /api/v4.
      return fetch(url.replace('/gitlab/api/v4', '/api/v4'), init);
    };
    const gh = gitLab({ apiUrl: `${gl.webUrl}/gitlab/api/v4/`, fetch: viaPrefix, token: dev.token });
    expect(await gh.user()).toBe('dev');
    expect((await gh.repo('acme/platform/tools', 'widget'))?.fullName).toBe('acme/platform/tools/widget');
    expect(seen.map((s) => s.url)).toEqual([
      `${gl.webUrl}/gitlab/api/v4/user`,
      `${gl.webUrl}/gitlab/api/v4/projects/acme%2Fplatform%2Ftools%2Fwidget`,
    ]);
    expect(seen.every((s) => s.auth === `Bearer ${dev.token}`)).toBe(true);
  });

  it('pushes with git as oauth2 + token, and a protected branch is refused in GitLab words', async () => {
    const dir = join(home, 'clone');
    expect(
      (await git(home, dev.token, 'clone', '--quiet', `${gl.webUrl}/acme/platform/tools/widget.git`, dir)).status,
    ).toBe(0);
    writeFileSync(join(dir, 'src', 'a.py'), 'x = 4\n');
    expect((await git(dir, dev.token, 'commit', '--quiet', '-am', 'dev change')).status).toBe(0);
    expect((await git(dir, dev.token, 'push', '--quiet', 'origin', 'HEAD:refs/heads/emend/3-fix')).status).toBe(0);
    expect(gl.files('acme/platform/tools', 'widget', 'emend/3-fix')['src/a.py']).toBe('x = 4\n');
    const refused = await git(dir, dev.token, 'push', 'origin', 'HEAD:refs/heads/main');
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain(
      'remote: GitLab: You are not allowed to push code to protected branches on this project.',
    );
    const reporterPush = await git(dir, reporter.token, 'push', 'origin', 'HEAD:refs/heads/emend/4-fix');
    expect(reporterPush.status).not.toBe(0);
    expect(reporterPush.stderr).toMatch(/403/);
    expect(reporterPush.stderr).not.toContain(reporter.token);
  });
});
