import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, gt, isNull } from 'drizzle-orm';
import type { WorkspaceRole } from '../db/access-vocabulary.js';
import { workspaceInvitations, workspaceMembers, workspaces } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { type Actor, roleAtLeast } from './access.js';
import type { Workspace } from './workspaces.js';

/**
 * Invitations: a one-time secret (`inv_…`, its SHA-256 stored) that whoever holds it may accept
 * once, signed in to an account, before it expires. The inviter picks the role (below owner; a
 * maintainer at most its own level).
 */
export type Invitation = typeof workspaceInvitations.$inferSelect;

export const INVITATION_DAYS = { default: 7, max: 30 } as const;
const hash = (secret: string) => createHash('sha256').update(secret).digest('hex');
const SHAPE = /^inv_[A-Za-z0-9_-]{32}$/;

export async function createInvitation(
  deps: Pick<Deps, 'db' | 'clock'>,
  actor: Actor & { accountId: string },
  ws: Workspace,
  input: { role: WorkspaceRole; email?: string; expiresInDays?: number },
): Promise<{ invitation: Invitation; secret: string }> {
  // Above one's own role is forbidden (a maintainer asking for an owner too); the owner is told how ownership moves.
  if (!roleAtLeast(actor.role, input.role))
    throw new AppError('forbidden', `a ${actor.role} cannot invite a ${input.role}`);
  if (input.role === 'owner')
    throw new AppError('bad_request', 'role: nobody is invited as owner; ownership moves by transfer');
  if (ws.personalOf) throw new AppError('conflict', 'a personal workspace has one member; create a workspace to share');
  const now = deps.clock.now();
  const secret = `inv_${randomBytes(24).toString('base64url')}`;
  const [invitation] = await deps.db
    .insert(workspaceInvitations)
    .values({
      id: newId(),
      workspaceId: ws.id,
      role: input.role,
      email: input.email?.trim().toLowerCase() ?? null,
      tokenHash: hash(secret),
      invitedBy: actor.accountId,
      expiresAt: new Date(now.getTime() + (input.expiresInDays ?? INVITATION_DAYS.default) * 86_400_000),
      createdAt: now,
    })
    .returning();
  return { invitation: invitation!, secret };
}

/** The workspace's invitations, newest first (accepted, revoked and expired ones included, for the record). */
export async function listInvitations(deps: Pick<Deps, 'db'>, workspaceId: string): Promise<Invitation[]> {
  return deps.db
    .select()
    .from(workspaceInvitations)
    .where(eq(workspaceInvitations.workspaceId, workspaceId))
    .orderBy(desc(workspaceInvitations.createdAt), desc(workspaceInvitations.id))
    .limit(500);
}

export async function revokeInvitation(deps: Pick<Deps, 'db' | 'clock'>, workspaceId: string, id: string) {
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
  if (row) return row;
  const [existing] = await deps.db
    .select()
    .from(workspaceInvitations)
    .where(and(eq(workspaceInvitations.id, id), eq(workspaceInvitations.workspaceId, workspaceId)));
  if (!existing) throw new AppError('not_found', `no invitation ${id}`);
  return existing;
}

/**
 * Accepts an invitation for `accountId`: taken once (a second acceptance, a revoked or expired
 * one is refused), the account joins with the invitation's role. Already a member: the
 * invitation is spent and the role kept.
 */
export async function acceptInvitation(deps: Pick<Deps, 'db' | 'clock'>, accountId: string, secret: string) {
  const gone = () => new AppError('not_found', 'token: no such invitation, or it was used, revoked or has expired');
  if (!SHAPE.test(secret)) throw gone();
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const [inv] = await tx
      .update(workspaceInvitations)
      .set({ acceptedAt: now, acceptedBy: accountId })
      .where(
        and(
          eq(workspaceInvitations.tokenHash, hash(secret)),
          isNull(workspaceInvitations.acceptedAt),
          isNull(workspaceInvitations.revokedAt),
          gt(workspaceInvitations.expiresAt, now),
        ),
      )
      .returning();
    if (!inv) throw gone();
    const [ws] = await tx.select().from(workspaces).where(eq(workspaces.id, inv.workspaceId));
    if (!ws || ws.deletedAt) throw gone();
    await tx
      .insert(workspaceMembers)
      .values({ workspaceId: inv.workspaceId, accountId, role: inv.role, createdAt: now })
      .onConflictDoNothing();
    const [member] = await tx
      .select()
      .from(workspaceMembers)
      .where(and(eq(workspaceMembers.workspaceId, inv.workspaceId), eq(workspaceMembers.accountId, accountId)));
    return { workspace: ws, role: member!.role };
  });
}
