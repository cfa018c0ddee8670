import { eq } from 'drizzle-orm';
import { workspaceMembers, workspaces } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { newId } from '../ids.js';
import type { Workspace } from './workspaces.js';

/** A team workspace, its creator the owner; free plan, no credits until the operator grants some. */
export async function createWorkspace(
  deps: Pick<Deps, 'db' | 'clock'>,
  ownerId: string,
  name: string,
): Promise<Workspace> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const [workspace] = await tx.insert(workspaces).values({ id: newId(), name, createdAt: now }).returning();
    await tx
      .insert(workspaceMembers)
      .values({ workspaceId: workspace!.id, accountId: ownerId, role: 'owner', createdAt: now });
    return workspace!;
  });
}

export async function renameWorkspace(deps: Pick<Deps, 'db'>, workspaceId: string, name: string): Promise<Workspace> {
  const [workspace] = await deps.db.update(workspaces).set({ name }).where(eq(workspaces.id, workspaceId)).returning();
  return workspace!;
}
