import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tasks } from '../../src/db/schema.js';
import { saveSiteFiles } from '../../src/sites/store.js';
import { branchName } from '../../src/tasks/branch-name.js';
import { checkOpenPulls } from '../../src/tasks/merge-tracking.js';
import { hostEntry } from '../support/code-hosts.js';
import { type FakeGitea, startFakeGitea } from '../support/fake-gitea/server.js';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import type { FakeHost } from '../support/fake-host/side.js';
import { type FakeGitLab, startFakeGitLab } from '../support/fake-gitlab/server.js';
import { CALC_REPO, scriptCalcRun } from '../support/fix-script.js';
import { type ExtraHost, type Harness, forceStatus, newAccount, startHarness } from '../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../support/model-service.js';

/**
 * The service on each code host (GitLab's and Gitea's doubles as the deployment's second host
 * beside GitHub; GitHub's double as the deployment's only host): connecting with a token, the
 * whole fix pipeline (push path, fork path, draft, a token that cannot push, merge tracking), the
 * access matrix of task creation, failures of the host, deploy-git, and an instance under a path
 * of its own. One suite, run once per host; what differs is in HOSTS.
 */

type Fake = FakeGitHub | FakeGitLab | FakeGitea;
type Visibility = 'public' | 'internal' | 'private';
type RepoOpts = { files?: Record<string, string>; visibility?: Visibility; protectedBranches?: string[] };

interface HostCase {
  kind: 'github' | 'gitlab' | 'gitea';
  /** `root`: the instance under a path of its own (GitLab's relative URL root, Gitea's sub-path). */
  start(root?: string): Promise<Fake>;
  /**
   * The deployment's only host (GitHub: its double replaces the harness's, as EMEND_SCM_HOSTS),
   * not a second one beside the fake GitHub.
   */
  alone?: true;
  /** Whether it can be installed under a path of its own (GitHub Enterprise Server cannot: it owns its host name). */
  underPath: boolean;
  /** Where the team's repositories live: a nested group on GitLab, an organisation-like user on Gitea. */
  ns: string;
  /** A task's repo_owner for a repository there. */
  repoOwner: string;
  /** The REST API's path under the web root. */
  apiPath: string;
  /** The createRepo option naming who may only read (GitLab: Reporters; everyone listed in `collaborators` may push). */
  readers: 'reporters' | 'readers';
  prUrl(webUrl: string, ns: string, name: string, n: number): string;
  /** The title prefix that marks a draft (none: GitHub marks drafts with a flag and leaves the title alone). */
  draftTitle?: RegExp;
  /** A token the host refuses, and the body it answers a revoked token with. */
  badToken: string;
  revokedBody(fake: Fake): unknown;
  /** The path of a REST read of the repository (as recorded) and a pattern for failNext. */
  repoRead(ns: string, name: string): string;
  repoPattern(ns: string, name: string): RegExp;
  /** How a fork is brought up to date before the push, as recorded (a host without such a call: none). */
  forkSync?(login: string, name: string): string;
  /** The host's words when a read-only token of `login` pushes to `ns`/calc. */
  pushRefused(ns: string, login: string): string;
  /** What fake.repo() tells of a repository's visibility (GitHub's double tells only whether it is private). */
  shows(visibility: Visibility): object;
  /** Recorded request paths keep the instance's path (Gitea) or drop it (GitLab). */
  recordsRoot: boolean;
}

