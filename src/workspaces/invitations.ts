import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, gt, isNull, notInArray } from 'drizzle-orm';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../db/access-vocabulary.js';
import type { Tx } from '../db/client.js';
import { workspaceInvitations, workspaceMembers, workspaces } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { ACTS, type Actor, roleAtLeast } from './access.js';
import type { Workspace } from './workspaces.js';

/**
 * Invitations: a one-time secret (`inv_…`, its SHA-256 stored) that whoever holds it may accept
 * once, signed in to an account, before it expires. The inviter picks the role (below owner; a
 * maintainer at most its own level). An invitation lasts only while its inviter could still make
 * it (docs/decisions.md, "An invitation does not outlive its inviter's power").
 */
export type Invitation = typeof workspaceInvitations.$inferSelect;

/** Where an invitation stands, as its list shows it. */
export const INVITATION_STATUSES = ['pending', 'accepted', 'revoked', 'expired'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];
export type InvitationView = Invitation & { status: InvitationStatus };

export const INVITATION_DAYS = { default: 7, max: 30 } as const;
const hash = (secret: string) => createHash('sha256').update(secret).digest('hex');
const SHAPE = /^inv_[A-Za-z0-9_-]{32}$/;

/**
 * Whether an inviter whose role in the workspace is now `inviterRole` could still make an
 * invitation of `role`: the role that invites at all (ACTS.members) and at least the invitation's.
 * null: no longer a member, or the account is gone (invited_by set null), and nobody vouches for it.
 */
export function inviterMayGrant(inviterRole: WorkspaceRole | null, role: WorkspaceRole): boolean {
  return inviterRole !== null && roleAtLeast(inviterRole, ACTS.members.role) && roleAtLeast(inviterRole, role);
}

/**
 * Where an invitation stands. A pending one whose inviter can no longer make it (`inviterRole` as
 * inviterMayGrant reads it) is revoked even before its revoked_at is written: one made before the
 * rule was enforced, or while its inviter was being removed, until someone tries it.
 */
export function invitationStatus(i: Invitation, inviterRole: WorkspaceRole | null, now: Date): InvitationStatus {
  if (i.acceptedAt) return 'accepted';
  if (i.revokedAt) return 'revoked';
  if (i.expiresAt <= now) return 'expired';
  return inviterMayGrant(inviterRole, i.role) ? 'pending' : 'revoked';
}

/**
 * Revokes, in the caller's transaction, the pending invitations `accountId` made in the workspace
 * that its role now (`role`; null: it left or was removed) no longer lets it make. Callers change
 * the member row first, then call this: acceptance takes the same two locks in the same order.
 */
export async function revokeInvitationsBeyond(
  tx: Tx,
  workspaceId: string,
  accountId: string,
  role: WorkspaceRole | null,
  now: Date,
): Promise<void> {
  const kept = WORKSPACE_ROLES.filter((r) => inviterMayGrant(role, r));
  await tx
    .update(workspaceInvitations)
    .set({ revokedAt: now })
    .where(
      and(
        eq(workspaceInvitations.workspaceId, workspaceId),
        eq(workspaceInvitations.invitedBy, accountId),
        isNull(workspaceInvitations.acceptedAt),
        isNull(workspaceInvitations.revokedAt),
        // An expired one stays expired: the record says what happened to it first.
        gt(workspaceInvitations.expiresAt, now),
        kept.length ? notInArray(workspaceInvitations.role, kept) : undefined,
      ),
    );
}

export async function createInvitation(
  deps: Pick<Deps, 'db' | 'clock'>,
  actor: Actor & { accountId: string },
  workspace: Workspace,
  input: { role: WorkspaceRole; email?: string; expiresInDays?: number },
): Promise<{ invitation: InvitationView; secret: string }> {
  // Above one's own role is forbidden (a maintainer asking for an owner too); the owner is told how ownership moves.
  if (!roleAtLeast(actor.role, input.role))
    throw new AppError('forbidden', `a ${actor.role} cannot invite a ${input.role}`);
  if (input.role === 'owner')
    throw new AppError('bad_request', 'role: nobody is invited as owner; ownership moves by transfer');
  if (workspace.personalOf)
    throw new AppError('conflict', 'a personal workspace has one member; create a workspace to share');
  const now = deps.clock.now();
  const secret = `inv_${randomBytes(24).toString('base64url')}`;
  const [invitation] = await deps.db
    .insert(workspaceInvitations)
    .values({
      id: newId(),
      workspaceId: workspace.id,
      role: input.role,
      email: input.email?.trim().toLowerCase() ?? null,
      tokenHash: hash(secret),
      invitedBy: actor.accountId,
      expiresAt: new Date(now.getTime() + (input.expiresInDays ?? INVITATION_DAYS.default) * 86_400_000),
      createdAt: now,
    })
    .returning();
  return { invitation: { ...invitation!, status: 'pending' }, secret };
}

/**
 * The workspace's invitations, newest first (accepted, revoked and expired ones included, for the
 * record), each with its status, read beside its inviter's current role.
 */
