import { type AnyColumn, type SQL, and, eq, isNull } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import type { WorkspaceRole } from '../db/access-vocabulary.js';
import { workspaceMembers, workspaces } from '../db/schema.js';
import type { Deps } from '../deps.js';

export type Workspace = typeof workspaces.$inferSelect;

/** A workspace as one of its members sees it. */
export interface Membership {
  workspace: Workspace;
  role: WorkspaceRole;
}

/**
 * Makes an account's personal workspace, with the account's id (so that what an account owned
 * before workspaces existed is its personal workspace's, by the same id: migration 0018), and
 * the account as its owner.
 */
export async function createPersonalWorkspace(
  tx: Tx | Db,
  account: { id: string; email: string; name: string },
  input: { plan: string; now: Date },
): Promise<Workspace> {
  const [workspace] = await tx
    .insert(workspaces)
    .values({
      id: account.id,
      name: account.name || account.email,
      personalOf: account.id,
      plan: input.plan,
      createdAt: input.now,
    })
    .returning();
  await tx
    .insert(workspaceMembers)
    .values({ workspaceId: account.id, accountId: account.id, role: 'owner', createdAt: input.now });
  return workspace!;
}

/**
 * The join conditions that read an account's membership of a workspace with the row that names
 * them (a token, a panel session) in the same query: the member row, then its workspace if live.
 * Authentication reads the caller this way, on every request, in one statement.
 */
export const memberJoin = (accountId: AnyColumn, workspaceId: AnyColumn | SQL) =>
  and(eq(workspaceMembers.accountId, accountId), eq(workspaceMembers.workspaceId, workspaceId));
export const liveWorkspaceJoin = and(eq(workspaces.id, workspaceMembers.workspaceId), isNull(workspaces.deletedAt));

/**
 * The workspace's row, locked FOR UPDATE until the transaction ends: every write that counts or
 * spends a workspace's holdings (admission, the task-post rate limit, repository settings and
 * secrets, the operator's plan change) takes this one lock first, so they take turns and in one order.
 */
export async function lockWorkspace(tx: Tx, workspaceId: string): Promise<Workspace | undefined> {
  const [row] = await tx.select().from(workspaces).where(eq(workspaces.id, workspaceId)).for('update');
  return row;
}

/** Live workspaces the account belongs to (one, when `workspaceId` is given). */
function liveMemberships(db: Db | Tx, accountId: string, workspaceId?: string): Promise<Membership[]> {
  return db
    .select({ workspace: workspaces, role: workspaceMembers.role })
    .from(workspaceMembers)
    .innerJoin(workspaces, liveWorkspaceJoin)
    .where(
      and(
        eq(workspaceMembers.accountId, accountId),
        workspaceId === undefined ? undefined : eq(workspaceMembers.workspaceId, workspaceId),
      ),
    );
}

/** The account's role in a live workspace, or undefined when it is not a member (or the workspace is deleted). */
export async function membershipOf(
  db: Db | Tx,
  accountId: string,
  workspaceId: string,
): Promise<Membership | undefined> {
  return (await liveMemberships(db, accountId, workspaceId))[0];
}

/** Every live workspace the account belongs to, its personal one first, then by name. */
export async function membershipsOf(deps: Pick<Deps, 'db'>, accountId: string): Promise<Membership[]> {
  return (await liveMemberships(deps.db, accountId)).sort(
    (a, b) =>
      Number(b.workspace.personalOf === accountId) - Number(a.workspace.personalOf === accountId) ||
      a.workspace.name.localeCompare(b.workspace.name) ||
      a.workspace.id.localeCompare(b.workspace.id),
  );
}
