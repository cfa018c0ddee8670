import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tasks } from '../../src/db/schema.js';
import { saveSiteFiles } from '../../src/sites/store.js';
import { checkOpenPulls } from '../../src/tasks/merge-tracking.js';
import { type FakeGitea, startFakeGitea } from '../support/fake-gitea/server.js';
import { CALC_REPO, GOOD_FIX, scriptCalcRun } from '../support/fix-script.js';
import { type Harness, forceStatus, newAccount, startHarness } from '../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../support/model-service.js';

/**
 * The service on a Gitea host (the Gitea double as the deployment's second host, `gitea`):
 * connecting with a token, the whole fix pipeline (push path, fork path, draft, merge
 * tracking), the access matrix of task creation, and deploy-git creating a repository.
 */

const hostOf = (fake: FakeGitea) => ({
  id: 'gitea',
  kind: 'gitea' as const,
  web_url: fake.webUrl,
  api_url: fake.apiUrl,
});

/** An account connected to the Gitea host as a user of its own, through POST /v1/me/scm with `host`. */
async function giteaAccount(h: Harness, fake: FakeGitea, plan: 'free' | 'pro', tokens: string[]) {
  const account = await newAccount(h, { plan, credits: 5, scm: false });
  const user = fake.addUser(`g${randomBytes(4).toString('hex')}`);
  tokens.push(user.token);
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/me/scm',
    headers: account.auth,
    payload: { token: user.token, host: 'gitea' },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toEqual({ scm: user.login, host: 'gitea' });
  return { ...account, login: user.login };
}

/** CALC_REPO without its tests: the validator has nothing to run, so the change is not validated. */
const UNTESTED = Object.fromEntries(
  Object.entries(CALC_REPO).filter(([p]) => !p.startsWith('tests/') && p !== 'pytest.ini'),
);

