import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAppAuth } from '@octokit/auth-app';
import { request } from '@octokit/request';
import { and, eq, isNotNull } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { auditEvents, tasks, workspaces } from '../../src/db/schema.js';
import { CookieJar } from '../support/cookie-jar.js';
import { waitForStatus } from '../support/engine.js';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { CALC_REPO, GOOD_FIX, scriptCalcRun } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, startModelService } from '../support/model-service.js';
import { appOnFake } from '../support/github-app.js';
import { heldPort } from '../support/ports.js';

/**
 * emend as a GitHub App (issue 47), over real HTTP against the fake GitHub, which checks the app's
 * JWTs with its public key, issues installation tokens that expire and are scoped to repositories,
 * and here refuses every personal token on the organisation's repositories: whatever emend does
 * there, it does with the installation's token or not at all.
 */

describe('emend as a GitHub App', { timeout: 180_000 }, () => {
  let svc: ModelService | undefined;
  let gh: FakeGitHub | undefined;
  let keyDir: string | undefined;
  afterEach(async () => {
    await svc?.close();
    await gh?.close();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
    svc = gh = keyDir = undefined;
  });

  /** The service on a loopback port with the app configured; `acme` an organisation alice administers. */
  async function setUp() {
    const f = await startFakeGitHub();
    gh = f;
    // Held until the service listens: a port freed at once could be taken while the service starts.
    const held = await heldPort();
    const port = held.port;
    const base = `http://127.0.0.1:${port}`;
    // The app's private key is written there: removed with the test, as the service's data dir is.
    keyDir = mkdtempSync(join(tmpdir(), 'emend-app-'));
    const { app, entry } = appOnFake(f, base, keyDir);
    svc = await startModelService({ EMEND_BASE_URL: base, EMEND_SCM_HOSTS: JSON.stringify([entry]) }, 'openai');
    await held.release();
    await svc.h.app.listen({ port, host: '127.0.0.1' });
    scriptCalcRun(svc.model, () => ({ text: GOOD_FIX }));
    f.addOrg('acme', { admins: ['alice'], members: ['bob'] });
    f.createRepo('acme', 'widget', { files: CALC_REPO, private: true });
    f.createRepo('acme', 'other', { files: CALC_REPO, private: true });
    f.refusePersonalTokens('acme');
    // A team workspace: its owner claims the installation, its member runs tasks without a connection.
    const person = await newAccount(svc.h, { plan: 'pro', credits: 5, scm: false });
    const h = svc.h;
    const call = async (auth: Record<string, string>, url: string, payload: object) => {
      const res = await h.app.inject({ method: 'POST', url, headers: auth, payload });
      expect(res.statusCode, `${url}: ${res.body}`).toBeLessThan(300);
      return res.json();
    };
    const team = await call(person.auth, '/v1/workspaces', { name: 'Acme team' });
    // A plan with private repositories and credits (as the operator's admin routes would set them).
    await h.deps.db.update(workspaces).set({ plan: 'pro', credits: 5 }).where(eq(workspaces.id, team.id));
    const tokenIn = async (auth: Record<string, string>) => ({
      authorization: `Bearer ${(await call(auth, '/v1/me/tokens', { name: 'team', workspace_id: team.id })).token}`,
    });
    const owner = { auth: await tokenIn(person.auth), workspace: { id: team.id as string } };
    const joining = await newAccount(h, { scm: false });
    const invitation = await call(owner.auth, `/v1/workspaces/${team.id}/invitations`, { role: 'member' });
    await call(joining.auth, '/v1/invitations/accept', { token: invitation.token });
    const member = { auth: await tokenIn(joining.auth) };
    return { h, f, app, base, owner, member };
  }

  /**
   * The browser flow: emend's install link, GitHub's install page (approved by alice, acme's admin),
   * the app's setup URL, the app's sign-in as `login`, and the callback; the callback's answer.
   */
  async function installAndClaim(s: Awaited<ReturnType<typeof setUp>>, login: string) {
    const browser = new CookieJar();
    const start = await browser.fetch(`${s.base}/v1/apps/github/install`, { headers: s.owner.auth });
    expect(start.status).toBe(200);
    const { install_url: installUrl } = (await start.json()) as { install_url: string };
    expect(installUrl).toMatch(new RegExp(`^${s.f.webUrl}/apps/emend/installations/new\\?state=`));
    s.f.installAs('alice', { account: 'acme' });
    s.f.oauthAs(login);
    let res = await browser.fetch(installUrl);
    // GitHub's install page -> emend's setup URL -> the app's sign-in -> emend's callback -> the panel.
    for (let hops = 0; hops < 5 && res.status === 302; hops++) {
      const next = res.headers.get('location')!;
      if (next.startsWith('/app/')) break;
      res = await browser.fetch(next);
    }
    return res;
  }

  it("an admin installs and claims it; the workspace's task pushes and opens the pull request as emend[bot] with a token narrowed to the repository", async () => {
    const s = await setUp();
    const { h, f, app, owner, member } = s;
    const claimed = await installAndClaim(s, 'alice');
    expect(claimed.status, await claimed.clone().text()).toBe(302);
    expect(claimed.headers.get('location')).toBe('/app/account?claimed=acme');
    const [installation] = f.installations();
    const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: owner.auth });
    expect(me.json().scm_hosts).toEqual([expect.objectContaining({ host: 'github', app: 'emend', oauth: true })]);
    const listed = await h.app.inject({ method: 'GET', url: '/v1/apps/installations', headers: owner.auth });
    expect(listed.json().installations).toEqual([
      expect.objectContaining({ account: 'acme', account_type: 'Organization', claimed_as: 'alice', suspended: false }),
    ]);
    // The claim is in the workspace's audit log, by the person who started it.
    const claimRows = await h.deps.db
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.action, 'app.installation_claimed'));
    expect(claimRows).toHaveLength(1);
    expect(claimRows[0]).toMatchObject({
      targets: { host: 'github', installation_id: String(installation!.id) },
      detail: { account: 'acme', claimed_as: 'alice' },
    });
    expect(claimRows[0]!.actorAccountId).not.toBeNull();

    // A member of the workspace, with no connection of their own: the private repository is read,
    // cloned, pushed to and its pull request opened with installation tokens (a person's token would
    // be refused on acme's repositories).
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: member.auth,
      payload: { prompt: 'make add(2, 3) return 5', repo_url: `${f.webUrl}/acme/widget` },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ mode: 'pr' });
    const done = await waitForStatus(h, created.json().id, ['done', 'failed', 'cancelled'], 120_000);
    expect(done.status, done.error ?? '').toBe('done');
    const [pull] = f.pulls('acme', 'widget');
    expect(pull?.user).toBe('emend[bot]');
    const commits = await h.app.inject({ method: 'GET', url: `/v1/tasks/${done.id}`, headers: member.auth });
    expect(commits.statusCode).toBe(200);
    const head = f.branchHead('acme', 'widget', pull!.head.ref);
    expect(head).toBeTruthy();
    expect(f.diff('acme', 'widget', 'main', pull!.head.ref)).toContain('return a + b');
    // Every token emend asked for covers this one repository, and the workspace's tasks minted few:
    // they are kept until shortly before they expire.
    const minted = f.installationTokens();
    expect(minted.length).toBeGreaterThan(0);
    expect(minted.length).toBeLessThanOrEqual(2);
    expect(minted.every((t) => t.repositories?.join() === 'widget')).toBe(true);
    // Nothing of a person's reached the organisation's repositories.
    const personal = f.requests.filter((r) => r.status === 403 && r.path.includes('/acme/'));
    expect(personal).toEqual([]);
    // The commit is the bot's: GitHub links `<id>+emend[bot]@users.noreply…` to it (read here as the app).
    const auth = createAppAuth({
      appId: app.id,
      privateKey: app.privateKey,
      request: request.defaults({ baseUrl: f.apiUrl }),
    });
    const { token } = await auth({ type: 'installation', installationId: installation!.id });
    const listedCommits = await fetch(`${f.apiUrl}/repos/acme/widget/pulls/${pull!.number}/commits`, {
      headers: { authorization: `token ${token}` },
    });
    const pulled = (await listedCommits.json()) as { commit: { author: { name: string; email: string } } }[];
    // On github.com `<id>+emend[bot]@users.noreply.github.com`; on an Enterprise server (the fake) its own host name.
    const email = `${app.botId}+emend[bot]@users.noreply.${new URL(f.webUrl).hostname}`;
    expect(pulled.map((c) => c.commit.author)).toEqual([{ name: 'emend[bot]', email, date: expect.any(String) }]);

    // Given up again: recorded in the workspace's log with the release.
    const released = await h.app.inject({
      method: 'DELETE',
      url: `/v1/apps/github/installations/${installation!.id}`,
      headers: owner.auth,
    });
    expect(released.statusCode, released.body).toBe(204);
    const releaseRows = await h.deps.db
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.action, 'app.installation_released'));
    expect(releaseRows.map((r) => [r.workspaceId, r.targets, r.actorAccountId])).toEqual([
      [owner.workspace.id, { host: 'github', installation_id: String(installation!.id) }, claimRows[0]!.actorAccountId],
    ]);
  });

  it('refuses the claim of someone who is not an admin of the organisation, and claims nothing', async () => {
    const s = await setUp();
    const refused = await installAndClaim(s, 'bob');
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('bob is not an admin of acme');
    const listed = await s.h.app.inject({ method: 'GET', url: '/v1/apps/installations', headers: s.owner.auth });
    expect(listed.json().installations).toEqual([]);
    expect(
      await s.h.deps.db.select().from(auditEvents).where(eq(auditEvents.action, 'app.installation_claimed')),
    ).toEqual([]);
    // Unclaimed, the app's installation serves nobody: a task on acme falls back to the (absent) connection.
    const created = await s.h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: s.owner.auth,
      payload: { prompt: 'make add(2, 3) return 5', repo_url: `${s.f.webUrl}/acme/widget` },
    });
    expect(created.statusCode).toBe(412);
    expect(created.json().error).toBe('scm_not_connected');
  });

  it('a claim finished in another browser claims nothing', async () => {
    const s = await setUp();
    const start = await fetch(`${s.base}/v1/apps/github/install`, { headers: s.owner.auth });
    const { install_url: installUrl } = (await start.json()) as { install_url: string };
    s.f.installAs('alice', { account: 'acme' });
    s.f.oauthAs('alice');
    const stranger = new CookieJar();
    const setup = await stranger.fetch(installUrl);
    expect(setup.status).toBe(302);
    const landed = await stranger.fetch(setup.headers.get('location')!);
    expect(landed.status).toBe(403);
    expect(await landed.text()).toContain('started in another browser');
    const listed = await s.h.app.inject({ method: 'GET', url: '/v1/apps/installations', headers: s.owner.auth });
    expect(listed.json().installations).toEqual([]);
  });

  it("the app's one webhook: a mention on a covered repository starts a task with no hook registered; suspended, tasks are refused saying so", async () => {
    const s = await setUp();
    const { h, f, owner } = s;
    expect((await installAndClaim(s, 'alice')).headers.get('location')).toBe('/app/account?claimed=acme');
    const repoUrl = `${f.webUrl}/acme/widget`;
    const on = await h.app.inject({
      method: 'PUT',
      url: `/v1/me/repos/triggers?repo=${encodeURIComponent(repoUrl)}`,
      headers: owner.auth,
      payload: {},
    });
    expect(on.statusCode, on.body).toBe(201);
    expect(on.json().hook_url).toBe(`${s.base}/v1/apps/github/webhook`);
    expect(f.hooks('acme', 'widget')).toEqual([]);

    const issue = await f.openIssue('acme', 'widget', {
      author: 'alice',
      title: 'add() subtracts',
      body: 'add(2, 3) is -1',
    });
    const asked = await f.commentOn(
      'acme',
      'widget',
      { kind: 'issue', number: issue.number },
      { author: 'alice', body: '@emend please make add(2, 3) return 5' },
    );
    expect(asked.answers.map((a) => a.status)).toContain(202);
    // The repository without triggers: delivered too (the app is on every acme repository), and ignored.
    const elsewhere = await f.openIssue('acme', 'other', { author: 'alice', title: 't', body: '@emend hi' });
    const ignored = await f.commentOn(
      'acme',
      'other',
      { kind: 'issue', number: elsewhere.number },
      { author: 'alice', body: '@emend please fix' },
    );
    expect(ignored.answers.map((a) => a.status)).toEqual([200]);
    const started = await h.deps.db
      .select()
      .from(tasks)
      .where(and(eq(tasks.workspaceId, owner.workspace.id), isNotNull(tasks.trigger)));
    const deadline = Date.now() + 30_000;
    let rows = started;
    while (rows.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      rows = await h.deps.db
        .select()
        .from(tasks)
        .where(and(eq(tasks.workspaceId, owner.workspace.id), isNotNull(tasks.trigger)));
    }
    expect(rows).toHaveLength(1);
    const done = await waitForStatus(h, rows[0]!.id, ['done', 'failed', 'cancelled'], 120_000);
    expect(done.status, done.error ?? '').toBe('done');
    expect(f.pulls('acme', 'widget')[0]?.user).toBe('emend[bot]');

    // The account takes widget out of the installation: the token GitHub now refuses for it is not
    // used (the kept one is dropped on the installation_repositories event), and no connection serves it.
    const [installation] = f.installations();
    const narrowed = await f.setInstallationRepos(installation!.id, ['other']);
    expect(narrowed.answers.map((a) => a.status)).toEqual([202]);
    const outside = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: { prompt: 'again', repo_url: repoUrl },
    });
    expect(outside.statusCode, outside.body).toBe(412);
    expect(outside.json().error).toBe('scm_not_connected');
    await f.setInstallationRepos(installation!.id, undefined);

    // Sign-in and connecting go through the app's own user sign-in (no separate OAuth app).
    const login = await h.app.inject({ method: 'GET', url: '/v1/auth/scm/login' });
    expect(login.statusCode, login.body).toBe(302);
    expect(new URL(login.headers.location as string).searchParams.get('client_id')).toBe(s.app.clientId);

    // A task waiting at its plan gate when the installation is suspended on GitHub: it ends (cancelled,
    // as a gate ends) saying why, and a new task is refused with the same sentence.
    const waiting = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: { prompt: 'make add(2, 3) return 5', repo_url: repoUrl, approval_mode: 'manual' },
    });
    expect(waiting.statusCode, waiting.body).toBe(201);
    await waitForStatus(h, waiting.json().id, ['awaiting_plan'], 60_000);
    const suspended = await f.suspend(installation!.id);
    expect(suspended.answers.map((a) => a.status)).toEqual([202]);
    const stopped = await waitForStatus(h, waiting.json().id, ['failed', 'cancelled', 'done'], 30_000);
    expect(stopped.status).toBe('cancelled');
    expect(stopped.error).toContain('installation on acme is suspended');
    const refused = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: { prompt: 'again', repo_url: repoUrl },
    });
    expect(refused.statusCode).toBe(412);
    expect(refused.json().message).toContain('installation on acme is suspended');
    // Uninstalled: said as such.
    await f.unsuspend(installation!.id);
    await f.uninstall(installation!.id);
    const listed = await h.app.inject({ method: 'GET', url: '/v1/apps/installations', headers: owner.auth });
    expect(listed.json().installations).toEqual([]);
  });

  it('refuses a delivery not signed with the app’s secret', async () => {
    const s = await setUp();
    const res = await fetch(`${s.base}/v1/apps/github/webhook`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'installation',
        'x-github-delivery': 'd-1',
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
      },
      body: JSON.stringify({ action: 'created', installation: { id: 1, account: { login: 'acme' } } }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toBe('unauthorized');
  });
});