const HOSTS: HostCase[] = [
  {
    kind: 'github',
    start: () => startFakeGitHub(),
    alone: true,
    underPath: false,
    ns: 'acme',
    repoOwner: 'acme',
    apiPath: '/api/v3',
    readers: 'readers',
    prUrl: (webUrl, ns, name, n) => `${webUrl}/${ns}/${name}/pull/${n}`,
    badToken: 'ghp_notatokennotatokennotatokennotatoken',
    revokedBody: () => ({
      message: 'Bad credentials',
      documentation_url: 'https://docs.github.com/rest',
      status: '401',
    }),
    repoRead: (ns, name) => `/api/v3/repos/${ns}/${name}`,
    repoPattern: (ns, name) => new RegExp(`^/repos/${ns}/${name}$`),
    forkSync: (login, name) => `/api/v3/repos/${login}/${name}/merge-upstream`,
    pushRefused: (ns, login) => `Permission to ${ns}/calc.git denied to ${login}.`,
    shows: (visibility) => ({ private: visibility === 'private' }),
    recordsRoot: false,
  },
  {
    kind: 'gitlab',
    start: (root) => startFakeGitLab({ relativeUrlRoot: root }),
    ns: 'acme/platform',
    repoOwner: 'acme/platform',
    apiPath: '/api/v4',
    readers: 'reporters',
    prUrl: (webUrl, ns, name, n) => `${webUrl}/${ns}/${name}/-/merge_requests/${n}`,
    draftTitle: /^Draft: /,
    badToken: 'glpat-notatokennotatoken',
    revokedBody: () => ({ message: '401 Unauthorized' }),
    repoRead: (ns, name) => `/api/v4/projects/${encodeURIComponent(`${ns}/${name}`)}`,
    repoPattern: (ns, name) => new RegExp(`^/projects/${encodeURIComponent(`${ns}/${name}`)}$`),
    pushRefused: () => 'You are not allowed to push code to this project.',
    shows: (visibility) => ({ visibility }),
    recordsRoot: false,
    underPath: true,
  },
  {
    kind: 'gitea',
    start: (root) => startFakeGitea({ subPath: root }),
    ns: 'acme',
    repoOwner: 'acme',
    apiPath: '/api/v1',
    readers: 'readers',
    prUrl: (webUrl, ns, name, n) => `${webUrl}/${ns}/${name}/pulls/${n}`,
    draftTitle: /^WIP: /,
    badToken: '0123456789abcdef0123456789abcdef01234567',
    revokedBody: (fake) => ({ message: 'invalid username, password or token', url: `${fake.webUrl}/api/swagger` }),
    repoRead: (ns, name) => `/api/v1/repos/${ns}/${name}`,
    repoPattern: (ns, name) => new RegExp(`^/repos/${ns}/${name}$`),
    forkSync: (login, name) => `/api/v1/repos/${login}/${name}/merge-upstream`,
    pushRefused: () => 'User permission denied',
    shows: (visibility) => ({ visibility }),
    recordsRoot: true,
    underPath: true,
  },
];

/** How the deployment lists the host: as its only host, or after the harness's fake GitHub. */
function deployment(host: HostCase, fake: Fake): { env: Record<string, string>; hosts?: ExtraHost[] } {
  if (host.alone) return { env: { EMEND_SCM_HOSTS: JSON.stringify([hostEntry(host.kind, fake)]) } };
  return { env: {}, hosts: [hostEntry(host.kind, fake)] };
}

/** A repository on the host's fake that `writer` may push to and `reader` may only read. */
function createRepo(
  host: HostCase,
  fake: Fake,
  name: string,
  { writer, reader, ...opts }: RepoOpts & { writer?: string; reader?: string },
): void {
  fake.createRepo(host.ns, name, {
    ...opts,
    ...(writer ? { collaborators: [writer] } : {}),
    ...(reader ? { [host.readers]: [reader] } : {}),
  });
}

const postTask = (h: Harness, auth: Record<string, string>, payload: Record<string, unknown>) =>
  h.app.inject({ method: 'POST', url: '/v1/tasks', headers: auth, payload });

/** CALC_REPO without its tests: the validator has nothing to run, so the change is not validated. */
const UNTESTED = Object.fromEntries(
  Object.entries(CALC_REPO).filter(([p]) => !p.startsWith('tests/') && p !== 'pytest.ini'),
);
const changedLines = (diff: string) => diff.split('\n').filter((l) => /^[-+](?![-+]{2})/.test(l));

/** An account connected to the host as a user of its own, through POST /v1/me/scm with `host`. */
async function hostAccount(
  h: Harness,
  host: HostCase,
  fake: FakeHost,
  plan: 'free' | 'pro',
  tokens: string[],
  opts: { readOnly?: boolean } = {},
) {
  const account = await newAccount(h, { plan, credits: 5, scm: false });
  const user = fake.addUser(`u${randomBytes(4).toString('hex')}`, opts);
  tokens.push(user.token);
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/me/scm',
    headers: account.auth,
    payload: { token: user.token, host: host.kind },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toEqual({ scm: user.login, host: host.kind });
  return { ...account, login: user.login };
}

const expectNoTokenLogged = (h: Harness, tokens: string[]) => {
  expect(tokens.length).toBeGreaterThan(0);
  const logs = h.logLines.join('\n');
  for (const t of tokens) expect(logs).not.toContain(t);
};