describe('a fix task on Gitea, end to end', { timeout: 150_000 }, () => {
  let svc: ModelService;
  let fake: FakeGitea;
  const tokens: string[] = [];

  beforeAll(async () => {
    fake = await startFakeGitea();
    svc = await startModelService({ EMEND_COMMIT_EMAIL: 'bot@emend.example' }, 'openai', { hosts: [hostOf(fake)] });
    scriptCalcRun(svc.model, [GOOD_FIX]);
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
  });

  it('connects with a token on the gitea host and shows the login in the profile', async () => {
    const { h } = svc;
    const owner = await giteaAccount(h, fake, 'pro', tokens);
    const me = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: owner.auth })).json();
    expect(me.scm_hosts).toContainEqual({
      host: 'gitea',
      kind: 'gitea',
      web_url: fake.webUrl,
      login: owner.login,
      oauth: false,
    });
    const bad = await h.app.inject({
      method: 'POST',
      url: '/v1/me/scm',
      headers: owner.auth,
      payload: { token: '0123456789abcdef0123456789abcdef01234567', host: 'gitea' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe('token: gitea rejected it (HTTP 401)');
  });

  it('push path: a collaborator’s run opens a pull request on the repository; a merge with a human edit is tracked', async () => {
    const { h } = svc;
    const owner = await giteaAccount(h, fake, 'pro', tokens);
    fake.createRepo('acme', 'calc-push', { files: CALC_REPO, private: true, collaborators: [owner.login] });
    const { task, byStep } = await runFixTask(h, owner.auth, `${fake.webUrl}/acme/calc-push`, 'done');
    const pulls = fake.pulls('acme', 'calc-push');
    expect(pulls).toHaveLength(1);
    const pull = pulls[0]!;
    expect(pull).toMatchObject({ user: owner.login, head: { owner: 'acme', repo: 'calc-push' }, base: 'main' });
    expect(pull.title.startsWith('WIP:')).toBe(false);
    expect(task.pr_url).toBe(`${fake.webUrl}/acme/calc-push/pulls/${pull.number}`);
    expect(byStep('pr')[0]!.output).toMatchObject({ draft: false, fork: null, branch: pull.head.ref });
    expect(fake.files('acme', 'calc-push', pull.head.ref)['calc/ops.py']).toContain('return a + b');

    fake.commit('acme', 'calc-push', {
      branch: pull.head.ref,
      files: { 'NOTES.md': 'reviewed\n' },
      message: 'review notes',
      author: { name: 'Rita Reviewer', email: 'rita@example.com' },
    });
    fake.mergePull('acme', 'calc-push', pull.number);
    expect(await checkOpenPulls(h.deps)).toMatchObject({ failed: 0 });
    const after = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${task.id}`, headers: owner.auth })).json();
    expect(after.task).toMatchObject({ pr_merged: true, human_edit_after: true });
    expect(Date.parse(after.task.pr_merged_at)).toBeGreaterThan(Date.now() - 120_000);
  });

  it('fork path: a caller who only reads gets a fork, synced, and a pull request from it', async () => {
    const { h } = svc;
    const owner = await giteaAccount(h, fake, 'pro', tokens);
    fake.createRepo('acme', 'calc-fork', { files: CALC_REPO });
    const { task, byStep } = await runFixTask(h, owner.auth, `${fake.webUrl}/acme/calc-fork`, 'done');
    expect(fake.repo(owner.login, 'calc-fork')).toMatchObject({ fork: true, parent: 'acme/calc-fork' });
    const [pull] = fake.pulls('acme', 'calc-fork');
    expect(pull).toMatchObject({ user: owner.login, head: { owner: owner.login, repo: 'calc-fork' } });
    expect(byStep('pr')[0]!.output).toMatchObject({
      fork: `${owner.login}/calc-fork`,
      head: `${owner.login}:${pull!.head.ref}`,
    });
    expect(fake.files(owner.login, 'calc-fork', pull!.head.ref)['calc/ops.py']).toContain('return a + b');
    expect(fake.branchHead('acme', 'calc-fork', pull!.head.ref)).toBeUndefined();
    const synced = fake.requests.filter((r) => r.path === `/api/v1/repos/${owner.login}/calc-fork/merge-upstream`);
    expect(synced.map((r) => r.status)).toEqual([200]);
    expect(task.pr_url).toBe(`${fake.webUrl}/acme/calc-fork/pulls/${pull!.number}`);

    fake.mergePull('acme', 'calc-fork', pull!.number);
    await checkOpenPulls(h.deps);
    const after = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${task.id}`, headers: owner.auth })).json();
    expect(after.task).toMatchObject({ pr_merged: true, human_edit_after: false });
  });

  it('draft: a change that could not be validated opens a WIP: pull request that reads back as a draft', async () => {
    const { h } = svc;
    const owner = await giteaAccount(h, fake, 'pro', tokens);
    fake.createRepo('acme', 'calc-draft', { files: UNTESTED, collaborators: [owner.login] });
    const { byStep } = await runFixTask(h, owner.auth, `${fake.webUrl}/acme/calc-draft`, 'done');
    expect(byStep('validator')[0]!.output.passed).toBeNull();
    const [pull] = fake.pulls('acme', 'calc-draft');
    expect(pull!.title).toMatch(/^WIP: /);
    expect(pull!.draft).toBe(true);
    expect(pull!.body).toMatch(/draft until a person has looked at it/);
    expect(byStep('pr')[0]!.output).toMatchObject({ draft: true, drafts_disallowed: false });
  });

  it('no Gitea token reaches a log', () => {
    expect(tokens.length).toBeGreaterThan(3);
    const logs = svc.h.logLines.join('\n');
    for (const t of tokens) expect(logs).not.toContain(t);
  });
});

type CallerKind = 'demo' | 'free' | 'free+scm' | 'pro+scm';
type RepoKind = 'public' | 'internal' | 'private-readable' | 'private-unreadable';

/** Task creation on Gitea repositories: status and error code per caller and visibility. */
const MATRIX: [CallerKind, RepoKind, number, string?][] = [
  ['demo', 'public', 201],
  ['demo', 'internal', 402, 'DEMO_PUBLIC_REPOS_ONLY'],
  ['demo', 'private-readable', 402, 'DEMO_PUBLIC_REPOS_ONLY'],
  ['free', 'public', 201],
  ['free', 'internal', 400, 'bad_request'],
  ['free', 'private-readable', 400, 'bad_request'],
  ['free+scm', 'public', 201],
  ['free+scm', 'internal', 402, 'PRIVATE_REPO_REQUIRES_UPGRADE'],
  ['free+scm', 'private-readable', 402, 'PRIVATE_REPO_REQUIRES_UPGRADE'],
  ['free+scm', 'private-unreadable', 400, 'bad_request'],
  ['pro+scm', 'public', 201],
  ['pro+scm', 'internal', 201],
  ['pro+scm', 'private-readable', 201],
  ['pro+scm', 'private-unreadable', 400, 'bad_request'],
];