describe("creating the host's GitHub App in one click (the manifest flow)", { timeout: 120_000 }, () => {
  let svc: ModelService | undefined;
  let gh: FakeGitHub | undefined;
  afterEach(async () => {
    await svc?.close();
    await gh?.close();
    svc = gh = undefined;
  });

  it('an administrator posts the manifest, GitHub creates the app, emend stores its credentials (0600) and acts as it after a restart', async () => {
    const f = await startFakeGitHub();
    gh = f;
    // Held until the service listens: a port freed at once could be taken while the service starts.
    const held = await heldPort();
    const port = held.port;
    const base = `http://127.0.0.1:${port}`;
    const hosts = JSON.stringify([{ id: 'github', kind: 'github', web_url: f.webUrl, api_url: f.apiUrl }]);
    svc = await startModelService({ EMEND_BASE_URL: base, EMEND_SCM_HOSTS: hosts }, 'openai');
    const { h } = svc;
    await held.release();
    await h.app.listen({ port, host: '127.0.0.1' });
    f.addOrg('acme', { admins: ['alice'] });
    f.manifestAs('alice');
    const admin = await newAccount(h, { admin: true, scm: false });
    const someone = await newAccount(h, { scm: false });

    const refused = await fetch(`${base}/v1/apps/github/manifest`, { headers: someone.auth });
    expect(refused.status).toBe(403);

    const browser = new CookieJar();
    const start = await browser.fetch(`${base}/v1/apps/github/manifest?org=acme`, { headers: admin.auth });
    expect(start.status).toBe(200);
    const page = await start.text();
    const action = /action="([^"]+)"/.exec(page)![1]!.replace(/&#38;/g, '&');
    const manifestJson = /name="manifest" value="([^"]+)"/
      .exec(page)![1]!
      .replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c)));
    expect(action).toMatch(new RegExp(`^${f.webUrl}/organizations/acme/settings/apps/new\\?state=`));
    const manifest = JSON.parse(manifestJson);
    expect(manifest).toMatchObject({
      hook_attributes: { url: `${base}/v1/apps/github/webhook` },
      redirect_url: `${base}/v1/apps/github/manifest/callback`,
      callback_urls: [`${base}/v1/auth/scm/callback`],
      setup_url: `${base}/v1/apps/github/setup`,
      default_permissions: {
        contents: 'write',
        pull_requests: 'write',
        issues: 'write',
        metadata: 'read',
        checks: 'read',
      },
    });

    // The browser posts the form to GitHub, which creates the app and sends it back with a code.
    const created = await browser.fetch(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ manifest: manifestJson }).toString(),
    });
    expect(created.status).toBe(302);
    const back = created.headers.get('location')!;
    expect(back.startsWith(`${base}/v1/apps/github/manifest/callback?`)).toBe(true);
    // Another browser with the same link stores nothing.
    const elsewhere = await fetch(back, { redirect: 'manual' });
    expect(elsewhere.status).toBe(403);
    const done = await browser.fetch(back);
    const donePage = await done.text();
    expect(done.status, donePage).toBe(200);
    const [app] = f.apps();
    expect(donePage).toContain(`The GitHub App ${app!.slug} is created`);
    expect(donePage).not.toContain(app!.clientSecret);
    expect(donePage).not.toContain(app!.webhookSecret);

    const dir = join(h.deps.config.dataDir, 'github-apps');
    expect(statSync(join(dir, 'github.pem')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'github.json')).mode & 0o777).toBe(0o600);
    // The next start finds it: the host acts as the app, and its sign-in is the host's OAuth.
    const config = loadConfig({ EMEND_DATA_DIR: h.deps.config.dataDir, EMEND_SCM_HOSTS: hosts });
    expect(config.scmHosts[0]?.app).toMatchObject({
      appId: String(app!.id),
      slug: app!.slug,
      clientId: app!.clientId,
      webhookSecret: app!.webhookSecret,
    });
    expect(config.scmHosts[0]?.app?.privateKey).toBe(app!.privateKey);
  });
});