/** A finished scaffold task holding `site`, as deploy-git takes it. */
async function builtSite(h: Harness, auth: Record<string, string>, site: Record<string, string>) {
  const created = await postTask(h, auth, { task_type: 'scaffold', prompt: 'A landing page for a bakery' });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().id as string;
  await saveSiteFiles(
    h.deps,
    id,
    Object.entries(site).map(([path, content]) => ({ path, content })),
  );
  await forceStatus(h, eq(tasks.id, id), 'done');
  return id;
}

describe.each(HOSTS)('a fix task on $kind, end to end', { timeout: 150_000 }, (host) => {
  const { ns } = host;
  let svc: ModelService | undefined;
  let fake: Fake | undefined;
  afterEach(async () => {
    await svc?.close();
    await fake?.close();
    svc = fake = undefined;
  });

  async function setUp(files: Record<string, string>, role: 'writer' | 'reader', visibility: Visibility = 'public') {
    const f = await host.start();
    fake = f;
    const { env, hosts } = deployment(host, f);
    svc = await startModelService({ EMEND_COMMIT_EMAIL: 'bot@emend.example', ...env }, 'openai', { hosts });
    scriptCalcRun(svc.model);
    const tokens: string[] = [];
    const owner = await hostAccount(svc.h, host, f, 'pro', tokens);
    createRepo(host, f, 'calc', { files, visibility, protectedBranches: ['main'], [role]: owner.login });
    return { h: svc.h, fake: f, owner, tokens, repoUrl: `${f.webUrl}/${ns}/calc` };
  }

  it('push path: opens a pull request on a repository the caller may write; tracks its merge and a human edit', async () => {
    const { h, fake, owner, tokens, repoUrl } = await setUp(CALC_REPO, 'writer', 'private');
    const { task, byStep } = await runFixTask(h, owner.auth, repoUrl, 'done');
    const pulls = fake.pulls(ns, 'calc');
    expect(pulls).toHaveLength(1);
    const pull = pulls[0]!;
    expect(pull).toMatchObject({ user: owner.login, base: 'main' });
    expect(pull.head).toEqual({ owner: ns, repo: 'calc', ref: branchName({ id: task.id, prompt: task.prompt }) });
    expect(task.pr_url).toBe(host.prUrl(fake.webUrl, ns, 'calc', pull.number));
    expect(pull.draft).toBe(false);
    if (host.draftTitle) expect(pull.title).not.toMatch(host.draftTitle);
    expect(pull.body).toContain(task.id);
    expect(byStep('pr')[0]!.output).toMatchObject({
      fork: null,
      draft: false,
      number: pull.number,
      branch: pull.head.ref,
    });
    expect(fake.files(ns, 'calc', pull.head.ref)['calc/ops.py']).toContain('return a + b');
    expect(changedLines(fake.diff(ns, 'calc', 'main', pull.head.ref))).toEqual([
      '-    return a - b',
      '+    return a + b',
    ]);

    fake.commit(ns, 'calc', {
      branch: pull.head.ref,
      files: { 'NOTES.md': 'reviewed\n' },
      message: 'reviewer note',
      author: { name: 'Rita Reviewer', email: 'rita@example.com' },
    });
    fake.mergePull(ns, 'calc', pull.number);
    expect(await checkOpenPulls(h.deps)).toMatchObject({ checked: 1, merged: 1, edited: 1, failed: 0 });
    const [row] = await h.deps.db.select().from(tasks).where(eq(tasks.id, task.id));
    expect(row).toMatchObject({ prMerged: true, humanEditAfter: true });
    expect(row!.prMergedAt?.toISOString()).toBe(new Date(fake.pulls(ns, 'calc')[0]!.merged_at!).toISOString());
    const after = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${task.id}`, headers: owner.auth })).json();
    expect(after.task).toMatchObject({ pr_merged: true, human_edit_after: true });
    expect(Date.parse(after.task.pr_merged_at)).toBeGreaterThan(Date.now() - 120_000);
    expectNoTokenLogged(h, tokens);
  });

  it('fork path: a caller who only reads gets a fork, synced, and a pull request from it', async () => {
    const { h, fake, owner, tokens, repoUrl } = await setUp(CALC_REPO, 'reader');
    const { task, byStep } = await runFixTask(h, owner.auth, repoUrl, 'done');
    const login = owner.login;
    expect(fake.repo(login, 'calc')).toMatchObject({ fork: true, parent: `${ns}/calc` });
    const [pull] = fake.pulls(ns, 'calc');
    expect(pull).toMatchObject({ user: login });
    expect(pull!.head).toEqual({ owner: login, repo: 'calc', ref: branchName({ id: task.id, prompt: task.prompt }) });
    expect(byStep('pr')[0]!.output).toMatchObject({ fork: `${login}/calc`, head: `${login}:${pull!.head.ref}` });
    expect(fake.files(login, 'calc', pull!.head.ref)['calc/ops.py']).toContain('return a + b');
    expect(fake.branchHead(ns, 'calc', pull!.head.ref)).toBeUndefined();
    expect(changedLines(fake.diff(ns, 'calc', 'main', `refs/pull/${pull!.number}/head`))).toEqual([
      '-    return a - b',
      '+    return a + b',
    ]);
    if (host.forkSync) {
      const synced = fake.requests.filter((r) => r.path === host.forkSync!(login, 'calc'));
      expect(synced.map((r) => r.status)).toEqual([200]);
    }
    expect(task.pr_url).toBe(host.prUrl(fake.webUrl, ns, 'calc', pull!.number));

    fake.mergePull(ns, 'calc', pull!.number);
    await checkOpenPulls(h.deps);
    const after = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${task.id}`, headers: owner.auth })).json();
    expect(after.task).toMatchObject({ pr_merged: true, human_edit_after: false });
    expectNoTokenLogged(h, tokens);
  });

  it('draft: a change that could not be validated opens a pull request that reads back as a draft', async () => {
    const { h, fake, owner, tokens, repoUrl } = await setUp(UNTESTED, 'writer');
    const { byStep } = await runFixTask(h, owner.auth, repoUrl, 'done');
    expect(byStep('validator')[0]!.output.passed).toBeNull();
    const [pull] = fake.pulls(ns, 'calc');
    if (host.draftTitle) expect(pull!.title).toMatch(host.draftTitle);
    expect(pull!.draft).toBe(true);
    expect(pull!.body).toMatch(/draft until a person has looked at it/);
    expect(byStep('pr')[0]!.output).toMatchObject({ draft: true, drafts_disallowed: false });
    expectNoTokenLogged(h, tokens);
  });

  it('fails the task in the host’s words when a read-only token cannot push', async () => {
    const f = await host.start();
    fake = f;
    const { env, hosts } = deployment(host, f);
    svc = await startModelService(env, 'openai', { hosts });
    const { h, model } = svc;
    scriptCalcRun(model);
    const tokens: string[] = [];
    const reader = await hostAccount(h, host, f, 'pro', tokens, { readOnly: true });
    createRepo(host, f, 'calc', { files: CALC_REPO, writer: reader.login });
    const { task, byStep } = await runFixTask(h, reader.auth, `${f.webUrl}/${ns}/calc`, 'failed');
    expect(byStep('pr').at(-1)!.status).toBe('failed');
    expect(String(task.error)).toContain(
      `the code host refused the push to ${ns}/calc: ${host.pushRefused(ns, reader.login)}`,
    );
    expect(JSON.stringify(task)).not.toContain(tokens[0]);
    expect(f.pulls(ns, 'calc')).toEqual([]);
  });
});

