import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceInvitations, workspaceMembers } from '../../src/db/schema.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

// Issue 42, point 1: an invitation does not outlive its inviter's power to make it. Leaving, being
// removed or being demoted revokes the invitations one made and nobody accepted; acceptance reads
// the inviter's role again; the list says which are no longer valid (`status`).

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

type Auth = Record<string, string>;
type Person = Awaited<ReturnType<typeof newAccount>>;
interface Invitation {
  id: string;
  role: string;
  status: string;
  invited_by: string | null;
  revoked_at: string | null;
  accepted_at: string | null;
}

const call = (auth: Auth, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  h.app.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) });

async function tokenFor(personal: Auth, workspaceId: string): Promise<Auth> {
  const res = await call(personal, 'POST', '/v1/me/tokens', { workspace_id: workspaceId });
  expect(res.statusCode).toBe(201);
  return { authorization: `Bearer ${res.json().token}` };
}

/** A team workspace: its owner, the owner's token there, and a maintainer who joined by invitation. */
async function newTeam() {
  const owner = await newAccount(h, { scm: false });
  const created = await call(owner.auth, 'POST', '/v1/workspaces', { name: 'Inviters' });
  expect(created.statusCode).toBe(201);
  const id: string = created.json().id;
  const ownerAuth = await tokenFor(owner.auth, id);
  const maintainer = await newAccount(h, { scm: false });
  const joined = await accept(maintainer, await invite(ownerAuth, id, 'maintainer'));
  expect(joined.statusCode).toBe(200);
  return { id, owner, ownerAuth, maintainer, maintainerAuth: await tokenFor(maintainer.auth, id) };
}

async function invite(auth: Auth, workspaceId: string, role: string): Promise<Invitation & { token: string }> {
  const res = await call(auth, 'POST', `/v1/workspaces/${workspaceId}/invitations`, { role });
  expect(res.statusCode).toBe(201);
  return res.json();
}

const accept = (who: Person, inv: { token: string }) =>
  call(who.auth, 'POST', '/v1/invitations/accept', { token: inv.token });

async function listed(auth: Auth, workspaceId: string): Promise<Map<string, Invitation>> {
  const res = await call(auth, 'GET', `/v1/workspaces/${workspaceId}/invitations`);
  expect(res.statusCode).toBe(200);
  return new Map(res.json().map((i: Invitation) => [i.id, i]));
}

async function roleOf(workspaceId: string, accountId: string) {
  const [row] = await h.deps.db
    .select({ role: workspaceMembers.role })
    .from(workspaceMembers)
    .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.accountId, accountId)));
  return row?.role ?? null;
}

function expectRefused(res: Awaited<ReturnType<typeof call>>) {
  expect(res.statusCode).toBe(404);
  expect(res.json().error).toBe('not_found');
}