describe('Gitea: who may start a task on which repository, and deploy-git', () => {
  let h: Harness;
  let fake: FakeGitea;
  const tokens: string[] = [];
  let demoSeq = 0;

  beforeAll(async () => {
    fake = await startFakeGitea();
    h = await startHarness({}, { scm: 'fake', hosts: [hostOf(fake)] });
  });
  afterAll(async () => {
    await h?.close();
    await fake?.close();
  });

  async function caller(kind: CallerKind): Promise<{ auth: Record<string, string>; login?: string }> {
    if (kind === 'demo') {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/demo/token',
        payload: { email: `gdemo${++demoSeq}@example.com` },
        remoteAddress: `10.78.${demoSeq}.1`,
      });
      expect(res.statusCode, res.body).toBe(201);
      return { auth: { authorization: `Bearer ${res.json().token}` } };
    }
    if (kind === 'free') return newAccount(h, { plan: 'free', credits: 5, scm: false });
    return giteaAccount(h, fake, kind === 'pro+scm' ? 'pro' : 'free', tokens);
  }

  it.each(MATRIX.map((row) => [`${row[0]} + ${row[1]} → ${row[2]}${row[3] ? ` ${row[3]}` : ''}`, row] as const))(
    '%s',
    async (label, [callerKind, repoKind, status, error]) => {
      const c = await caller(callerKind);
      const name = `r-${repoKind}-${randomBytes(3).toString('hex')}`;
      fake.createRepo('acme', name, {
        visibility: repoKind === 'public' ? 'public' : repoKind === 'internal' ? 'internal' : 'private',
        readers: repoKind === 'private-readable' && c.login ? [c.login] : [],
      });
      const seen = fake.requests.length;
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/tasks',
        headers: c.auth,
        payload: { prompt: 'Fix the crash on empty input', repo_url: `${fake.webUrl}/acme/${name}` },
      });
      expect(res.statusCode, `${label}: ${res.body}`).toBe(status);
      if (error) expect(res.json().error, label).toBe(error);
      if (status === 201) expect(res.json(), label).toMatchObject({ repo_owner: 'acme', repo_name: name });
      if (repoKind === 'internal' && status === 402 && callerKind !== 'demo')
        expect(res.json().message, label).toContain('internal');
      // asked of Gitea, with the caller's token when connected, anonymously otherwise
      const reads = fake.requests.slice(seen).filter((r) => r.path === `/api/v1/repos/acme/${name}`);
      expect(reads.length, label).toBeGreaterThanOrEqual(1);
      expect(
        reads.every((r) => r.authenticated === callerKind.endsWith('+scm')),
        label,
      ).toBe(true);
    },
  );

  it('answers 502 scm_unavailable when Gitea fails, and 412 when it no longer accepts the stored token', async () => {
    const owner = await giteaAccount(h, fake, 'pro', tokens);
    fake.createRepo('acme', 'flaky', { collaborators: [owner.login] });
    const post = () =>
      h.app.inject({
        method: 'POST',
        url: '/v1/tasks',
        headers: owner.auth,
        payload: { prompt: 'Fix the crash on empty input', repo_url: `${fake.webUrl}/acme/flaky` },
      });
    fake.failNext('GET', /^\/repos\/acme\/flaky$/, { status: 503 });
    const down = await post();
    expect(down.statusCode, down.body).toBe(502);
    expect(down.json().error).toBe('scm_unavailable');
    expect(down.json().message).toContain('503');

    fake.failNext('GET', /^\/repos\/acme\/flaky$/, {
      status: 401,
      body: { message: 'invalid username, password or token', url: `${fake.webUrl}/api/swagger` },
    });
    const revoked = await post();
    expect(revoked.statusCode, revoked.body).toBe(412);
    expect(revoked.json().error).toBe('scm_not_connected');
    const list = (await h.app.inject({ method: 'GET', url: '/v1/tasks', headers: owner.auth })).json();
    expect(list).toEqual([]);
    expect((await post()).statusCode).toBe(201);
  });

  it('deploy-git creates a private repository on the gitea host holding the site', async () => {
    const owner = await giteaAccount(h, fake, 'free', tokens);
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: { task_type: 'scaffold', prompt: 'A landing page for a bakery' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    const site = { 'index.html': '<!doctype html><title>Bakery</title>\n', 'assets/site.css': 'body{}\n' };
    await saveSiteFiles(
      h.deps,
      id,
      Object.entries(site).map(([path, content]) => ({ path, content })),
    );
    await forceStatus(h, eq(tasks.id, id), 'done');
    const res = await h.app.inject({
      method: 'POST',
      url: `/v1/tasks/${id}/deploy-git`,
      headers: owner.auth,
      payload: { repo_name: 'bakery-site', private: true, host: 'gitea' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const repoUrl = `${fake.webUrl}/${owner.login}/bakery-site`;
    expect(res.json()).toEqual({ ok: true, repo_url: repoUrl, clone_url: `${repoUrl}.git` });
    expect(fake.repo(owner.login, 'bakery-site')).toMatchObject({ visibility: 'private', fork: false });
    expect(fake.files(owner.login, 'bakery-site', 'main')).toEqual(site);
    const got = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: owner.auth })).json();
    expect(got.task.deployed_repo).toBe(repoUrl);
    expect(h.github.requests.filter((r) => r.path.includes('bakery'))).toEqual([]);
    const logs = h.logLines.join('\n');
    for (const t of tokens) expect(logs).not.toContain(t);
  });
});

