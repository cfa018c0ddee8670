import {
  AuthenticationError,
  ConflictError,
  type EmendClient,
  ForbiddenError,
  NotFoundError,
  createClient,
} from '@emend/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertTasks, taskRow } from '../feedback/seed.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

// @emend/client's workspace calls against the service on a real port: a team made, shared by
// invitation, its roles and token scopes enforced, handed over, left and deleted.
let h: Harness;
let baseUrl: string;

beforeAll(async () => {
  h = await startHarness();
  baseUrl = await h.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => h?.close());

const client = (token: string): EmendClient => createClient({ baseUrl, token, retries: 0 });

/** The error a call rejects with (the test fails if it resolves). */
async function refusal(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (value) => {
      throw new Error(`expected a refusal, got ${JSON.stringify(value)}`);
    },
    (err: unknown) => err,
  );
}

describe('@emend/client: workspaces, members, invitations and scoped tokens', { timeout: 60_000 }, () => {
  it('creates a team, invites, changes roles, narrows tokens, transfers, leaves and deletes it', async () => {
    const alice = await newAccount(h, { scm: false });
    const bob = await newAccount(h, { scm: false });
    const personal = client(alice.token);

    // A new account has its personal workspace, with the account's own id.
    expect(await personal.listWorkspaces()).toEqual([
      expect.objectContaining({ id: alice.account.id, personal: true, role: 'owner' }),
    ]);
    const team = await personal.createWorkspace('Platform team');
    expect(team).toMatchObject({ name: 'Platform team', personal: false, role: 'owner', plan: 'free', credits: 0 });
    expect((await personal.listWorkspaces()).map((w) => w.id)).toEqual([alice.account.id, team.id]);

    // The personal token acts in the personal workspace only: the team is not found through it.
    expect(await refusal(personal.getWorkspace(team.id))).toBeInstanceOf(NotFoundError);
    const teamToken = await personal.createToken({ name: 'team', workspace_id: team.id });
    expect(teamToken).toMatchObject({ name: 'team', workspace_id: team.id, scopes: null });
    const aliceTeam = client(teamToken.token);
    expect(await aliceTeam.getWorkspace(team.id)).toMatchObject({ id: team.id, role: 'owner' });
    expect(await aliceTeam.renameWorkspace(team.id, 'Platform')).toMatchObject({ id: team.id, name: 'Platform' });
    const me = await aliceTeam.GET('/v1/me');
    expect(me.workspace).toEqual({ id: team.id, name: 'Platform', personal: false });
    expect(me.role).toBe('owner');

    // An invitation: its secret and link once; accepted once by another account.
    const invitation = await aliceTeam.createInvitation(team.id, { role: 'member', email: bob.account.email });
    expect(invitation).toMatchObject({ role: 'member', email: bob.account.email, accepted_at: null });
    expect(invitation.url).toContain(`/app/#/invitation/${invitation.token}`);
    const bobPersonal = client(bob.token);
    expect(await bobPersonal.acceptInvitation(invitation.token)).toMatchObject({
      id: team.id,
      name: 'Platform',
      role: 'member',
    });
    expect(await refusal(bobPersonal.acceptInvitation(invitation.token))).toBeInstanceOf(NotFoundError);
    expect(
      (await aliceTeam.listMembers(team.id)).map((m) => [m.account_id, m.role]),
      'owner first',
    ).toEqual([
      [alice.account.id, 'owner'],
      [bob.account.id, 'member'],
    ]);

    // Bob's token for the team, narrowed to reading tasks: it reads, it may not invite.
    const bobRead = await bobPersonal.createToken({ workspace_id: team.id, scopes: ['tasks:read'] });
    expect(bobRead.scopes).toEqual(['tasks:read']);
    const bobTeam = client(bobRead.token);
    expect((await bobTeam.listMembers(team.id)).length).toBe(2);
    const asMember = await refusal(bobTeam.createInvitation(team.id, { role: 'viewer' }));
    expect(asMember).toBeInstanceOf(ForbiddenError);
    expect((asMember as ForbiddenError).message).toMatch(/maintainer role/);
    // As a maintainer his role would allow it; the token's scope still does not.
    expect(await aliceTeam.setMemberRole(team.id, bob.account.id, 'maintainer')).toMatchObject({
      account_id: bob.account.id,
      role: 'maintainer',
    });
    const narrowed = await refusal(bobTeam.createInvitation(team.id, { role: 'viewer' }));
    expect(narrowed).toBeInstanceOf(ForbiddenError);
    expect((narrowed as ForbiddenError).message).toMatch(/lacks the members scope/);
    // A scoped token cannot mint a wider one.
    expect(await refusal(bobTeam.createToken({ workspace_id: team.id, scopes: ['members'] }))).toBeInstanceOf(
      ForbiddenError,
    );

    // The workspace's tasks, and one person's.
    await insertTasks(h.deps.db, [
      taskRow(team.id, 1, { createdBy: alice.account.id }),
      taskRow(team.id, 2, { createdBy: bob.account.id }),
      taskRow(team.id, 3, { createdBy: alice.account.id }),
    ]);
    expect((await bobTeam.listTasks()).length).toBe(3);
    const bobs = await aliceTeam.listTasks({ created_by: bob.account.id });
    expect(bobs.map((t) => t.prompt)).toEqual(['Fix the off-by-one error in handler 2']);
    expect(await personal.listTasks({ limit: 5 })).toEqual([]);

    // Invitations listed newest first without secrets; one revoked is no longer accepted.
    h.clock.advance(1000);
    const second = await aliceTeam.createInvitation(team.id, { role: 'viewer', expires_in_days: 1 });
    const revoked = await aliceTeam.revokeInvitation(team.id, second.id);
    expect(revoked.revoked_at).not.toBeNull();
    const listed = await aliceTeam.listInvitations(team.id);
    expect(listed.map((i) => i.id)).toEqual([second.id, invitation.id]);
    expect(JSON.stringify(listed)).not.toContain(invitation.token);
    const carol = await newAccount(h, { scm: false });
    expect(await refusal(client(carol.token).acceptInvitation(second.token))).toBeInstanceOf(NotFoundError);

    // Ownership moves to Bob; Alice stays a maintainer and can no longer export or delete.
    const after = await aliceTeam.transferWorkspace(team.id, bob.account.id);
    expect(after.map((m) => [m.account_id, m.role])).toEqual([
      [bob.account.id, 'owner'],
      [alice.account.id, 'maintainer'],
    ]);
    expect(await refusal(aliceTeam.exportWorkspace(team.id))).toBeInstanceOf(ForbiddenError);
    const bobOwner = client((await bobPersonal.createToken({ workspace_id: team.id })).token);
    const exported = await bobOwner.exportWorkspace(team.id);
    expect(exported).toMatchObject({ workspace: { id: team.id, name: 'Platform' } });
    expect((exported as { tasks: unknown[] }).tasks.length).toBe(3);

    // Carol joins as a viewer and is removed; Alice leaves: their team tokens stop working.
    const forCarol = await bobOwner.createInvitation(team.id, { role: 'viewer' });
    await client(carol.token).acceptInvitation(forCarol.token);
    const carolTeam = client((await client(carol.token).createToken({ workspace_id: team.id })).token);
    expect(await carolTeam.getWorkspace(team.id)).toMatchObject({ role: 'viewer' });
    expect((await carolTeam.listTasks()).length).toBe(3);
    expect(await refusal(carolTeam.listInvitations(team.id))).toBeInstanceOf(ForbiddenError);
    expect(await bobOwner.removeMember(team.id, carol.account.id)).toBeUndefined();
    expect(await refusal(carolTeam.getWorkspace(team.id))).toBeInstanceOf(AuthenticationError);
    expect(await aliceTeam.leaveWorkspace(team.id)).toBeUndefined();
    expect(await refusal(aliceTeam.getWorkspace(team.id))).toBeInstanceOf(AuthenticationError);
    expect((await bobOwner.listMembers(team.id)).map((m) => m.account_id)).toEqual([bob.account.id]);

    // A personal workspace is deleted only with its account; the team is deleted by its owner.
    expect(await refusal(personal.deleteWorkspace(alice.account.id))).toBeInstanceOf(ConflictError);
    expect(await bobOwner.deleteWorkspace(team.id)).toBeUndefined();
    expect((await bobPersonal.listWorkspaces()).map((w) => w.id)).toEqual([bob.account.id]);
    expect((await personal.listWorkspaces()).map((w) => w.id)).toEqual([alice.account.id]);
  });

  it('reads and sets the spend limits; a member is refused setting them', async () => {
    const owner = await newAccount(h, { scm: false });
    const api = client(owner.token);
    const id = owner.workspace.id;
    expect(await api.getSpendLimits(id)).toMatchObject({ monthly_spend_cap_usd: null, spent_usd: 0, notices: [] });
    const set = await api.setSpendLimits(id, {
      monthly_spend_cap_usd: 40,
      members: [{ account_id: owner.account.id, monthly_credit_cap: 2 }],
    });
    expect(set).toMatchObject({ monthly_spend_cap_usd: 40, monthly_credit_cap: null });
    expect(set.members[0]).toMatchObject({ account_id: owner.account.id, monthly_credit_cap: 2 });
    expect(await refusal(api.setSpendLimits(id, { monthly_credit_cap: -1 }))).toMatchObject({ status: 400 });
  });
});