type CallerKind = 'demo' | 'free' | 'free+scm' | 'pro+scm';
type RepoKind = 'public' | 'internal' | 'private-readable' | 'private-unreadable';

/**
 * Task creation on the host's repositories: status and error code per caller and visibility.
 * Internal repositories count as private for the free plan and demo tokens (demo tokens read anonymously).
 */
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

describe.each(HOSTS)('$kind as a host of the deployment: who may start a task, connecting, deploy-git', (host) => {
  const { ns } = host;
  let h: Harness;
  let fake: Fake;
  const tokens: string[] = [];
  let demoSeq = 0;

  beforeAll(async () => {
    fake = await host.start();
    const { env, hosts } = deployment(host, fake);
    h = await startHarness(env, { scm: 'fake', hosts });
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
        payload: { email: `${host.kind}-demo${++demoSeq}@example.com` },
        remoteAddress: `10.78.${demoSeq}.1`,
      });
      expect(res.statusCode, res.body).toBe(201);
      return { auth: { authorization: `Bearer ${res.json().token}` } };
    }
    if (kind === 'free') return newAccount(h, { plan: 'free', credits: 5, scm: false });
    return hostAccount(h, host, fake, kind === 'pro+scm' ? 'pro' : 'free', tokens);
  }

  it.each(MATRIX.map((row) => [`${row[0]} + ${row[1]} → ${row[2]}${row[3] ? ` ${row[3]}` : ''}`, row] as const))(
    '%s',
    async (label, [callerKind, repoKind, status, error]) => {
      const c = await caller(callerKind);
      const name = `r-${repoKind}-${randomBytes(3).toString('hex')}`;
      createRepo(host, fake, name, {
        visibility: repoKind === 'public' ? 'public' : repoKind === 'internal' ? 'internal' : 'private',
        reader: repoKind === 'private-readable' && c.login ? c.login : undefined,
      });
      const seen = fake.requests.length;
      const res = await postTask(h, c.auth, {
        prompt: 'Fix the crash on empty input',
        repo_url: `${fake.webUrl}/${ns}/${name}`,
      });
      expect(res.statusCode, `${label}: ${res.body}`).toBe(status);
      if (error) expect(res.json().error, label).toBe(error);
      if (status === 201) expect(res.json(), label).toMatchObject({ repo_owner: host.repoOwner, repo_name: name });
      if (repoKind === 'internal' && status === 402 && callerKind !== 'demo')
        expect(res.json().message, label).toContain('internal');
      // asked of the host, with the caller's token when connected, anonymously otherwise
      const reads = fake.requests.slice(seen).filter((r) => r.path === host.repoRead(ns, name));
      expect(reads.length, label).toBeGreaterThanOrEqual(1);
      expect(
        reads.every((r) => r.authenticated === callerKind.endsWith('+scm')),
        label,
      ).toBe(true);
    },
  );

  it('connects with a token (POST /v1/me/scm with host), refusing one the host rejects without echoing it', async () => {
    const account = await newAccount(h, { plan: 'pro', scm: false });
    const bad = await h.app.inject({
      method: 'POST',
      url: '/v1/me/scm',
      headers: account.auth,
      payload: { token: host.badToken, host: host.kind },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe(`token: ${host.kind} rejected it (HTTP 401)`);
    expect(bad.body).not.toContain(host.badToken);

    const connected = await hostAccount(h, host, fake, 'pro', tokens);
    const me = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: connected.auth })).json();
    const harnessGitHub = { host: 'github', kind: 'github', web_url: h.github.webUrl, login: null, oauth: false };
    expect(me.scm_hosts).toEqual([
      ...(host.alone ? [] : [harnessGitHub]),
      { host: host.kind, kind: host.kind, web_url: fake.webUrl, login: connected.login, oauth: false },
    ]);
  });

  it('answers 502 scm_unavailable when the host fails, and 412 when it no longer accepts the stored token', async () => {
    const owner = await hostAccount(h, host, fake, 'pro', tokens);
    createRepo(host, fake, 'flaky', { writer: owner.login });
    const post = () =>
      postTask(h, owner.auth, { prompt: 'Fix the crash on empty input', repo_url: `${fake.webUrl}/${ns}/flaky` });
    fake.failNext('GET', host.repoPattern(ns, 'flaky'), { status: 503 });
    const down = await post();
    expect(down.statusCode, down.body).toBe(502);
    expect(down.json().error).toBe('scm_unavailable');
    expect(down.json().message).toContain('503');

    fake.failNext('GET', host.repoPattern(ns, 'flaky'), { status: 401, body: host.revokedBody(fake) });
    const revoked = await post();
    expect(revoked.statusCode, revoked.body).toBe(412);
    expect(revoked.json().error).toBe('scm_not_connected');
    const list = (await h.app.inject({ method: 'GET', url: '/v1/tasks', headers: owner.auth })).json();
    expect(list).toEqual([]);
    expect((await post()).statusCode).toBe(201);
  });

  it.each([
    ['public', { 'index.html': '<h1>Bakery</h1>\n' }],
    ['private', { 'index.html': '<!doctype html><title>Bakery</title>\n', 'assets/site.css': 'body{}\n' }],
  ] as const)('deploy-git creates a %s repository in the user namespace holding the site', async (visibility, site) => {
    const owner = await hostAccount(h, host, fake, 'free', tokens);
    const id = await builtSite(h, owner.auth, site);
    const repoName = `bakery-${visibility}`;
    const res = await h.app.inject({
      method: 'POST',
      url: `/v1/tasks/${id}/deploy-git`,
      headers: owner.auth,
      payload: { repo_name: repoName, host: host.kind, ...(visibility === 'private' ? { private: true } : {}) },
    });
    expect(res.statusCode, res.body).toBe(201);
    const repoUrl = `${fake.webUrl}/${owner.login}/${repoName}`;
    expect(res.json()).toEqual({ ok: true, repo_url: repoUrl, clone_url: `${repoUrl}.git` });
    expect(fake.repo(owner.login, repoName)).toMatchObject({ ...host.shows(visibility), fork: false });
    expect(fake.files(owner.login, repoName, 'main')).toEqual(site);
    const got = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: owner.auth })).json();
    expect(got.task.deployed_repo).toBe(repoUrl);
    expect(h.github.requests.filter((r) => r.path.includes('bakery'))).toEqual([]);
    expectNoTokenLogged(h, tokens);
  });
});