describe('Gitea under a sub-path (behind a reverse proxy at /gitea)', () => {
  let h: Harness;
  let fake: FakeGitea;
  const tokens: string[] = [];

  beforeAll(async () => {
    fake = await startFakeGitea({ subPath: '/gitea' });
    h = await startHarness({}, { scm: 'fake', hosts: [hostOf(fake)] });
  });
  afterAll(async () => {
    await h?.close();
    await fake?.close();
  });

  it('takes repository URLs under the sub-path, asks its API there, and pushes a deploy there', async () => {
    const owner = await giteaAccount(h, fake, 'pro', tokens);
    fake.createRepo('acme', 'calc', { files: CALC_REPO, private: true, collaborators: [owner.login] });
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: { prompt: 'Fix the crash on empty input', repo_url: `${fake.webUrl}/acme/calc` },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({
      repo_owner: 'acme',
      repo_name: 'calc',
      repo_url: `${fake.webUrl}/acme/calc`,
    });
    // the host's root without the sub-path is no repository of it
    const outside = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: { prompt: 'Fix the crash on empty input', repo_url: `${new URL(fake.webUrl).origin}/acme/calc` },
    });
    expect(outside.json().error).toBe('not_a_scm_url');

    const scaffold = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: { task_type: 'scaffold', prompt: 'A landing page for a bakery' },
    });
    const id = scaffold.json().id as string;
    await saveSiteFiles(h.deps, id, [{ path: 'index.html', content: '<h1>Bakery</h1>\n' }]);
    await forceStatus(h, eq(tasks.id, id), 'done');
    const res = await h.app.inject({
      method: 'POST',
      url: `/v1/tasks/${id}/deploy-git`,
      headers: owner.auth,
      payload: { repo_name: 'bakery', host: 'gitea' },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().repo_url).toBe(`${fake.webUrl}/${owner.login}/bakery`);
    expect(fake.files(owner.login, 'bakery', 'main')).toEqual({ 'index.html': '<h1>Bakery</h1>\n' });
    const pushes = fake.requests.filter((r) => r.kind === 'git' && r.path.endsWith('/git-receive-pack'));
    expect(pushes.map((r) => [r.path, r.status])).toEqual([[`/gitea/${owner.login}/bakery.git/git-receive-pack`, 200]]);
  });
});
