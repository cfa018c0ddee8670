import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tasks } from '../../src/db/schema.js';
import { branchName } from '../../src/steps/fix/pr-body.js';
import { checkOpenPulls } from '../../src/tasks/merge-tracking.js';
import { CALC_REPO, scriptCalcRun } from '../support/fix-script.js';
import { saveSiteFiles } from '../../src/sites/store.js';
import { type FakeGitLab, startFakeGitLab } from '../support/fake-gitlab/server.js';
import { type ExtraHost, type Harness, forceStatus, newAccount, startHarness } from '../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../support/model-service.js';

/**
 * The fix pipeline on a GitLab host (the fake GitLab as the deployment's second host, beside the
 * fake GitHub): a project in a nested group, the push path, the fork path for a Reporter, a draft
 * merge request when validation could not pass, merge tracking, the access matrix with internal
 * projects, connecting with a token and deploy-git making a project.
 */

let svc: ModelService | undefined;
let fake: FakeGitLab | undefined;
afterEach(async () => {
  await svc?.close();
  await fake?.close();
  svc = fake = undefined;
});

/** The fake GitLab as the deployment's second host, `gitlab` (the fake GitHub stays the default). */
const asHost = (gl: FakeGitLab): ExtraHost => ({
  id: 'gitlab',
  kind: 'gitlab',
  web_url: gl.webUrl,
  api_url: gl.apiUrl,
});

const GROUP = 'acme/platform';
const UNTESTED = Object.fromEntries(
  Object.entries(CALC_REPO).filter(([p]) => !p.startsWith('tests/') && p !== 'pytest.ini'),
);
const changedLines = (diff: string) => diff.split('\n').filter((l) => /^[-+](?![-+]{2})/.test(l));

/** An account connected to the GitLab host through the API (POST /v1/me/scm with `host`). */
async function gitLabAccount(h: Harness, gl: FakeGitLab, plan: 'free' | 'pro' = 'pro') {
  const account = await newAccount(h, { plan, credits: 5, scm: false });
  const user = gl.addUser(`gl-${account.account.id.slice(0, 8)}`);
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/me/scm',
    headers: account.auth,
    payload: { token: user.token, host: 'gitlab' },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toEqual({ scm: user.login, host: 'gitlab' });
  return { ...account, gl: user };
}

async function setUp(files: Record<string, string> = CALC_REPO, role: 'developer' | 'reporter' = 'developer') {
  const gl = await startFakeGitLab();
  fake = gl;
  svc = await startModelService({}, 'openai', { hosts: [asHost(gl)] });
  const { h, model } = svc;
  scriptCalcRun(model);
  const owner = await gitLabAccount(h, gl);
  gl.createRepo(GROUP, 'calc', {
    files,
    ...(role === 'developer' ? { collaborators: [owner.gl.login] } : { reporters: [owner.gl.login] }),
    protectedBranches: ['main'],
  });
  return { h, gl, owner, repoUrl: `${gl.webUrl}/${GROUP}/calc` };
}

