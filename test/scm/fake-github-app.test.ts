import { createHmac, createPrivateKey, createSign, generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAppAuth } from '@octokit/auth-app';
import { request } from '@octokit/request';
import { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { type GitClient, gitClient } from '../support/git-client.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The fake GitHub as a GitHub App sees it, driven by real clients (@octokit/auth-app, Octokit,
 * fetch, the git CLI): JWTs, installation tokens and their scope, the bot's identity, personal
 * tokens refused where SAML is enforced, the manifest and install pages, and deliveries to the
 * app's webhook signed with its secret.
 */

let gh: FakeGitHub;
let hook: WebhookReceiver;
let git: GitClient;
let app: ReturnType<FakeGitHub['addApp']>;
let installationId: number;

const api = (path: string, token: string, init: RequestInit = {}) =>
  fetch(`${gh.apiUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
  });

/** A JWT signed with `key` and the given claims (RS256), as an App makes one. */
function jwt(key: string, claims: Record<string, unknown>): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const body = `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}`;
  const sig = createSign('RSA-SHA256').update(body).sign(createPrivateKey(key)).toString('base64url');
  return `${body}.${sig}`;
}
const now = () => Math.floor(Date.now() / 1000);

/** @octokit/auth-app against the fake. */
const auth = () =>
  createAppAuth({ appId: app.id, privateKey: app.privateKey, request: request.defaults({ baseUrl: gh.apiUrl }) });

/** An installation token from @octokit/auth-app (of `installationId` by default), for `repositoryNames` when given. */
async function installationToken(repositoryNames?: string[], id = installationId) {
  const names = repositoryNames ? { repositoryNames } : {};
  return (await auth()({ type: 'installation', installationId: id, ...names })).token;
}

beforeAll(async () => {
  gh = await startFakeGitHub();
  hook = await startWebhookReceiver();
  git = gitClient(gh.webUrl, 'x-access-token');
  gh.addUser('alice');
  gh.addOrg('acme', { admins: ['alice'], members: ['bob'] });
  gh.createRepo('acme', 'widget', { private: true });
  gh.createRepo('acme', 'gadget', { private: true });
  gh.createRepo('acme', 'other', { private: true });
  app = gh.addApp({ slug: 'emend', webhookUrl: hook.url, setupUrl: 'http://127.0.0.1:9/setup' });
  installationId = (await gh.install(app.id, 'acme', { repositories: ['widget', 'gadget'] })).id;
});
afterAll(async () => {
  git?.close();
  await hook?.close();
  await gh?.close();
});
beforeEach(() => void hook.received.splice(0));

describe('JWT', () => {
  it('accepts the app JWT @octokit/auth-app makes: GET /app', async () => {
    const { token } = await auth()({ type: 'app' });
    const res = await api('/app', token);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: app.id, slug: 'emend', client_id: app.clientId });
  });

  it('refuses a JWT signed with another key, an expired one and one living too long, in GitHub words', async () => {
    const { privateKey: other } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const cases: [string, string][] = [
      [jwt(other, { iss: app.id, iat: now() - 30, exp: now() + 300 }), 'A JSON web token could not be decoded'],
      [
        jwt(app.privateKey, { iss: app.id, iat: now() - 700, exp: now() - 60 }),
        "'Expiration time' claim ('exp') must be",
      ],
      [jwt(app.privateKey, { iss: app.id, iat: now(), exp: now() + 3600 }), 'is too far in the future'],
      ['not.a.jwt', 'A JSON web token could not be decoded'],
    ];
    for (const [token, words] of cases) {
      const res = await api('/app', token);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { message: string }).message).toContain(words);
    }
    // The client id as issuer works too.
    expect((await api('/app', jwt(app.privateKey, { iss: app.clientId, iat: now(), exp: now() + 60 }))).status).toBe(
      200,
    );
  });

  it('finds the installation of a repository, an organisation; 404 elsewhere', async () => {
    const { token } = await auth()({ type: 'app' });
    const got = await (await api('/repos/acme/widget/installation', token)).json();
    expect(got).toMatchObject({ id: installationId, account: { login: 'acme', type: 'Organization' } });
    expect(got).toMatchObject({ app_slug: 'emend', target_type: 'Organization', repository_selection: 'selected' });
    expect((await api('/orgs/acme/installation', token)).status).toBe(200);
    expect((await api('/repos/acme/other/installation', token)).status).toBe(404);
    expect((await api('/users/alice/installation', token)).status).toBe(404);
  });
});

describe('installation tokens', () => {
  it('are scoped to the installation repositories (404 outside) and act as the bot', async () => {
    const token = await installationToken();
    expect(token).toMatch(/^ghs_/);
    expect((await api('/repos/acme/widget', token)).status).toBe(200);
    expect((await api('/repos/acme/other', token)).status).toBe(404);
    const user = await api('/user', token);
    expect(user.status).toBe(403);
    expect(((await user.json()) as { message: string }).message).toBe('Resource not accessible by integration');
    const listed = (await (await api('/installation/repositories', token)).json()) as { total_count: number };
    expect(listed.total_count).toBe(2);

    const octokit = new Octokit({ auth: token, baseUrl: gh.apiUrl });
    const { data: issue } = await gh
      .openIssue('acme', 'widget', { author: 'alice', title: 'Bug' })
      .then((i) =>
        octokit.rest.issues.createComment({ owner: 'acme', repo: 'widget', issue_number: i.number, body: 'on it' }),
      );
    expect(issue.user).toMatchObject({ login: 'emend[bot]', type: 'Bot', id: app.botId });
    const perm = await octokit.rest.repos.getCollaboratorPermissionLevel({
      owner: 'acme',
      repo: 'widget',
      username: 'alice',
    });
    expect(perm.data.permission).toBe('admin');
  });

  it('narrowed to named repositories; a repository outside the installation is 422', async () => {
    const token = await installationToken(['widget']);
    expect((await api('/repos/acme/widget', token)).status).toBe(200);
    expect((await api('/repos/acme/gadget', token)).status).toBe(404);
    const { token: jwtToken } = await auth()({ type: 'app' });
    const res = await api(`/app/installations/${installationId}/access_tokens`, jwtToken, {
      method: 'POST',
      body: JSON.stringify({ repositories: ['other'] }),
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { message: string }).message).toContain('not accessible to the parent installation');
    const wider = await api(`/app/installations/${installationId}/access_tokens`, jwtToken, {
      method: 'POST',
      body: JSON.stringify({ permissions: { administration: 'write' } }),
    });
    expect(wider.status).toBe(422);
    expect(gh.installationTokens().some((t) => t.repositories?.join() === 'widget')).toBe(true);
  });

  it('a read-only token cannot comment (403); an expired one is Bad credentials', async () => {
    const { token: jwtToken } = await auth()({ type: 'app' });
    const res = await api(`/app/installations/${installationId}/access_tokens`, jwtToken, {
      method: 'POST',
      body: JSON.stringify({ permissions: { issues: 'read' } }),
    });
    expect(res.status).toBe(201);
    const { token, expires_at } = (await res.json()) as { token: string; expires_at: string };
    expect(Date.parse(expires_at) - Date.now()).toBeGreaterThan(59 * 60 * 1000);
    const comment = await api('/repos/acme/widget/issues/1/comments', token, {
      method: 'POST',
      body: JSON.stringify({ body: 'no' }),
    });
    expect(comment.status).toBe(403);
    expect((await api('/repos/acme/widget', token)).status).toBe(200);
    gh.advanceClock(61 * 60 * 1000);
    try {
      const late = await api('/repos/acme/widget', token);
      expect(late.status).toBe(401);
      expect(((await late.json()) as { message: string }).message).toBe('Bad credentials');
    } finally {
      gh.advanceClock(-61 * 60 * 1000);
    }
  });

  it('a suspended installation gets no token and its tokens are refused', async () => {
    const token = await installationToken();
    await gh.suspend(installationId);
    try {
      expect((await api('/repos/acme/widget', token)).status).toBe(403);
      const { token: jwtToken } = await auth()({ type: 'app' });
      const res = await api(`/app/installations/${installationId}/access_tokens`, jwtToken, { method: 'POST' });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { message: string }).message).toBe('This installation has been suspended');
    } finally {
      await gh.unsuspend(installationId);
    }
    expect((await api('/repos/acme/widget', token)).status).toBe(200);
    expect(hook.received.map((r) => JSON.parse(r.body).action)).toEqual(['suspend', 'unsuspend']);
  });
});

describe('git with an installation token', () => {
  it('pushes inside its scope; outside it the repository is not found', async () => {
    const token = await installationToken(['widget']);
    const clone = await git.clone(token, '/acme/widget.git');
    expect(clone.status, clone.stderr).toBe(0);
    writeFileSync(join(clone.dir, 'fix.txt'), 'fixed\n');
    await git.git(clone.dir, token, 'add', 'fix.txt');
    await git.git(clone.dir, token, 'commit', '-qm', 'fix');
    const push = await git.git(clone.dir, token, 'push', '-q', 'origin', 'HEAD:refs/heads/emend/fix');
    expect(push.status, push.stderr).toBe(0);
    expect(gh.branchHead('acme', 'widget', 'emend/fix')).toBeDefined();
    const outside = await git.clone(token, '/acme/gadget.git');
    expect(outside.status).not.toBe(0);
    expect(outside.stderr).toContain('not found');
  });

  it('personal tokens are refused on an owner that enforces SAML, REST and git; the installation token is not', async () => {
    const { token: personal } = gh.addUser('alice');
    expect((await api('/repos/acme/widget', personal)).status).toBe(200);
    gh.refusePersonalTokens('acme');
    const res = await api('/repos/acme/widget', personal);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { message: string }).message).toContain('SAML enforcement');
    const clone = await git.clone(personal, '/acme/widget.git');
    expect(clone.status).not.toBe(0);
    expect(clone.stderr).toContain('403');
    const appClone = await git.clone(await installationToken(), '/acme/widget.git');
    expect(appClone.status, appClone.stderr).toBe(0);
  });
});

describe('webhooks', () => {
  const signed = (body: string) => `sha256=${createHmac('sha256', app.webhookSecret).update(body).digest('hex')}`;

  it('repository events reach the installed app with installation.id, signed with its secret', async () => {
    await gh.openIssue('acme', 'gadget', { author: 'bob', title: 'Help' });
    await gh.openIssue('acme', 'other', { author: 'bob', title: 'Not installed here' });
    expect(hook.received).toHaveLength(1);
    const [got] = hook.received;
    expect(got!.headers['x-github-event']).toBe('issues');
    expect(got!.headers['x-hub-signature-256']).toBe(signed(got!.body));
    expect(got!.headers['x-github-hook-installation-target-type']).toBe('integration');
    expect(got!.headers['x-github-hook-installation-target-id']).toBe(String(app.id));
    expect(JSON.parse(got!.body)).toMatchObject({ action: 'opened', installation: { id: installationId } });
  });

  it('installation events: created, repositories added, deleted (its tokens die)', async () => {
    gh.createRepo('bob', 'tool');
    const { id } = await gh.install('emend', 'bob', { repositories: [] });
    await gh.setInstallationRepos(id, ['tool']);
    const token = await installationToken(undefined, id);
    expect((await api('/repos/bob/tool', token)).status).toBe(200);
    await gh.uninstall(id);
    expect((await api('/repos/bob/tool', token)).status).toBe(401);
    const events = hook.received.map((r) => [r.headers['x-github-event'], JSON.parse(r.body).action]);
    expect(events).toEqual([
      ['installation', 'created'],
      ['installation_repositories', 'added'],
      ['installation', 'deleted'],
    ]);
    for (const r of hook.received) expect(r.headers['x-hub-signature-256']).toBe(signed(r.body));
  });
});

describe('manifest flow and install page', () => {
  it('creates an app from a manifest, converts the code once, installs through the page', async () => {
    gh.manifestAs('alice');
    const manifest = {
      name: 'Emend Acme',
      url: 'https://emend.example.com',
      hook_attributes: { url: hook.url },
      redirect_url: 'http://127.0.0.1:9/created',
      setup_url: 'http://127.0.0.1:9/setup',
      default_permissions: { contents: 'write', issues: 'write' },
      default_events: ['issues'],
    };
    const made = await fetch(`${gh.webUrl}/organizations/acme/settings/apps/new?state=s1`, {
      method: 'POST',
      body: new URLSearchParams({ manifest: JSON.stringify(manifest) }),
      redirect: 'manual',
    });
    expect(made.status).toBe(302);
    const back = new URL(made.headers.get('location')!);
    expect(back.searchParams.get('state')).toBe('s1');
    const code = back.searchParams.get('code')!;
    const conv = await fetch(`${gh.apiUrl}/app-manifests/${code}/conversions`, { method: 'POST' });
    expect(conv.status).toBe(201);
    const created = (await conv.json()) as { id: number; slug: string; pem: string; webhook_secret: string };
    expect(created).toMatchObject({ slug: 'emend-acme', owner: { login: 'acme' } });
    expect(created.pem).toContain('PRIVATE KEY');
    expect((await fetch(`${gh.apiUrl}/app-manifests/${code}/conversions`, { method: 'POST' })).status).toBe(404);

    const page = await fetch(`${gh.webUrl}/apps/emend-acme/installations/new?state=s2`, { redirect: 'manual' });
    expect(page.status).toBe(200);
    gh.installAs('alice', { account: 'acme', repositories: ['widget'] });
    const installed = await fetch(`${gh.webUrl}/apps/emend-acme/installations/new?state=s2`, { redirect: 'manual' });
    expect(installed.status).toBe(302);
    const setup = new URL(installed.headers.get('location')!);
    expect(setup.pathname).toBe('/setup');
    expect(setup.searchParams.get('setup_action')).toBe('install');
    expect(setup.searchParams.get('state')).toBe('s2');
    const id = Number(setup.searchParams.get('installation_id'));
    expect(gh.installations().find((i) => i.id === id)).toMatchObject({ appId: created.id, repositories: ['widget'] });
    const delivered = hook.received.at(-1)!;
    expect(delivered.headers['x-hub-signature-256']).toBe(
      `sha256=${createHmac('sha256', created.webhook_secret).update(delivered.body).digest('hex')}`,
    );
  });

  it('the app client id gives expiring ghu_ tokens that list the user installations', async () => {
    gh.oauthAs('bob');
    const redirect = 'http://127.0.0.1:9/cb';
    const authorize = await fetch(
      `${gh.webUrl}/login/oauth/authorize?client_id=${app.clientId}&redirect_uri=${encodeURIComponent(redirect)}&state=x`,
      { redirect: 'manual' },
    );
    const code = new URL(authorize.headers.get('location')!).searchParams.get('code')!;
    const body = { client_id: app.clientId, client_secret: app.clientSecret, code };
    const res = await fetch(`${gh.webUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const got = (await res.json()) as { access_token: string; refresh_token: string; expires_in: number };
    expect(got.access_token).toMatch(/^ghu_/);
    expect(got.refresh_token).toMatch(/^ghr_/);
    expect(got.expires_in).toBe(28800);
    const list = (await (await api('/user/installations', got.access_token)).json()) as {
      installations: { id: number }[];
    };
    expect(list.installations.map((i) => i.id)).toContain(installationId);
    const membership = await (await api('/user/memberships/orgs/acme', got.access_token)).json();
    expect(membership).toMatchObject({ state: 'active', role: 'member', organization: { login: 'acme' } });
    gh.advanceClock(9 * 3600 * 1000);
    try {
      expect((await api('/user/installations', got.access_token)).status).toBe(401);
    } finally {
      gh.advanceClock(-9 * 3600 * 1000);
    }
  });
});
