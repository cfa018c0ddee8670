import { and, eq } from 'drizzle-orm';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../db/access-vocabulary.js';
import { accounts, apiTokens, webSessions, workspaceMembers } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { type Actor, roleAtLeast } from './access.js';
import { revokeInvitationsBeyond } from './invitations.js';
import type { Workspace } from './workspaces.js';

/** A member as the workspace's members see them. */
export interface MemberView {
  accountId: string;
  email: string;
  name: string;
  role: WorkspaceRole;
  since: Date;
}

export async function listMembers(deps: Pick<Deps, 'db'>, workspaceId: string): Promise<MemberView[]> {
  const rows = await deps.db
    .select({
      accountId: workspaceMembers.accountId,
      email: accounts.email,
      name: accounts.name,
      role: workspaceMembers.role,
      since: workspaceMembers.createdAt,
    })
    .from(workspaceMembers)
    .innerJoin(accounts, eq(accounts.id, workspaceMembers.accountId))
    .where(eq(workspaceMembers.workspaceId, workspaceId));
  return rows.sort(
    (a, b) =>
      WORKSPACE_ROLES.indexOf(a.role) - WORKSPACE_ROLES.indexOf(b.role) ||
      a.email.localeCompare(b.email) ||
      a.accountId.localeCompare(b.accountId),
  );
}

async function memberOrNotFound(deps: Pick<Deps, 'db'>, workspaceId: string, accountId: string) {
  const [row] = await deps.db
    .select()
    .from(workspaceMembers)
    .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.accountId, accountId)));
  if (!row) throw new AppError('not_found', `no member ${accountId} in this workspace`);
  return row;
}

/**
 * Who may change whom: a maintainer (and the owner) manages every member below the owner,
 * maintainers included (the "members below owner"); nobody changes or removes the owner,
 * whose role moves only by transfer.
 */
function checkManages(actor: Actor, target: WorkspaceRole, to?: WorkspaceRole) {
  if (target === 'owner')
    throw new AppError('forbidden', 'the owner cannot be changed or removed; the owner transfers ownership first');
  if (to === 'owner' && actor.role !== 'owner')
    throw new AppError('forbidden', `a ${actor.role} cannot make an owner; only the owner transfers ownership`);
  if (to === 'owner')
    throw new AppError(
      'bad_request',
      'role: ownership moves by transfer (POST /v1/workspaces/{id}/transfer), not by a role change',
    );
  if (actor.role !== 'owner' && !roleAtLeast(actor.role, 'maintainer'))
    throw new AppError('forbidden', `a ${actor.role} cannot manage members`);
}

/**
 * Changes a member's role (not the owner's, not to owner). The invitations they made that the new
 * role could not make are revoked with it (a maintainer made a member keeps none).
 */
export async function setMemberRole(
  deps: Pick<Deps, 'db' | 'clock'>,
  actor: Actor,
  workspaceId: string,
  accountId: string,
  role: WorkspaceRole,
): Promise<MemberView> {
  const target = await memberOrNotFound(deps, workspaceId, accountId);
  checkManages(actor, target.role, role);
  await deps.db.transaction(async (tx) => {
    await tx
      .update(workspaceMembers)
      .set({ role })
      .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.accountId, accountId)));
    await revokeInvitationsBeyond(tx, workspaceId, accountId, role, deps.clock.now());
  });
  return (await listMembers(deps, workspaceId)).find((m) => m.accountId === accountId)!;
}

/**
 * Takes a member out: their membership, their tokens of this workspace (revoked), the invitations
 * they made and nobody accepted yet (revoked) and the panel sessions switched to it. What they made
 * (tasks, feedback) stays the workspace's.
 */
export async function removeMember(deps: Pick<Deps, 'db' | 'clock'>, workspaceId: string, accountId: string) {
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await tx
      .delete(workspaceMembers)
      .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.accountId, accountId)));
    await revokeInvitationsBeyond(tx, workspaceId, accountId, null, now);
    await tx
      .update(apiTokens)
      .set({ revokedAt: now })
      .where(and(eq(apiTokens.workspaceId, workspaceId), eq(apiTokens.accountId, accountId)));
    await tx
      .update(webSessions)
      .set({ workspaceId: null })
      .where(and(eq(webSessions.workspaceId, workspaceId), eq(webSessions.accountId, accountId)));
  });
}

/** A maintainer (or the owner) removes a member below the owner. */
export async function removeOtherMember(
  deps: Pick<Deps, 'db' | 'clock'>,
  actor: Actor & { accountId: string },
  workspaceId: string,
  accountId: string,
) {
  if (accountId === actor.accountId)
    throw new AppError('bad_request', 'account_id: that is you; leave with POST /v1/workspaces/{id}/leave');
  const target = await memberOrNotFound(deps, workspaceId, accountId);
  checkManages(actor, target.role);
  await removeMember(deps, workspaceId, accountId);
}

/** Leaves a workspace: anyone but its owner (who transfers ownership first, or deletes it). */
export async function leaveWorkspace(deps: Pick<Deps, 'db' | 'clock'>, workspaceId: string, accountId: string) {
  const me = await memberOrNotFound(deps, workspaceId, accountId);
  if (me.role === 'owner')
    throw new AppError(
      'conflict',
      'the owner cannot leave: transfer ownership first (POST /v1/workspaces/{id}/transfer) or delete the workspace',
    );
  await removeMember(deps, workspaceId, accountId);
}

/**
 * Makes another member the owner; the old owner stays, as a maintainer (whose invitations, all at
 * most maintainer since nobody is invited as owner, stay good). A personal workspace keeps its owner.
 */
export async function transferOwnership(
  deps: Pick<Deps, 'db' | 'clock'>,
  workspace: Workspace,
  fromAccountId: string,
  toAccountId: string,
) {
  const workspaceId = workspace.id;
  if (workspace.personalOf) throw new AppError('conflict', 'a personal workspace cannot change owner');
  if (toAccountId === fromAccountId) throw new AppError('bad_request', 'account_id: you already own this workspace');
  await memberOrNotFound(deps, workspaceId, toAccountId);
  await deps.db.transaction(async (tx) => {
    await tx
      .update(workspaceMembers)
      .set({ role: 'maintainer' })
      .where(
        and(
          eq(workspaceMembers.workspaceId, workspaceId),
          eq(workspaceMembers.accountId, fromAccountId),
          eq(workspaceMembers.role, 'owner'),
        ),
      );
    await tx
      .update(workspaceMembers)
      .set({ role: 'owner' })
      .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.accountId, toAccountId)));
    // Exactly one owner, always: said by the database's count, not assumed.
    const owners = await tx
      .select({ id: workspaceMembers.accountId })
      .from(workspaceMembers)
      .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.role, 'owner')));
    if (owners.length !== 1 || owners[0]!.id !== toAccountId)
      throw new AppError('conflict', 'the ownership changed meanwhile; read the members and try again');
    // The old owner is a maintainer now: the same rule as any demotion (today it revokes nothing).
    await revokeInvitationsBeyond(tx, workspaceId, fromAccountId, 'maintainer', deps.clock.now());
  });
  return listMembers(deps, workspaceId);
}
