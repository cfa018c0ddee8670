import { and, eq, isNotNull } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { auditEvents, tasks } from '../../src/db/schema.js';
import { MARKER } from '../../src/triggers/decide.js';
import { hostEntry } from '../support/code-hosts.js';
import { waitForStatus } from '../support/engine.js';
import { ACCESS } from '../support/fake-host/state.js';
import { type FakeGitea, startFakeGitea } from '../support/fake-gitea/server.js';
import { type FakeGitLab, startFakeGitLab } from '../support/fake-gitlab/server.js';
import { CALC_REPO, GOOD_FIX, scriptCalcRun } from '../support/fix-script.js';
import { type Harness, newAccount } from '../support/harness.js';
import { type ModelService, startModelService } from '../support/model-service.js';
import { heldPort } from '../support/ports.js';

/**
 * A GitLab group's or Gitea organisation's bot (issue 47, point 6), over real HTTP: the workspace
 * registers the bot's token once for the group; emend registers one webhook on the group and none
 * per repository, and acts on the group's repositories as the bot: the owner has no connection.
 */

interface HostCase {
  kind: 'gitlab' | 'gitea';
  start(): Promise<FakeGitLab | FakeGitea>;
  /** The bot (a group access token's user; an owner of the organisation) and a person with write. */
  members(f: FakeGitLab | FakeGitea): { login: string; token: string };
  /** Where the repository lives: GitLab in a subgroup (the bot's group is above it), Gitea in the organisation. */
  owner: string;
  /** The group's hooks as the host's REST lists them to the bot. */
  hooksPath: string;
  /** The author emails of the pull request's commits, read through the host's REST as the bot. */
  commitEmails(f: { apiUrl: string }, token: string, owner: string, number: number): Promise<string[]>;
}

const auth = (kind: HostCase['kind'], token: string) =>
  kind === 'gitlab' ? { authorization: `Bearer ${token}` } : { authorization: `token ${token}` };

const HOSTS: HostCase[] = [
  {
    kind: 'gitlab',
    start: () => startFakeGitLab(),
    members: (f) => {
      const gl = f as FakeGitLab;
      gl.addUser('rita');
      gl.addGroupMember('acme', 'rita', ACCESS.developer);
      return gl.addGroupBot('acme', { name: 'acme emend' });
    },
    owner: 'acme/tools',
    hooksPath: '/groups/acme/hooks',
    commitEmails: async (f, token, owner, number) => {
      const url = `${f.apiUrl}/projects/${encodeURIComponent(`${owner}/calc`)}/merge_requests/${number}/commits`;
      const res = await fetch(url, { headers: auth('gitlab', token) });
      return ((await res.json()) as { author_email: string }[]).map((c) => c.author_email);
    },
  },
  {
    kind: 'gitea',
    start: () => startFakeGitea(),
    members: (f) => {
      const gt = f as FakeGitea;
      gt.addUser('rita');
      gt.addOrgMember('acme', 'rita', ACCESS.developer);
      const bot = gt.addUser('acme-bot', { name: 'acme emend', email: 'acme-bot@bots.example' });
      gt.addOrgMember('acme', 'acme-bot', ACCESS.owner);
      return bot;
    },
    owner: 'acme',
    hooksPath: '/orgs/acme/hooks',
    commitEmails: async (f, token, owner, number) => {
      const res = await fetch(`${f.apiUrl}/repos/${owner}/calc/pulls/${number}/commits`, {
        headers: auth('gitea', token),
      });
      return ((await res.json()) as { commit: { author: { email: string } } }[]).map((c) => c.commit.author.email);
    },
  },
];

