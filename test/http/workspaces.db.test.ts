import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantCredits } from '../../src/billing/credits.js';
import { creditLedger, tasks, workspaceMembers, workspaces } from '../../src/db/schema.js';
import { type Harness, forceStatus, newAccount, startHarness } from '../support/harness.js';

// Workspaces through the HTTP API (issue 33, points 1 and 3): making and listing them,
// invitations, roles, removal, leaving, transfer, deletion and export. A token acts in its own
// workspace only, so every act in a team workspace goes through a token minted for it
// (POST /v1/me/tokens workspace_id) with the person's personal token.

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.github.createRepo('psf', 'requests');
});
afterAll(() => h.close());

const REPO = 'https://github.com/psf/requests';
type Auth = Record<string, string>;
type Person = Awaited<ReturnType<typeof newAccount>>;
interface Team {
  owner: Person;
  ws: { id: string; name: string };
  /** The owner's token for the team workspace. */
  ownerAuth: Auth;
}
interface Member extends Person {
  /** The member's token for the team workspace. */
  teamAuth: Auth;
}

const call = (auth: Auth, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  h.app.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) });

/** A token of `personal`'s account acting in `workspaceId`. */
async function tokenFor(personal: Auth, workspaceId: string, extra: object = {}): Promise<Auth> {
  const res = await call(personal, 'POST', '/v1/me/tokens', { workspace_id: workspaceId, ...extra });
  expect(res.statusCode).toBe(201);
  return { authorization: `Bearer ${res.json().token}` };
}

async function newTeam(name = 'Platform team'): Promise<Team> {
  const owner = await newAccount(h, { scm: false });
  const created = await call(owner.auth, 'POST', '/v1/workspaces', { name });
  expect(created.statusCode).toBe(201);
  const ws = created.json();
  return { owner, ws, ownerAuth: await tokenFor(owner.auth, ws.id) };
}

async function invite(inviter: Auth, wsId: string, body: object) {
  return call(inviter, 'POST', `/v1/workspaces/${wsId}/invitations`, body);
}

/** A new account that joins the team by invitation with `role`, and its token there. */
async function join(team: Team, role: 'maintainer' | 'member' | 'viewer'): Promise<Member> {
  const person = await newAccount(h, { scm: false });
  const inv = await invite(team.ownerAuth, team.ws.id, { role });
  expect(inv.statusCode).toBe(201);
  const accepted = await call(person.auth, 'POST', '/v1/invitations/accept', { token: inv.json().token });
  expect(accepted.statusCode).toBe(200);
  return { ...person, teamAuth: await tokenFor(person.auth, team.ws.id) };
}

/** The team's members as [account id, role], owner first. */
async function rolesOf(team: Team, auth: Auth = team.ownerAuth) {
  const res = await call(auth, 'GET', `/v1/workspaces/${team.ws.id}/members`);
  expect(res.statusCode).toBe(200);
  return res.json().map((m: { account_id: string; role: string }) => [m.account_id, m.role]);
}

/** The team on the pro plan with credits (no route gives a team workspace credits: the ledger's own function). */
async function fund(wsId: string, credits: number) {
  await h.deps.db.update(workspaces).set({ plan: 'pro' }).where(eq(workspaces.id, wsId));
  await grantCredits(h.deps.db, wsId, credits, h.clock.now(), 'test grant');
}

/** Connects the team workspace to the code host (its owner's act), as pull-request runs need. */
async function connect(team: Team) {
  const user = h.github.addUser(`team-${randomBytes(4).toString('hex')}`);
  const res = await call(team.ownerAuth, 'POST', '/v1/me/scm', { token: user.token });
  expect(res.statusCode).toBe(200);
  return user;
}

const newTask = (auth: Auth, prompt = 'Fix the crash in Session.send') =>
  call(auth, 'POST', '/v1/tasks', { prompt, repo_url: REPO });