describe('the fix pipeline on GitLab', { timeout: 150_000 }, () => {
  it('pushes to a nested-group project, opens a merge request, and tracks the merge and a human edit', async () => {
    const { h, gl, owner, repoUrl } = await setUp();
    const { task, byStep } = await runFixTask(h, owner.auth, repoUrl, 'done');
    const [mr] = gl.pulls(GROUP, 'calc');
    expect(mr).toBeDefined();
    expect(task.pr_url).toBe(`${gl.webUrl}/${GROUP}/calc/-/merge_requests/${mr!.number}`);
    expect(mr!.draft).toBe(false);
    expect(mr!.title).not.toMatch(/^Draft:/);
    expect(mr!.body).toContain(task.id);
    expect(mr!.head).toEqual({ owner: GROUP, repo: 'calc', ref: branchName({ id: task.id, prompt: task.prompt }) });
    expect(byStep('pr')[0]!.output).toMatchObject({ fork: null, draft: false, number: mr!.number });
    expect(changedLines(gl.diff(GROUP, 'calc', 'main', mr!.head.ref))).toEqual([
      '-    return a - b',
      '+    return a + b',
    ]);

    gl.commit(GROUP, 'calc', {
      branch: mr!.head.ref,
      files: { 'NOTES.md': 'reviewed\n' },
      message: 'reviewer note',
      author: { name: 'Reviewer', email: 'reviewer@example.com' },
    });
    gl.mergePull(GROUP, 'calc', mr!.number);
    const report = await checkOpenPulls(h.deps);
    expect(report).toMatchObject({ checked: 1, merged: 1, edited: 1, failed: 0 });
    const [row] = await h.deps.db.select().from(tasks).where(eq(tasks.id, task.id));
    expect(row).toMatchObject({ prMerged: true, humanEditAfter: true });
    expect(row!.prMergedAt?.toISOString()).toBe(new Date(gl.pulls(GROUP, 'calc')[0]!.merged_at!).toISOString());
  });

  it('forks for a Reporter and opens the merge request from the fork', async () => {
    const { h, gl, owner, repoUrl } = await setUp(CALC_REPO, 'reporter');
    const { task, byStep } = await runFixTask(h, owner.auth, repoUrl, 'done');
    const login = owner.gl.login;
    expect(gl.repo(login, 'calc')).toMatchObject({ fork: true, parent: `${GROUP}/calc` });
    const [mr] = gl.pulls(GROUP, 'calc');
    expect(mr!.head).toEqual({ owner: login, repo: 'calc', ref: branchName({ id: task.id, prompt: task.prompt }) });
    expect(byStep('pr')[0]!.output).toMatchObject({ fork: `${login}/calc` });
    expect(gl.branchHead(GROUP, 'calc', mr!.head.ref)).toBeUndefined();
    expect(changedLines(gl.diff(GROUP, 'calc', 'main', `refs/pull/${mr!.number}/head`))).toEqual([
      '-    return a - b',
      '+    return a + b',
    ]);
  });

  it('fails the task in GitLab words when a read_api token cannot push', async () => {
    const gl = await startFakeGitLab();
    fake = gl;
    svc = await startModelService({}, 'openai', { hosts: [asHost(gl)] });
    const { h, model } = svc;
    scriptCalcRun(model);
    const account = await newAccount(h, { plan: 'pro', credits: 3, scm: false });
    const user = gl.addUser('reader-token', { readOnly: true });
    const connect = await h.app.inject({
      method: 'POST',
      url: '/v1/me/scm',
      headers: account.auth,
      payload: { token: user.token, host: 'gitlab' },
    });
    expect(connect.statusCode, connect.body).toBe(200);
    gl.createRepo(GROUP, 'calc', { files: CALC_REPO, collaborators: [user.login] });
    const { task, byStep } = await runFixTask(h, account.auth, `${gl.webUrl}/${GROUP}/calc`, 'failed');
    expect(byStep('pr').at(-1)!.status).toBe('failed');
    expect(String(task.error)).toContain(
      `the code host refused the push to ${GROUP}/calc: You are not allowed to push code to this project.`,
    );
    expect(JSON.stringify(task)).not.toContain(user.token);
    expect(gl.pulls(GROUP, 'calc')).toEqual([]);
  });

  it('opens a Draft: merge request when the change could not be validated', async () => {
    const { h, gl, owner, repoUrl } = await setUp(UNTESTED);
    const { byStep } = await runFixTask(h, owner.auth, repoUrl, 'done');
    expect(byStep('validator')[0]!.output.passed).toBeNull();
    const [mr] = gl.pulls(GROUP, 'calc');
    expect(mr!.title).toMatch(/^Draft: /);
    expect(mr!.draft).toBe(true);
    expect(mr!.body).toMatch(/draft until a person has looked at it/);
    expect(byStep('pr')[0]!.output).toMatchObject({ draft: true, drafts_disallowed: false });
  });
});

