import { and, eq, notInArray, sql } from 'drizzle-orm';
import type { Db, Tx, Within } from '../../db/client.js';
import { tasks, workspaces } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { TERMINAL_STATUSES } from '../../tasks/states.js';
import { triggersLeaving } from '../../triggers/repo-triggers.js';
import { groupBotsLeaving } from '../../workspaces/group-bots.js';
import { type Workspace, lockWorkspace } from '../../workspaces/workspaces.js';
import { WORKSPACE_TABLES } from './workspace-tables.js';

// A use case over several domain rooms (tasks, triggers, every table a workspace holds), so it
// sits above them in the http layer rather than in workspaces/, which they build on.

/**
 * Deletes a team workspace as DELETE of a task deletes a task: every table that holds its rows
 * does what WORKSPACE_TABLES says (its tasks with their logs, files and feedback, members,
 * invitations, tokens, keys, connections, repository settings and secrets, memory, webhooks and
 * triggers go; panel sessions switched to it go back to their token's); the workspace row stays,
 * marked deleted, with its credit ledger (the accounting). A task still queued, running or at a
 * gate is a conflict: kill it first. A personal workspace goes only with its account.
 */
export async function deleteWorkspace(
  deps: Pick<Deps, 'db' | 'clock' | 'config' | 'fetch' | 'secretKey' | 'log'>,
  workspace: Workspace,
  /** Run last in the deletion's transaction (its audit row). */
  within?: Within,
): Promise<void> {
  if (workspace.personalOf)
    throw new AppError('conflict', 'a personal workspace is deleted with its account, not on its own');
  await refuseActiveTask(deps.db, workspace.id);
  // The code host's webhooks go with the triggers and bots the deletion removes: the clients that
  // remove them are made now, while the connections and tokens are stored, and used once the
  // deletion has committed, so no transaction waits on a host and a refused deletion removes none.
  const triggers = await triggersLeaving(deps, workspace.id);
  const bots = await groupBotsLeaving(deps, workspace.id);
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    // Admission takes this lock too: no task starts between the check and the deletion.
    await lockWorkspace(tx, workspace.id);
    await refuseActiveTask(tx, workspace.id);
    await tx.update(workspaces).set({ deletedAt: now }).where(eq(workspaces.id, workspace.id));
    for (const { table, onDelete } of Object.values(WORKSPACE_TABLES)) {
      if (onDelete === 'delete') await tx.delete(table).where(eq(table.workspaceId, workspace.id));
      // Drizzle's typed update takes one known table; this is any table the record unlinks.
      else if ('unlink' in onDelete)
        await tx.execute(
          sql`update ${table} set ${sql.identifier(table.workspaceId.name)} = null where ${eq(table.workspaceId, workspace.id)}`,
        );
    }
    await within?.(tx);
  });
  await triggers.removeHooks();
  await bots.removeHooks();
}

async function refuseActiveTask(db: Db | Tx, workspaceId: string) {
  const active = await db
    .select({ id: tasks.id, status: tasks.status })
    .from(tasks)
    .where(and(eq(tasks.workspaceId, workspaceId), notInArray(tasks.status, [...TERMINAL_STATUSES])))
    .limit(1);
  if (active[0])
    throw new AppError(
      'conflict',
      `task ${active[0].id} is ${active[0].status}: only a workspace whose tasks have all finished can be deleted (kill it first)`,
    );
}