describe('creating and listing workspaces', () => {
  it('makes its creator the owner; the list has the personal workspace first, then the rest by name, with one’s role', async () => {
    const team = await newTeam('Zeta');
    expect(team.ws).toMatchObject({ name: 'Zeta', personal: false, role: 'owner', plan: 'free', credits: 0 });
    expect(team.ws.id).not.toBe(team.owner.account.id);
    // A second team whose name sorts before the personal workspace's (the account's email): personal still first.
    const alpha = await call(team.owner.auth, 'POST', '/v1/workspaces', { name: '  Alpha  ' });
    expect(alpha.statusCode).toBe(201);
    expect(alpha.json().name).toBe('Alpha');

    const list = await call(team.owner.auth, 'GET', '/v1/workspaces');
    expect(list.statusCode).toBe(200);
    expect(list.json().map((w: { id: string; personal: boolean; role: string }) => [w.id, w.personal, w.role])).toEqual(
      [
        [team.owner.account.id, true, 'owner'],
        [alpha.json().id, false, 'owner'],
        [team.ws.id, false, 'owner'],
      ],
    );

    // A viewer of Zeta sees it with that role, after their personal workspace.
    const viewer = await join(team, 'viewer');
    const theirs = await call(viewer.auth, 'GET', '/v1/workspaces');
    expect(theirs.json().map((w: { id: string; role: string }) => [w.id, w.role])).toEqual([
      [viewer.account.id, 'owner'],
      [team.ws.id, 'viewer'],
    ]);
    // A team token lists the same workspaces (they are the person's), and GET /v1/workspaces/:id names its own.
    expect((await call(viewer.teamAuth, 'GET', '/v1/workspaces')).json()).toEqual(theirs.json());
    const own = await call(viewer.teamAuth, 'GET', `/v1/workspaces/${team.ws.id}`);
    expect(own.json()).toMatchObject({ id: team.ws.id, role: 'viewer', personal: false });
  });

  it('refuses a blank name', async () => {
    const { auth, account } = await newAccount(h, { scm: false });
    for (const name of ['', '   ', 'x'.repeat(101)]) {
      const res = await call(auth, 'POST', '/v1/workspaces', { name });
      expect(res.statusCode).toBe(400);
    }
    expect((await call(auth, 'GET', '/v1/workspaces')).json().map((w: { id: string }) => w.id)).toEqual([account.id]);
  });
});

describe('invitations', () => {
  it('shows the secret and link once, lists without them, and the account that accepts joins with the role', async () => {
    const team = await newTeam();
    const created = await invite(team.ownerAuth, team.ws.id, { role: 'member', email: 'Dev@Example.com' });
    expect(created.statusCode).toBe(201);
    const inv = created.json();
    expect(inv.token).toMatch(/^inv_[A-Za-z0-9_-]{32}$/);
    expect(inv.url).toBe(`${h.deps.config.baseUrl.replace(/\/+$/, '')}/app/#/invitation/${inv.token}`);
    expect(inv).toMatchObject({ role: 'member', email: 'dev@example.com', accepted_at: null, revoked_at: null });
    expect(new Date(inv.expires_at).getTime() - h.clock.now().getTime()).toBe(7 * 86_400_000);

    const listed = await call(team.ownerAuth, 'GET', `/v1/workspaces/${team.ws.id}/invitations`);
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toHaveLength(1);
    expect(listed.json()[0].id).toBe(inv.id);
    expect(listed.json()[0]).not.toHaveProperty('token');
    expect(listed.json()[0]).not.toHaveProperty('url');
    expect(listed.body).not.toContain(inv.token);

    const joiner = await newAccount(h, { scm: false });
    const accepted = await call(joiner.auth, 'POST', '/v1/invitations/accept', { token: ` ${inv.token} ` });
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json()).toMatchObject({ id: team.ws.id, role: 'member', personal: false });
    expect(await rolesOf(team)).toEqual([
      [team.owner.account.id, 'owner'],
      [joiner.account.id, 'member'],
    ]);
    const after = (await call(team.ownerAuth, 'GET', `/v1/workspaces/${team.ws.id}/invitations`)).json();
    expect(after[0].accepted_at).toBe(h.clock.now().toISOString());
    // A personal workspace is not shared.
    const personal = await invite(joiner.auth, joiner.account.id, { role: 'member' });
    expect(personal.statusCode).toBe(409);
  });

  it('refuses a second acceptance, a revoked and an expired invitation with 404, changing nothing', async () => {
    const team = await newTeam();
    const first = await newAccount(h, { scm: false });
    const late = await newAccount(h, { scm: false });
    const accept = (who: Person, token: string) => call(who.auth, 'POST', '/v1/invitations/accept', { token });
    const invitations = async () =>
      (await call(team.ownerAuth, 'GET', `/v1/workspaces/${team.ws.id}/invitations`)).json();

    const used = (await invite(team.ownerAuth, team.ws.id, { role: 'maintainer' })).json();
    expect((await accept(first, used.token)).statusCode).toBe(200);

    const revoked = (await invite(team.ownerAuth, team.ws.id, { role: 'member' })).json();
    const revoke = await call(team.ownerAuth, 'DELETE', `/v1/workspaces/${team.ws.id}/invitations/${revoked.id}`);
    expect(revoke.statusCode).toBe(200);
    expect(revoke.json().revoked_at).toBe(h.clock.now().toISOString());

    const expiring = (await invite(team.ownerAuth, team.ws.id, { role: 'viewer', expires_in_days: 1 })).json();
    // It expires at the very instant the clock reaches below (expires_at is not after now).
    h.clock.advance(86_400_000 - 1000);
    const unused = (await invite(team.ownerAuth, team.ws.id, { role: 'viewer' })).json();
    h.clock.advance(1000);

    const membersBefore = await rolesOf(team);
    const invitationsBefore = await invitations();
    for (const token of [used.token, revoked.token, expiring.token, `inv_${'A'.repeat(32)}`, 'nonsense']) {
      const res = await accept(late, token);
      expect(res.statusCode, token).toBe(404);
      expect(res.json().error).toBe('not_found');
    }
    // The first acceptance's account keeps its role; the late one joined nothing; no invitation changed.
    expect(await rolesOf(team)).toEqual(membersBefore);
    expect(membersBefore).toContainEqual([first.account.id, 'maintainer']);
    expect((await call(late.auth, 'GET', '/v1/workspaces')).json()).toHaveLength(1);
    expect(await invitations()).toEqual(invitationsBefore);
    // The one still valid works (the refusals were not of the account).
    expect((await accept(late, unused.token)).statusCode).toBe(200);
    expect(await rolesOf(team)).toContainEqual([late.account.id, 'viewer']);
  });
});