type Plan = 'free' | 'pro' | 'demo';
type Visibility = 'public' | 'internal' | 'private';

/** Internal projects count as private for the free plan and demo tokens (demo tokens read anonymously). */
const MATRIX: { plan: Plan; visibility: Visibility; status: number; error?: string; says?: RegExp }[] = [
  { plan: 'free', visibility: 'public', status: 201 },
  { plan: 'free', visibility: 'internal', status: 402, error: 'PRIVATE_REPO_REQUIRES_UPGRADE', says: /internal/ },
  { plan: 'free', visibility: 'private', status: 402, error: 'PRIVATE_REPO_REQUIRES_UPGRADE' },
  { plan: 'pro', visibility: 'public', status: 201 },
  { plan: 'pro', visibility: 'internal', status: 201 },
  { plan: 'pro', visibility: 'private', status: 201 },
  { plan: 'demo', visibility: 'public', status: 201 },
  { plan: 'demo', visibility: 'internal', status: 402, error: 'DEMO_PUBLIC_REPOS_ONLY' },
  { plan: 'demo', visibility: 'private', status: 402, error: 'DEMO_PUBLIC_REPOS_ONLY' },
];

describe('GitLab as a host of the deployment: access, connecting, deploy-git', { timeout: 120_000 }, () => {
  let h: Harness;
  let gl: FakeGitLab;
  beforeAll(async () => {
    gl = await startFakeGitLab();
    h = await startHarness({}, { scm: 'fake', hosts: [asHost(gl)] });
  });
  afterAll(async () => {
    await h?.close();
    await gl?.close();
  });

  it('applies the access rules to public, internal and private projects for free, pro and demo callers', async () => {
    let demoSeq = 0;
    const got: string[] = [];
    const want: string[] = [];
    for (const row of MATRIX) {
      // A caller of its own per row: the concurrency cap counts the tasks each one started.
      let auth: Record<string, string>;
      const project = `${GROUP}/m${got.length}`;
      if (row.plan === 'demo') {
        const res = await h.app.inject({
          method: 'POST',
          url: '/v1/demo/token',
          payload: { email: `gl-demo${++demoSeq}@example.com` },
          remoteAddress: `10.78.${demoSeq}.1`,
        });
        expect(res.statusCode, res.body).toBe(201);
        auth = { authorization: `Bearer ${res.json().token}` };
        gl.createRepo(project, 'calc', { files: CALC_REPO, visibility: row.visibility });
      } else {
        const caller = await gitLabAccount(h, gl, row.plan);
        auth = caller.auth;
        gl.createRepo(project, 'calc', {
          files: CALC_REPO,
          visibility: row.visibility,
          collaborators: [caller.gl.login],
        });
      }
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/tasks',
        headers: auth,
        payload: { prompt: 'fix add()', repo_url: `${gl.webUrl}/${project}/calc` },
      });
      const body = res.statusCode === 201 ? {} : (res.json() as { error: string; message: string });
      const says = row.says && 'message' in body ? row.says.test(String(body.message)) : true;
      got.push(`${row.plan}/${row.visibility}: ${res.statusCode} ${'error' in body ? body.error : ''} ${says}`);
      want.push(`${row.plan}/${row.visibility}: ${row.status} ${row.error ?? ''} true`);
    }
    expect(got).toEqual(want);
  });

  it('connects with a GitLab token (POST /v1/me/scm with host), refusing one GitLab rejects without echoing it', async () => {
    const account = await newAccount(h, { plan: 'pro', scm: false });
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/me/scm',
      headers: account.auth,
      payload: { token: 'glpat-notatokennotatoken', host: 'gitlab' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^token: gitlab rejected it \(HTTP 401\)/);
    expect(res.body).not.toContain('glpat-notatokennotatoken');

    const connected = await gitLabAccount(h, gl, 'pro');
    const me = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: connected.auth })).json();
    expect(me.scm_hosts).toEqual([
      { host: 'github', kind: 'github', web_url: h.github.webUrl, login: null, oauth: false },
      { host: 'gitlab', kind: 'gitlab', web_url: gl.webUrl, login: connected.gl.login, oauth: false },
    ]);
  });

  it('deploys a built site to a new project in the GitLab user namespace', async () => {
    const owner = await gitLabAccount(h, gl, 'free');
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: { task_type: 'scaffold', prompt: 'A landing page for a bakery' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    await saveSiteFiles(h.deps, id, [{ path: 'index.html', content: '<h1>Bakery</h1>\n' }]);
    await forceStatus(h, eq(tasks.id, id), 'done');
    const res = await h.app.inject({
      method: 'POST',
      url: `/v1/tasks/${id}/deploy-git`,
      headers: owner.auth,
      payload: { repo_name: 'bakery', host: 'gitlab' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const repoUrl = `${gl.webUrl}/${owner.gl.login}/bakery`;
    expect(res.json()).toEqual({ ok: true, repo_url: repoUrl, clone_url: `${repoUrl}.git` });
    expect(gl.repo(owner.gl.login, 'bakery')).toMatchObject({ visibility: 'public', fork: false });
    expect(gl.files(owner.gl.login, 'bakery', 'main')).toEqual({ 'index.html': '<h1>Bakery</h1>\n' });
  });
});

describe('a self-managed GitLab under a relative URL root', { timeout: 120_000 }, () => {
  it('connects, checks access and deploys under /gitlab (the fake answers nothing outside it)', async () => {
    const gl = await startFakeGitLab({ relativeUrlRoot: '/gitlab' });
    fake = gl;
    expect(gl.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/gitlab\/api\/v4$/);
    const h = await startHarness({}, { scm: 'fake', hosts: [asHost(gl)] });
    try {
      const owner = await gitLabAccount(h, gl, 'pro');
      gl.createRepo(GROUP, 'calc', { files: CALC_REPO, visibility: 'private', collaborators: [owner.gl.login] });
      const created = await h.app.inject({
        method: 'POST',
        url: '/v1/tasks',
        headers: owner.auth,
        payload: { prompt: 'fix add()', repo_url: `${gl.webUrl}/${GROUP}/calc` },
      });
      expect(created.statusCode, created.body).toBe(201);

      const site = await h.app.inject({
        method: 'POST',
        url: '/v1/tasks',
        headers: owner.auth,
        payload: { task_type: 'scaffold', prompt: 'A landing page for a bakery' },
      });
      const id = site.json().id as string;
      await saveSiteFiles(h.deps, id, [{ path: 'index.html', content: 'hi\n' }]);
      await forceStatus(h, eq(tasks.id, id), 'done');
      const res = await h.app.inject({
        method: 'POST',
        url: `/v1/tasks/${id}/deploy-git`,
        headers: owner.auth,
        payload: { repo_name: 'bakery', host: 'gitlab', private: true },
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().repo_url).toBe(`${gl.webUrl}/${owner.gl.login}/bakery`);
      expect(gl.repo(owner.gl.login, 'bakery')).toMatchObject({ visibility: 'private' });
      expect(gl.files(owner.gl.login, 'bakery', 'main')).toEqual({ 'index.html': 'hi\n' });
      // Every call went under /gitlab: a request outside it would be recorded as a 404.
      expect(gl.requests.length).toBeGreaterThanOrEqual(5);
      expect(gl.requests.filter((r) => r.status === 404)).toEqual([]);
      const stray = await fetch(gl.webUrl.replace(/\/gitlab$/, '/api/v4/user'));
      expect(stray.status).toBe(404);
      expect(gl.requests.at(-1)).toMatchObject({ path: '/api/v4/user', status: 404 });
    } finally {
      await h.close();
    }
  });
});