export async function listInvitations(
  deps: Pick<Deps, 'db' | 'clock'>,
  workspaceId: string,
): Promise<InvitationView[]> {
  const now = deps.clock.now();
  const rows = await deps.db
    .select({ invitation: workspaceInvitations, inviterRole: workspaceMembers.role })
    .from(workspaceInvitations)
    .leftJoin(
      workspaceMembers,
      and(
        eq(workspaceMembers.workspaceId, workspaceInvitations.workspaceId),
        eq(workspaceMembers.accountId, workspaceInvitations.invitedBy),
      ),
    )
    .where(eq(workspaceInvitations.workspaceId, workspaceId))
    .orderBy(desc(workspaceInvitations.createdAt), desc(workspaceInvitations.id))
    .limit(500);
  return rows.map((r) => ({ ...r.invitation, status: invitationStatus(r.invitation, r.inviterRole, now) }));
}

export async function revokeInvitation(
  deps: Pick<Deps, 'db' | 'clock'>,
  workspaceId: string,
  id: string,
): Promise<InvitationView> {
  const [row] = await deps.db
    .update(workspaceInvitations)
    .set({ revokedAt: deps.clock.now() })
    .where(
      and(
        eq(workspaceInvitations.id, id),
        eq(workspaceInvitations.workspaceId, workspaceId),
        isNull(workspaceInvitations.acceptedAt),
        isNull(workspaceInvitations.revokedAt),
      ),
    )
    .returning();
  if (row) return { ...row, status: 'revoked' };
  const [existing] = await deps.db
    .select()
    .from(workspaceInvitations)
    .where(and(eq(workspaceInvitations.id, id), eq(workspaceInvitations.workspaceId, workspaceId)));
  if (!existing) throw new AppError('not_found', `no invitation ${id}`);
  // Not updated: accepted or revoked already, which is all its status reads.
  return { ...existing, status: invitationStatus(existing, null, deps.clock.now()) };
}

/**
 * Accepts an invitation for `accountId`: taken once (a second acceptance, a revoked or expired
 * one is refused), the account joins with the invitation's role. Already a member: the
 * invitation is spent and the role kept. Its inviter must still be able to make it (a member
 * with a role that invites, at least the invitation's), read under a lock: an invitation
 * that fails this is revoked on the spot and refused like any revoked one. This re-check backs
 * up the revocation that removal, leaving and demotion do (revokeInvitationsBeyond) for
 * invitations made before that rule, or while their inviter was being removed.
 */
export async function acceptInvitation(
  deps: Pick<Deps, 'db' | 'clock'>,
  accountId: string,
  secret: string,
  /** Work the caller adds to the transaction that joins (its audit record); not run when refused. */
  within?: (tx: Tx, joined: { workspace: Workspace; role: WorkspaceRole }) => Promise<void>,
) {
  const gone = () => new AppError('not_found', 'token: no such invitation, or it was used, revoked or has expired');
  if (!SHAPE.test(secret)) throw gone();
  const now = deps.clock.now();
  const open = and(
    eq(workspaceInvitations.tokenHash, hash(secret)),
    isNull(workspaceInvitations.acceptedAt),
    isNull(workspaceInvitations.revokedAt),
    gt(workspaceInvitations.expiresAt, now),
  );
  const joined = await deps.db.transaction(async (tx) => {
    const [seen] = await tx.select().from(workspaceInvitations).where(open);
    if (!seen) return null;
    // The inviter's member row first, then the invitation: the order in which removal, leaving,
    // a role change and a workspace's deletion lock them, so none of them waits on this in a cycle.
    // A removal or demotion under way finishes first, and what it left is what is read here.
    const [inviter] = seen.invitedBy
      ? await tx
          .select({ role: workspaceMembers.role })
          .from(workspaceMembers)
          .where(
            and(eq(workspaceMembers.workspaceId, seen.workspaceId), eq(workspaceMembers.accountId, seen.invitedBy)),
          )
          .for('share')
      : [];
    const [inv] = await tx
      .select()
      .from(workspaceInvitations)
      .where(and(eq(workspaceInvitations.id, seen.id), open))
      .for('update');
    if (!inv || inv.invitedBy !== seen.invitedBy) return null;
    const [workspace] = await tx.select().from(workspaces).where(eq(workspaces.id, inv.workspaceId));
    if (!workspace || workspace.deletedAt) return null;
    if (!inviterMayGrant(inviter?.role ?? null, inv.role)) {
      await tx.update(workspaceInvitations).set({ revokedAt: now }).where(eq(workspaceInvitations.id, inv.id));
      return null;
    }
    await tx
      .update(workspaceInvitations)
      .set({ acceptedAt: now, acceptedBy: accountId })
      .where(eq(workspaceInvitations.id, inv.id));
    await tx
      .insert(workspaceMembers)
      .values({ workspaceId: inv.workspaceId, accountId, role: inv.role, createdAt: now })
      .onConflictDoNothing();
    const [member] = await tx
      .select()
      .from(workspaceMembers)
      .where(and(eq(workspaceMembers.workspaceId, inv.workspaceId), eq(workspaceMembers.accountId, accountId)));
    const done = { workspace, role: member!.role };
    await within?.(tx, done);
    return done;
  });
  if (!joined) throw gone();
  return joined;
}