describe('invitations to a member', () => {
  it('accepted by someone already a member: the invitation is spent and the role kept', async () => {
    const team = await newTeam();
    const member = await join(team, 'member');
    const inv = (await invite(team.ownerAuth, team.ws.id, { role: 'viewer' })).json();
    for (const who of [team.owner, member]) {
      const again = (await invite(team.ownerAuth, team.ws.id, { role: 'maintainer' })).json();
      const res = await call(who.auth, 'POST', '/v1/invitations/accept', { token: again.token });
      expect(res.statusCode).toBe(200);
      expect(res.json().role).toBe(who === member ? 'member' : 'owner');
    }
    expect((await call(member.auth, 'POST', '/v1/invitations/accept', { token: inv.token })).json().role).toBe(
      'member',
    );
    expect(await rolesOf(team)).toEqual([
      [team.owner.account.id, 'owner'],
      [member.account.id, 'member'],
    ]);
    const spent = (await call(team.ownerAuth, 'GET', `/v1/workspaces/${team.ws.id}/invitations`)).json();
    expect(spent.every((i: { accepted_at: string | null }) => i.accepted_at !== null)).toBe(true);
  });
});

describe('roles and members', () => {
  it('a maintainer cannot invite or make an owner, nor change or remove the owner (403); a member cannot invite', async () => {
    const team = await newTeam();
    const maintainer = await join(team, 'maintainer');
    const member = await join(team, 'member');
    const before = await rolesOf(team);
    const invitationsBefore = (await call(team.ownerAuth, 'GET', `/v1/workspaces/${team.ws.id}/invitations`)).json();

    const refusals = [
      await invite(maintainer.teamAuth, team.ws.id, { role: 'owner' }),
      await call(maintainer.teamAuth, 'PATCH', `/v1/workspaces/${team.ws.id}/members/${member.account.id}`, {
        role: 'owner',
      }),
      await call(maintainer.teamAuth, 'PATCH', `/v1/workspaces/${team.ws.id}/members/${team.owner.account.id}`, {
        role: 'viewer',
      }),
      await call(maintainer.teamAuth, 'DELETE', `/v1/workspaces/${team.ws.id}/members/${team.owner.account.id}`),
      await call(maintainer.teamAuth, 'POST', `/v1/workspaces/${team.ws.id}/transfer`, {
        account_id: maintainer.account.id,
      }),
      await invite(member.teamAuth, team.ws.id, { role: 'viewer' }),
    ];
    for (const res of refusals) {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error).toBe('forbidden');
    }
    expect(await rolesOf(team)).toEqual(before);
    expect((await call(team.ownerAuth, 'GET', `/v1/workspaces/${team.ws.id}/invitations`)).json()).toEqual(
      invitationsBefore,
    );

    // What a maintainer may: invite up to its own level, change and remove members below the owner.
    expect((await invite(maintainer.teamAuth, team.ws.id, { role: 'maintainer' })).statusCode).toBe(201);
    const demoted = await call(
      maintainer.teamAuth,
      'PATCH',
      `/v1/workspaces/${team.ws.id}/members/${member.account.id}`,
      { role: 'viewer' },
    );
    expect(demoted.statusCode).toBe(200);
    expect(demoted.json()).toMatchObject({ account_id: member.account.id, role: 'viewer' });
    // The owner is not made by a role change either: ownership moves by transfer.
    const byOwner = await call(team.ownerAuth, 'PATCH', `/v1/workspaces/${team.ws.id}/members/${member.account.id}`, {
      role: 'owner',
    });
    expect(byOwner.statusCode).toBe(400);
    expect(await rolesOf(team)).toContainEqual([member.account.id, 'viewer']);
  });

  it('a role change takes effect on the member’s existing token', async () => {
    const team = await newTeam();
    await fund(team.ws.id, 3);
    await connect(team);
    const member = await join(team, 'member');
    expect((await newTask(member.teamAuth)).statusCode).toBe(201);

    const res = await call(team.ownerAuth, 'PATCH', `/v1/workspaces/${team.ws.id}/members/${member.account.id}`, {
      role: 'viewer',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().role).toBe('viewer');
    const refused = await newTask(member.teamAuth, 'Another fix to make');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toContain('member role');
    expect((await call(member.teamAuth, 'GET', '/v1/tasks')).statusCode).toBe(200);
    expect((await call(member.teamAuth, 'GET', '/v1/me')).json().role).toBe('viewer');
  });

  it('removing a member stops their tokens for the workspace (401) while their personal token works', async () => {
    const team = await newTeam();
    await fund(team.ws.id, 1);
    await connect(team);
    const member = await join(team, 'member');
    const spare = await tokenFor(member.auth, team.ws.id, { name: 'second' });
    const theirTask = (await newTask(member.teamAuth)).json();
    expect((await call(member.teamAuth, 'GET', '/v1/me')).json().workspace.id).toBe(team.ws.id);

    const removed = await call(team.ownerAuth, 'DELETE', `/v1/workspaces/${team.ws.id}/members/${member.account.id}`);
    expect(removed.statusCode).toBe(204);
    for (const auth of [member.teamAuth, spare]) {
      const res = await call(auth, 'GET', '/v1/me');
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toBe('invalid_token');
    }
    const me = await call(member.auth, 'GET', '/v1/me');
    expect(me.statusCode).toBe(200);
    expect(me.json().workspace).toEqual({ id: member.account.id, name: expect.any(String), personal: true });
    expect((await call(member.auth, 'GET', '/v1/workspaces')).json().map((w: { id: string }) => w.id)).toEqual([
      member.account.id,
    ]);
    expect(await rolesOf(team)).toEqual([[team.owner.account.id, 'owner']]);
    // What they made stays the workspace's, still theirs by created_by.
    const kept = await call(team.ownerAuth, 'GET', `/v1/tasks?created_by=${member.account.id}`);
    expect(kept.json().map((t: { id: string }) => t.id)).toEqual([theirTask.id]);
    // Their tokens of the workspace read as revoked in their list; the personal one does not.
    const listed = (await call(member.auth, 'GET', '/v1/me/tokens')).json();
    for (const t of listed) expect(t.revoked_at === null, t.workspace_id).toBe(t.workspace_id === member.account.id);
    // Removing oneself is leaving, not removal; removing someone not there is 404.
    expect(
      (await call(team.ownerAuth, 'DELETE', `/v1/workspaces/${team.ws.id}/members/${team.owner.account.id}`))
        .statusCode,
    ).toBe(400);
    expect(
      (await call(team.ownerAuth, 'DELETE', `/v1/workspaces/${team.ws.id}/members/${member.account.id}`)).statusCode,
    ).toBe(404);
  });

  it('anyone but the owner can leave (the owner: 409), and the leaver’s team token stops working', async () => {
    const team = await newTeam();
    const member = await join(team, 'maintainer');
    const ownerLeaves = await call(team.ownerAuth, 'POST', `/v1/workspaces/${team.ws.id}/leave`);
    expect(ownerLeaves.statusCode).toBe(409);
    expect(ownerLeaves.json().error).toBe('conflict');
    expect(await rolesOf(team)).toEqual([
      [team.owner.account.id, 'owner'],
      [member.account.id, 'maintainer'],
    ]);

    const left = await call(member.teamAuth, 'POST', `/v1/workspaces/${team.ws.id}/leave`);
    expect(left.statusCode).toBe(204);
    expect((await call(member.teamAuth, 'GET', '/v1/me')).statusCode).toBe(401);
    expect(await rolesOf(team)).toEqual([[team.owner.account.id, 'owner']]);
    expect((await call(member.auth, 'GET', '/v1/me')).statusCode).toBe(200);
  });

  it('transfer makes another member the owner and the old owner a maintainer: exactly one owner', async () => {
    const team = await newTeam();
    const heir = await join(team, 'member');
    const stranger = await newAccount(h, { scm: false });
    const notMember = await call(team.ownerAuth, 'POST', `/v1/workspaces/${team.ws.id}/transfer`, {
      account_id: stranger.account.id,
    });
    expect(notMember.statusCode).toBe(404);

    const res = await call(team.ownerAuth, 'POST', `/v1/workspaces/${team.ws.id}/transfer`, {
      account_id: heir.account.id,
    });
    expect(res.statusCode).toBe(200);
    const roles = res.json().map((m: { account_id: string; role: string }) => [m.account_id, m.role]);
    expect(roles).toEqual([
      [heir.account.id, 'owner'],
      [team.owner.account.id, 'maintainer'],
    ]);
    const owners = await h.deps.db
      .select()
      .from(workspaceMembers)
      .where(and(eq(workspaceMembers.workspaceId, team.ws.id), eq(workspaceMembers.role, 'owner')));
    expect(owners.map((o) => o.accountId)).toEqual([heir.account.id]);
    // The old owner's token now has the maintainer's reach: no export, no deletion; the heir's has it.
    expect((await call(team.ownerAuth, 'GET', `/v1/workspaces/${team.ws.id}/export`)).statusCode).toBe(403);
    expect((await call(team.ownerAuth, 'DELETE', `/v1/workspaces/${team.ws.id}`)).statusCode).toBe(403);
    expect((await call(heir.teamAuth, 'GET', `/v1/workspaces/${team.ws.id}/export`)).statusCode).toBe(200);
    // And the old owner may now leave.
    expect((await call(team.ownerAuth, 'POST', `/v1/workspaces/${team.ws.id}/leave`)).statusCode).toBe(204);
    expect(await rolesOf(team, heir.teamAuth)).toEqual([[heir.account.id, 'owner']]);
    // A personal workspace keeps its owner.
    const personal = await call(heir.auth, 'POST', `/v1/workspaces/${heir.account.id}/transfer`, {
      account_id: team.owner.account.id,
    });
    expect(personal.statusCode).toBe(409);
  });
});

