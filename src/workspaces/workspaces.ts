import { and, eq, isNull } from 'drizzle-orm';
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
  const [ws] = await tx
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
  return ws!;
}

/** The account's role in a live workspace, or undefined when it is not a member (or the workspace is deleted). */
export async function membershipOf(
  db: Pick<Deps, 'db'>['db'] | Tx,
  accountId: string,
  workspaceId: string,
): Promise<Membership | undefined> {
  const rows = await db
    .select({ workspace: workspaces, role: workspaceMembers.role })
    .from(workspaceMembers)
    .innerJoin(workspaces, eq(workspaces.id, workspaceMembers.workspaceId))
    .where(
      and(
        eq(workspaceMembers.accountId, accountId),
        eq(workspaceMembers.workspaceId, workspaceId),
        isNull(workspaces.deletedAt),
      ),
    )
    .limit(1);
  return rows[0];
}

/** Every live workspace the account belongs to, its personal one first, then by name. */
export async function membershipsOf(deps: Pick<Deps, 'db'>, accountId: string): Promise<Membership[]> {
  const rows = await deps.db
    .select({ workspace: workspaces, role: workspaceMembers.role })
    .from(workspaceMembers)
    .innerJoin(workspaces, eq(workspaces.id, workspaceMembers.workspaceId))
    .where(and(eq(workspaceMembers.accountId, accountId), isNull(workspaces.deletedAt)));
  return rows.sort(
    (a, b) =>
      Number(b.workspace.personalOf === accountId) - Number(a.workspace.personalOf === accountId) ||
      a.workspace.name.localeCompare(b.workspace.name) ||
      a.workspace.id.localeCompare(b.workspace.id),
  );
}