const UNDER_PATH = HOSTS.filter((host) => host.underPath);

describe.each(UNDER_PATH)(
  '$kind under a path of its own (/$kind, behind a reverse proxy)',
  { timeout: 120_000 },
  (host) => {
    const { ns } = host;
    const root = `/${host.kind}`;
    let h: Harness;
    let fake: Fake;
    const tokens: string[] = [];

    beforeAll(async () => {
      fake = await host.start(root);
      const { env, hosts } = deployment(host, fake);
      h = await startHarness(env, { scm: 'fake', hosts });
    });
    afterAll(async () => {
      await h?.close();
      await fake?.close();
    });

    it('takes repository URLs under the path, asks its API there, and pushes a deploy there (nothing answers outside it)', async () => {
      expect(fake.apiUrl).toBe(`http://127.0.0.1:${new URL(fake.webUrl).port}${root}${host.apiPath}`);
      const owner = await hostAccount(h, host, fake, 'pro', tokens);
      createRepo(host, fake, 'calc', { files: CALC_REPO, visibility: 'private', writer: owner.login });
      const created = await postTask(h, owner.auth, {
        prompt: 'Fix the crash on empty input',
        repo_url: `${fake.webUrl}/${ns}/calc`,
      });
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json()).toMatchObject({
        repo_owner: host.repoOwner,
        repo_name: 'calc',
        repo_url: `${fake.webUrl}/${ns}/calc`,
      });
      // the host's root without the path is no repository of it
      const outside = await postTask(h, owner.auth, {
        prompt: 'Fix the crash on empty input',
        repo_url: `${new URL(fake.webUrl).origin}/${ns}/calc`,
      });
      expect(outside.json().error).toBe('not_a_scm_url');

      const id = await builtSite(h, owner.auth, { 'index.html': '<h1>Bakery</h1>\n' });
      const res = await h.app.inject({
        method: 'POST',
        url: `/v1/tasks/${id}/deploy-git`,
        headers: owner.auth,
        payload: { repo_name: 'bakery', host: host.kind, private: true },
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().repo_url).toBe(`${fake.webUrl}/${owner.login}/bakery`);
      expect(fake.repo(owner.login, 'bakery')).toMatchObject(host.shows('private'));
      expect(fake.files(owner.login, 'bakery', 'main')).toEqual({ 'index.html': '<h1>Bakery</h1>\n' });
      const pushes = fake.requests.filter((r) => r.kind === 'git' && r.path.endsWith('/git-receive-pack'));
      const recorded = `${host.recordsRoot ? root : ''}/${owner.login}/bakery.git/git-receive-pack`;
      expect(pushes.map((r) => [r.path, r.status])).toEqual([[recorded, 200]]);
      // Every call went under the path: a request outside it would be recorded as a 404.
      expect(fake.requests.length).toBeGreaterThanOrEqual(5);
      expect(fake.requests.filter((r) => r.status === 404)).toEqual([]);
      const stray = await fetch(`${new URL(fake.webUrl).origin}${host.apiPath}/user`);
      expect(stray.status).toBe(404);
      expect(fake.requests.at(-1)).toMatchObject({ path: `${host.apiPath}/user`, status: 404 });
    });
  },
);