describe('deleting a workspace', () => {
  it('is refused while a task is active; then its tasks go, its ledger stays and its tokens stop', async () => {
    const team = await newTeam();
    await fund(team.ws.id, 5);
    await connect(team);
    const member = await join(team, 'member');
    const created = await newTask(member.teamAuth);
    expect(created.statusCode).toBe(201);
    const taskId = created.json().id;

    const busy = await call(team.ownerAuth, 'DELETE', `/v1/workspaces/${team.ws.id}`);
    expect(busy.statusCode).toBe(409);
    expect(busy.json().message).toContain(taskId);
    expect((await call(member.teamAuth, 'GET', `/v1/tasks/${taskId}`)).statusCode).toBe(200);
    expect((await call(member.teamAuth, 'GET', '/v1/me')).statusCode).toBe(200);

    await forceStatus(h, eq(tasks.id, taskId), 'done');
    const ledgerBefore = await h.deps.db.select().from(creditLedger).where(eq(creditLedger.workspaceId, team.ws.id));
    expect(ledgerBefore.map((r) => r.kind).sort()).toEqual(['grant', 'hold']);

    const deleted = await call(team.ownerAuth, 'DELETE', `/v1/workspaces/${team.ws.id}`);
    expect(deleted.statusCode).toBe(204);
    for (const auth of [team.ownerAuth, member.teamAuth]) {
      const res = await call(auth, 'GET', `/v1/tasks/${taskId}`);
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toBe('invalid_token');
    }
    for (const who of [team.owner, member]) {
      expect((await call(who.auth, 'GET', `/v1/tasks/${taskId}`)).statusCode).toBe(404);
      expect((await call(who.auth, 'GET', '/v1/workspaces')).json().map((w: { id: string }) => w.id)).toEqual([
        who.account.id,
      ]);
    }
    expect(await h.deps.db.select().from(tasks).where(eq(tasks.id, taskId))).toEqual([]);
    // The accounting stays: the ledger rows and the (deleted) workspace row they name.
    const ledgerAfter = await h.deps.db.select().from(creditLedger).where(eq(creditLedger.workspaceId, team.ws.id));
    expect(ledgerAfter).toEqual(ledgerBefore);
    const [row] = await h.deps.db.select().from(workspaces).where(eq(workspaces.id, team.ws.id));
    expect(row!.deletedAt).toEqual(h.clock.now());
    // A new token for it cannot be made either.
    const mint = await call(team.owner.auth, 'POST', '/v1/me/tokens', { workspace_id: team.ws.id });
    expect(mint.statusCode).toBe(404);
  });

  it('a personal workspace cannot be deleted (409)', async () => {
    const { auth, account } = await newAccount(h, { scm: false });
    const res = await call(auth, 'DELETE', `/v1/workspaces/${account.id}`);
    expect(res.statusCode).toBe(409);
    expect((await call(auth, 'GET', '/v1/me')).statusCode).toBe(200);
    expect((await call(auth, 'GET', '/v1/workspaces')).json().map((w: { id: string }) => w.id)).toEqual([account.id]);
  });
});