describe('an invitation does not outlive its inviter', () => {
  it('a removed maintainer cannot accept their own invitation: 404, still not a member, listed as revoked', async () => {
    const team = await newTeam();
    const own = await invite(team.maintainerAuth, team.id, 'maintainer');
    expect(own).toMatchObject({ status: 'pending', invited_by: team.maintainer.account.id });

    const removed = await call(
      team.ownerAuth,
      'DELETE',
      `/v1/workspaces/${team.id}/members/${team.maintainer.account.id}`,
    );
    expect(removed.statusCode).toBe(204);
    expect((await call(team.maintainerAuth, 'GET', '/v1/me')).statusCode).toBe(401);

    expectRefused(await accept(team.maintainer, own));
    expect(await roleOf(team.id, team.maintainer.account.id)).toBeNull();
    expect((await call(team.maintainer.auth, 'GET', '/v1/workspaces')).json()).toHaveLength(1);
    const after = (await listed(team.ownerAuth, team.id)).get(own.id);
    expect(after).toMatchObject({
      status: 'revoked',
      revoked_at: h.clock.now().toISOString(),
      accepted_at: null,
      invited_by: team.maintainer.account.id,
    });
  });

  it('a maintainer demoted to member: none of their invitations can be accepted by another account', async () => {
    const team = await newTeam();
    const asMaintainer = await invite(team.maintainerAuth, team.id, 'maintainer');
    const asViewer = await invite(team.maintainerAuth, team.id, 'viewer');
    const ownersOwn = await invite(team.ownerAuth, team.id, 'member');

    h.clock.advance(60_000);
    const demoted = await call(
      team.ownerAuth,
      'PATCH',
      `/v1/workspaces/${team.id}/members/${team.maintainer.account.id}`,
      {
        role: 'member',
      },
    );
    expect(demoted.statusCode).toBe(200);
    expect(demoted.json().role).toBe('member');

    // A member invites nobody, so both are void; revoked when the role changed.
    const list = await listed(team.ownerAuth, team.id);
    for (const inv of [asMaintainer, asViewer])
      expect(list.get(inv.id)).toMatchObject({ status: 'revoked', revoked_at: h.clock.now().toISOString() });
    expect(list.get(ownersOwn.id)).toMatchObject({ status: 'pending', revoked_at: null });

    const stranger = await newAccount(h, { scm: false });
    for (const inv of [asMaintainer, asViewer]) expectRefused(await accept(stranger, inv));
    expect(await roleOf(team.id, stranger.account.id)).toBeNull();
    // The owner's invitation is untouched by someone else's demotion.
    expect((await accept(stranger, ownersOwn)).json()).toMatchObject({ id: team.id, role: 'member' });
    // Promoted again, the old invitations stay revoked: a revocation is not undone.
    await call(team.ownerAuth, 'PATCH', `/v1/workspaces/${team.id}/members/${team.maintainer.account.id}`, {
      role: 'maintainer',
    });
    const late = await newAccount(h, { scm: false });
    expectRefused(await accept(late, asMaintainer));
    expect((await listed(team.ownerAuth, team.id)).get(asMaintainer.id)?.status).toBe('revoked');
  });

  it('a member who leaves: their pending invitations are revoked (an expired one stays expired)', async () => {
    const team = await newTeam();
    const short = (
      await call(team.maintainerAuth, 'POST', `/v1/workspaces/${team.id}/invitations`, {
        role: 'member',
        expires_in_days: 1,
      })
    ).json();
    h.clock.advance(86_400_000);
    const open = await invite(team.maintainerAuth, team.id, 'member');
    expect((await listed(team.ownerAuth, team.id)).get(short.id)?.status).toBe('expired');

    const left = await call(team.maintainerAuth, 'POST', `/v1/workspaces/${team.id}/leave`);
    expect(left.statusCode).toBe(204);

    const list = await listed(team.ownerAuth, team.id);
    expect(list.get(open.id)).toMatchObject({ status: 'revoked', revoked_at: h.clock.now().toISOString() });
    expect(list.get(short.id)).toMatchObject({ status: 'expired', revoked_at: null });
    const stranger = await newAccount(h, { scm: false });
    expectRefused(await accept(stranger, open));
    expect(await roleOf(team.id, stranger.account.id)).toBeNull();
  });

  it('an invitation whose inviter can still make it works: a maintainer’s, and the old owner’s after a transfer', async () => {
    const team = await newTeam();
    const byOwner = await invite(team.ownerAuth, team.id, 'maintainer');
    const byMaintainer = await invite(team.maintainerAuth, team.id, 'maintainer');
    // Someone else leaving touches neither.
    const other = await newAccount(h, { scm: false });
    expect((await accept(other, await invite(team.ownerAuth, team.id, 'viewer'))).statusCode).toBe(200);
    const otherAuth = await tokenFor(other.auth, team.id);
    expect((await call(otherAuth, 'POST', `/v1/workspaces/${team.id}/leave`)).statusCode).toBe(204);
    // The owner hands over to the maintainer and stays a maintainer: maintainer invitations are still theirs to make.
    const moved = await call(team.ownerAuth, 'POST', `/v1/workspaces/${team.id}/transfer`, {
      account_id: team.maintainer.account.id,
    });
    expect(moved.statusCode).toBe(200);

    const list = await listed(team.maintainerAuth, team.id);
    for (const inv of [byOwner, byMaintainer]) expect(list.get(inv.id)).toMatchObject({ status: 'pending' });
    const first = await newAccount(h, { scm: false });
    const second = await newAccount(h, { scm: false });
    expect((await accept(first, byOwner)).json()).toMatchObject({ id: team.id, role: 'maintainer' });
    expect((await accept(second, byMaintainer)).json()).toMatchObject({ id: team.id, role: 'maintainer' });
    const after = await listed(team.maintainerAuth, team.id);
    for (const inv of [byOwner, byMaintainer]) expect(after.get(inv.id)?.status).toBe('accepted');
  });

  it('acceptance reads the inviter again: one left pending by an inviter already gone is refused and then revoked', async () => {
    // Rows as the code before this rule left them: the inviter's membership gone (or the account,
    // invited_by null) with their invitation still open. The list already calls them revoked.
    const team = await newTeam();
    const orphan = await invite(team.maintainerAuth, team.id, 'member');
    const anonymous = await invite(team.ownerAuth, team.id, 'viewer');
    await h.deps.db
      .delete(workspaceMembers)
      .where(
        and(eq(workspaceMembers.workspaceId, team.id), eq(workspaceMembers.accountId, team.maintainer.account.id)),
      );
    await h.deps.db
      .update(workspaceInvitations)
      .set({ invitedBy: null })
      .where(eq(workspaceInvitations.id, anonymous.id));

    const before = await listed(team.ownerAuth, team.id);
    for (const inv of [orphan, anonymous])
      expect(before.get(inv.id)).toMatchObject({ status: 'revoked', revoked_at: null });
    expect(before.get(anonymous.id)?.invited_by).toBeNull();

    h.clock.advance(5_000);
    const stranger = await newAccount(h, { scm: false });
    for (const inv of [orphan, anonymous]) expectRefused(await accept(stranger, inv));
    expect(await roleOf(team.id, stranger.account.id)).toBeNull();
    const after = await listed(team.ownerAuth, team.id);
    for (const inv of [orphan, anonymous])
      expect(after.get(inv.id)).toMatchObject({ status: 'revoked', revoked_at: h.clock.now().toISOString() });
  });

  it('a removal and an acceptance at once: the invitation ends accepted or revoked, never both, and never a 500', async () => {
    for (let round = 0; round < 4; round++) {
      const team = await newTeam();
      const inv = await invite(team.maintainerAuth, team.id, 'member');
      const guest = await newAccount(h, { scm: false });
      const [removed, accepted] = await Promise.all([
        call(team.ownerAuth, 'DELETE', `/v1/workspaces/${team.id}/members/${team.maintainer.account.id}`),
        accept(guest, inv),
      ]);
      expect(removed.statusCode).toBe(204);
      expect([200, 404]).toContain(accepted.statusCode);
      const after = (await listed(team.ownerAuth, team.id)).get(inv.id);
      if (accepted.statusCode === 200) {
        expect(after).toMatchObject({ status: 'accepted', revoked_at: null });
        expect(await roleOf(team.id, guest.account.id)).toBe('member');
      } else {
        expect(after).toMatchObject({ status: 'revoked', accepted_at: null });
        expect(await roleOf(team.id, guest.account.id)).toBeNull();
      }
    }
  });
});