describe.each(HOSTS)('group bots on $kind', { timeout: 180_000 }, (host) => {
  let svc: ModelService | undefined;
  let fake: FakeGitLab | FakeGitea | undefined;
  afterEach(async () => {
    await svc?.close();
    await fake?.close();
    svc = fake = undefined;
  });

  async function setUp() {
    const f = await host.start();
    fake = f;
    // Held until the service listens: a port freed at once could be taken while the service starts.
    const held = await heldPort();
    const port = held.port;
    const base = `http://127.0.0.1:${port}`;
    svc = await startModelService({ EMEND_BASE_URL: base }, 'openai', { hosts: [hostEntry(host.kind, f)] });
    const h = svc.h;
    await held.release();
    await h.app.listen({ port, host: '127.0.0.1' });
    scriptCalcRun(svc.model, () => ({ text: GOOD_FIX }));
    const bot = host.members(f);
    f.createRepo(host.owner, 'calc', { files: CALC_REPO });
    // The workspace's owner has no connection to the host: whatever emend does there is the bot's.
    const account = await newAccount(h, { plan: 'pro', credits: 5, scm: false });
    return { h, f, base, bot, account };
  }

  const register = (h: Harness, headers: Record<string, string>, token: string) =>
    h.app.inject({
      method: 'POST',
      url: '/v1/me/scm/groups',
      headers,
      payload: { host: host.kind, group: 'acme', token },
    });

  const groupHooks = async (f: { apiUrl: string }, token: string) =>
    (await (await fetch(`${f.apiUrl}${host.hooksPath}`, { headers: auth(host.kind, token) })).json()) as unknown[];

  it('registers one hook on the group; a mention on a repository of the group starts a task whose pull request and answer are the bot’s', async () => {
    const { h, f, base, bot, account } = await setUp();
    const registered = await register(h, account.auth, bot.token);
    expect(registered.statusCode, registered.body).toBe(201);
    const json = registered.json();
    expect(json).toMatchObject({ host: host.kind, group: 'acme', bot: bot.login });
    expect(json.hook_url).toMatch(new RegExp(`^${base}/v1/hooks/${host.kind}/groups/[0-9a-f-]{36}$`));
    expect(registered.body).not.toContain(bot.token);
    expect(await groupHooks(f, bot.token)).toHaveLength(1);
    const listed = await h.app.inject({ method: 'GET', url: '/v1/me/scm/groups', headers: account.auth });
    expect(listed.json().groups).toEqual([json]);

    const repoUrl = `${f.webUrl}/${host.owner}/calc`;
    const on = await h.app.inject({
      method: 'PUT',
      url: `/v1/me/repos/triggers?repo=${encodeURIComponent(repoUrl)}`,
      headers: account.auth,
      payload: {},
    });
    expect(on.statusCode, on.body).toBe(201);
    expect(on.json().hook_url).toBe(json.hook_url);
    expect(f.hooks(host.owner, 'calc')).toEqual([]);

    const issue = await f.openIssue(host.owner, 'calc', {
      author: 'rita',
      title: 'add() subtracts',
      body: 'add(2, 3) is -1',
    });
    const asked = await f.commentOn(
      host.owner,
      'calc',
      { kind: 'issue', number: issue.number },
      { author: 'rita', body: '@emend please make add(2, 3) return 5' },
    );
    // Delivered once, by the group's hook.
    expect(
      asked.answers.map((a) => a.status),
      JSON.stringify(asked.answers),
    ).toEqual([202]);
    const row = await waitFor('the task', async () => {
      const [t] = await h.deps.db
        .select()
        .from(tasks)
        .where(and(eq(tasks.workspaceId, account.account.id), isNotNull(tasks.trigger)));
      return t;
    });
    const done = await waitForStatus(h, row.id, ['done', 'failed', 'cancelled'], 120_000);
    expect(done.status, done.error ?? '').toBe('done');
    const [pull] = f.pulls(host.owner, 'calc');
    expect(pull?.user).toBe(bot.login);
    const email = host.kind === 'gitlab' ? `${bot.login}@noreply.127.0.0.1` : 'acme-bot@bots.example';
    expect(await host.commitEmails(f, bot.token, host.owner, pull!.number)).toEqual([email]);
    const answered = await waitFor('the answer', async () => {
      const mine = f
        .threadComments(host.owner, 'calc', { kind: 'issue', number: issue.number })
        .filter((c) => c.body.includes(MARKER) && c.body.includes(done.prUrl!));
      return mine.length ? mine : undefined;
    });
    expect(answered.map((c) => c.author)).toEqual([bot.login]);

    // A delivery whose token or signature is not the group's secret: 401, nothing recorded.
    const sent = f.sent();
    const proof: Record<string, string> =
      host.kind === 'gitlab' ? { 'x-gitlab-token': 'wrong' } : { 'x-gitea-signature': '0'.repeat(64) };
    const forged = await f.resend(sent.length - 1, proof);
    expect(forged.status).toBe(401);
  });

  it('a second workspace registering the same group is a conflict; removing the bot removes the group’s hook', async () => {
    const { h, f, bot, account } = await setUp();
    expect((await register(h, account.auth, bot.token)).statusCode).toBe(201);
    const other = await newAccount(h, { scm: false });
    const taken = await register(h, other.auth, bot.token);
    expect(taken.statusCode, taken.body).toBe(409);
    expect(taken.json().error).toBe('conflict');
    expect(await groupHooks(f, bot.token)).toHaveLength(1);
    // A token the host does not know: 400 naming the field.
    const bad = await register(h, other.auth, 'not-a-token');
    expect(bad.statusCode, bad.body).toBe(400);
    expect(bad.json().message).toMatch(/^token: /);

    const removed = await h.app.inject({
      method: 'DELETE',
      url: `/v1/me/scm/groups?host=${host.kind}&group=acme`,
      headers: account.auth,
    });
    expect(removed.statusCode, removed.body).toBe(200);
    expect(await groupHooks(f, bot.token)).toEqual([]);
    const listed = await h.app.inject({ method: 'GET', url: '/v1/me/scm/groups', headers: account.auth });
    expect(listed.json().groups).toEqual([]);

    // Each act is in the workspace's log (names only, never the bot's token); the conflict is in none.
    const rows = await h.deps.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, account.workspace.id));
    expect(rows.map((r) => [r.action, r.detail])).toEqual([
      ['group_bot.added', { host: host.kind, group: 'acme' }],
      ['group_bot.removed', { host: host.kind, group: 'acme' }],
    ]);
    expect(JSON.stringify(rows)).not.toContain(bot.token);
    expect(await h.deps.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, other.workspace.id))).toEqual(
      [],
    );
  });
});

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