describe('exporting a workspace', () => {
  it('holds its tasks, members and settings with secret names, and no secret value', async () => {
    const team = await newTeam();
    await fund(team.ws.id, 2);
    const scmUser = await connect(team);
    const member = await join(team, 'member');
    const pending = (await invite(team.ownerAuth, team.ws.id, { role: 'viewer' })).json();
    const task = (await newTask(member.teamAuth)).json();

    const SECRET_VALUE = `npm_${randomBytes(16).toString('hex')}`;
    const OTHER_SECRET = `pypi-${randomBytes(16).toString('hex')}`;
    const PROVIDER_KEY = `sk-${randomBytes(24).toString('hex')}`;
    const q = (repo: string) => `?repo=${encodeURIComponent(repo)}`;
    const settings = await call(team.ownerAuth, 'PATCH', `/v1/me/repos/settings${q(REPO)}`, {
      setup_command: 'make deps',
      test_command: 'make test',
    });
    expect(settings.statusCode).toBe(200);
    const saved = await call(team.ownerAuth, 'POST', `/v1/me/repos/secrets${q(REPO)}`, {
      name: 'NPM_TOKEN',
      value: SECRET_VALUE,
    });
    expect(saved.statusCode).toBe(201);
    // A secret of a repository with no other settings is still the workspace's, by name.
    const bare = await call(team.ownerAuth, 'POST', `/v1/me/repos/secrets${q('https://github.com/acme/tools')}`, {
      name: 'PYPI_TOKEN',
      value: OTHER_SECRET,
    });
    expect(bare.statusCode).toBe(201);
    const key = await call(team.ownerAuth, 'POST', '/v1/me/keys', { provider: 'openai', api_key: PROVIDER_KEY });
    expect(key.statusCode).toBe(201);

    const res = await call(team.ownerAuth, 'GET', `/v1/workspaces/${team.ws.id}/export`);
    expect(res.statusCode).toBe(200);
    const out = res.json();
    expect(out.workspace).toMatchObject({ id: team.ws.id, personal: false, plan: 'pro', credits: 1 });
    expect(out.tasks.map((t: { id: string }) => t.id)).toEqual([task.id]);
    expect(out.members.map((m: { account_id: string; role: string }) => [m.account_id, m.role])).toEqual([
      [team.owner.account.id, 'owner'],
      [member.account.id, 'member'],
    ]);
    expect(out.invitations.map((i: { id: string }) => i.id)).toContain(pending.id);
    const names = (repo: string) =>
      out.repo_settings.find((s: { repo: string }) => s.repo.toLowerCase().includes(repo))?.secrets;
    expect(out.repo_settings.find((s: { setup_command: string }) => s.setup_command === 'make deps')).toBeDefined();
    expect(names('psf/requests')).toEqual(['NPM_TOKEN']);
    expect(names('acme/tools')).toEqual(['PYPI_TOKEN']);
    expect(out.credit_ledger.map((l: { kind: string }) => l.kind).sort()).toEqual(['grant', 'hold']);
    for (const secret of [SECRET_VALUE, OTHER_SECRET, PROVIDER_KEY, scmUser.token, pending.token])
      expect(res.body).not.toContain(secret);

    // Export is the owner's: a member's token is refused; another workspace's id is not found.
    expect((await call(member.teamAuth, 'GET', `/v1/workspaces/${team.ws.id}/export`)).statusCode).toBe(403);
    expect((await call(team.ownerAuth, 'GET', `/v1/workspaces/${team.owner.account.id}/export`)).statusCode).toBe(404);
  });
});

