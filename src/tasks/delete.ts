import { and, eq, inArray } from 'drizzle-orm';
import { repoMemory, tasks } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { getOwnTask } from './service.js';
import { TERMINAL_STATUSES } from './states.js';

/**
 * Deletes a finished task of the caller's: the row and, by the schema's cascades, its logs, site
 * files, screenshots, feedback and stored idempotent answers; what the service learnt from it for
 * later runs (repo_memory rows naming it: lessons, the worked example holding its diff) goes too.
 * Credit-ledger rows stay: they are the account's accounting, and name the task only by id. A
 * task still queued, running or waiting at a gate is a conflict: kill it first. Children made by
 * continue keep their parent_id, which then answers 404 like any deleted task.
 */
export async function deleteTask(deps: Pick<Deps, 'db'>, workspaceId: string, taskId: string): Promise<void> {
  const task = await getOwnTask(deps, workspaceId, taskId);
  if (!TERMINAL_STATUSES.some((s) => s === task.status)) {
    throw new AppError(
      'conflict',
      `task ${taskId} is ${task.status}: only a finished task can be deleted (kill it first)`,
    );
  }
  const deleted = await deps.db.transaction(async (tx) => {
    await tx.delete(repoMemory).where(and(eq(repoMemory.workspaceId, workspaceId), eq(repoMemory.taskId, taskId)));
    // The status is named again: a task cannot leave a terminal state, but the row may already be gone.
    return tx
      .delete(tasks)
      .where(
        and(eq(tasks.id, taskId), eq(tasks.workspaceId, workspaceId), inArray(tasks.status, [...TERMINAL_STATUSES])),
      )
      .returning({ id: tasks.id });
  });
  if (deleted.length === 0) throw new AppError('not_found', `no task ${taskId}`);
}