describe('a shared workspace', () => {
  it('a member’s task spends the team’s credits; /v1/me and the task list are the workspace’s', async () => {
    const team = await newTeam();
    await fund(team.ws.id, 5);
    await connect(team);
    const member = await join(team, 'member');
    const personalBefore = (await call(member.auth, 'GET', '/v1/me')).json();

    const mine = await newTask(member.teamAuth);
    expect(mine.statusCode).toBe(201);
    expect(mine.json().mode).toBe('pr');
    const ownerTask = await newTask(team.ownerAuth, 'Owner’s fix of the retry loop');
    expect(ownerTask.statusCode).toBe(201);

    const me = await call(member.teamAuth, 'GET', '/v1/me');
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({
      id: member.account.id,
      email: member.account.email,
      plan: 'pro',
      credits: 3,
      workspace: { id: team.ws.id, name: team.ws.name, personal: false },
      role: 'member',
    });
    // The member's personal workspace did not pay.
    const personal = (await call(member.auth, 'GET', '/v1/me')).json();
    expect(personal).toMatchObject({
      plan: personalBefore.plan,
      credits: personalBefore.credits,
      workspace: { id: member.account.id, personal: true },
      role: 'owner',
    });
    const [row] = await h.deps.db.select().from(tasks).where(eq(tasks.id, mine.json().id));
    expect(row).toMatchObject({ workspaceId: team.ws.id, createdBy: member.account.id, creditHeld: true });

    const ids = async (auth: Auth, query = '') =>
      (await call(auth, 'GET', `/v1/tasks${query}`)).json().map((t: { id: string }) => t.id);
    const both = [ownerTask.json().id, mine.json().id].sort();
    expect((await ids(member.teamAuth)).sort()).toEqual(both);
    expect((await ids(team.ownerAuth)).sort()).toEqual(both);
    expect(await ids(member.teamAuth, `?created_by=${member.account.id}`)).toEqual([mine.json().id]);
    expect(await ids(member.teamAuth, `?created_by=${team.owner.account.id}`)).toEqual([ownerTask.json().id]);
    // The personal tokens see their personal workspaces' tasks: none of these.
    expect(await ids(member.auth)).toEqual([]);
    expect(await ids(team.owner.auth)).toEqual([]);
  });

  it('a token of one workspace cannot read another workspace’s task or the workspace (404)', async () => {
    const a = await newTeam('A');
    const b = await newTeam('B');
    for (const team of [a, b]) {
      await fund(team.ws.id, 1);
      await connect(team);
    }
    const taskB = (await newTask(b.ownerAuth)).json();
    // Even a member of both: its token for A acts in A.
    const both = await join(a, 'maintainer');
    const inv = (await invite(b.ownerAuth, b.ws.id, { role: 'member' })).json();
    expect((await call(both.auth, 'POST', '/v1/invitations/accept', { token: inv.token })).statusCode).toBe(200);
    for (const auth of [a.ownerAuth, both.teamAuth, both.auth]) {
      const res = await call(auth, 'GET', `/v1/tasks/${taskB.id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe('not_found');
      expect((await call(auth, 'GET', `/v1/workspaces/${b.ws.id}/members`)).statusCode).toBe(404);
      expect((await call(auth, 'DELETE', `/v1/tasks/${taskB.id}`)).statusCode).toBe(404);
    }
    const bToken = await tokenFor(both.auth, b.ws.id);
    expect((await call(bToken, 'GET', `/v1/tasks/${taskB.id}`)).statusCode).toBe(200);
  });
});

describe('tokens of workspaces', () => {
  it('are made only for one’s own workspaces, never beyond the calling token’s scopes, and are listed with both', async () => {
    const team = await newTeam();
    const outsider = await newAccount(h, { scm: false });
    for (const workspace_id of [team.ws.id, team.owner.account.id, '0193a7c2-5b1e-7f3a-9c1d-2e4f6a8b0c1e']) {
      const res = await call(outsider.auth, 'POST', '/v1/me/tokens', { workspace_id });
      expect(res.statusCode, workspace_id).toBe(404);
      expect(res.json().error).toBe('not_found');
    }

    const made = await call(team.owner.auth, 'POST', '/v1/me/tokens', {
      name: 'reader',
      workspace_id: team.ws.id,
      scopes: ['tasks:read'],
    });
    expect(made.statusCode).toBe(201);
    expect(made.json()).toMatchObject({ name: 'reader', workspace_id: team.ws.id, scopes: ['tasks:read'] });
    const reader = { authorization: `Bearer ${made.json().token}` };

    // A scoped token mints no token at all, beyond its scopes or within them (nor revokes one): nothing made.
    const countBefore = (await call(team.owner.auth, 'GET', '/v1/me/tokens')).json().length;
    for (const body of [{ scopes: ['tasks:read', 'tasks:write'] }, { scopes: ['members'] }, { name: 'child' }]) {
      const res = await call(reader, 'POST', '/v1/me/tokens', body);
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toBe('forbidden');
      expect(res.json().message).toContain('a token without scopes');
    }
    expect((await call(team.owner.auth, 'GET', '/v1/me/tokens')).json()).toHaveLength(countBefore);
    // An unscoped token mints a narrower one, never asking beyond the scopes that exist.
    const child = await call(team.owner.auth, 'POST', '/v1/me/tokens', {
      name: 'child',
      workspace_id: team.ws.id,
      scopes: ['tasks:read'],
    });
    expect(child.statusCode).toBe(201);
    expect(child.json()).toMatchObject({ workspace_id: team.ws.id, scopes: ['tasks:read'] });

    // tasks:read reads the list; creating a task needs tasks:write, named in the refusal.
    expect((await call(reader, 'GET', '/v1/tasks')).statusCode).toBe(200);
    const write = await newTask(reader);
    expect(write.statusCode).toBe(403);
    expect(write.json().error).toBe('forbidden');
    expect(write.json().message).toContain('tasks:write');
    expect(await h.deps.db.select().from(tasks).where(eq(tasks.workspaceId, team.ws.id))).toEqual([]);

    const listed = await call(team.owner.auth, 'GET', '/v1/me/tokens');
    expect(listed.statusCode).toBe(200);
    const rows = listed
      .json()
      .map((t: { name: string; workspace_id: string; scopes: string[] | null }) => [t.name, t.workspace_id, t.scopes]);
    expect(rows).toContainEqual(['reader', team.ws.id, ['tasks:read']]);
    expect(rows).toContainEqual(['child', team.ws.id, ['tasks:read']]);
    // The account's first token (personal, unscoped) and the team token newTeam made (unscoped).
    expect(rows).toContainEqual([expect.any(String), team.owner.account.id, null]);
    expect(rows).toContainEqual(['', team.ws.id, null]);
    expect(rows).toHaveLength(4);
    expect(listed.body).not.toContain(made.json().token);
  });

  it('a scope never lifts the role: a viewer’s tasks:write token cannot create a task', async () => {
    const team = await newTeam();
    await fund(team.ws.id, 1);
    await connect(team);
    const viewer = await join(team, 'viewer');
    const writer = await tokenFor(viewer.auth, team.ws.id, { scopes: ['tasks:read', 'tasks:write'] });
    const res = await newTask(writer);
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toContain('member role');
    expect((await call(writer, 'GET', '/v1/tasks')).statusCode).toBe(200);
    // Made a member, the same token may.
    await call(team.ownerAuth, 'PATCH', `/v1/workspaces/${team.ws.id}/members/${viewer.account.id}`, {
      role: 'member',
    });
    expect((await newTask(writer)).statusCode).toBe(201);
  });
});
