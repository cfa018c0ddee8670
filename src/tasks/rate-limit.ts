import { and, asc, eq, gt, lt } from 'drizzle-orm';
import { taskPostAttempts } from '../db/schema.js';
import { lockWorkspace } from '../workspaces/workspaces.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';

export const TASK_POSTS_PER_WINDOW = 20;
export const TASK_POST_WINDOW_MS = 60_000;

/**
 * Sliding-window limit on task creation, counted in the database so it is exact under
 * parallel requests and shared by every API node: the workspace row is locked for the count and
 * the insert (lockWorkspace, as admission does: a lock of the account row here deadlocked with a
 * task's insert, whose created_by holds a key-share lock on it). Every POST counts except the ones
 * this answers with rate_limited.
 */
export async function countTaskPost(deps: Pick<Deps, 'db' | 'clock'>, workspaceId: string): Promise<void> {
  const now = deps.clock.now();
  const windowStart = new Date(now.getTime() - TASK_POST_WINDOW_MS);
  await deps.db.transaction(async (tx) => {
    await lockWorkspace(tx, workspaceId);
    const inWindow = await tx
      .select({ at: taskPostAttempts.at })
      .from(taskPostAttempts)
      .where(and(eq(taskPostAttempts.workspaceId, workspaceId), gt(taskPostAttempts.at, windowStart)))
      .orderBy(asc(taskPostAttempts.at))
      .limit(TASK_POSTS_PER_WINDOW);
    if (inWindow.length >= TASK_POSTS_PER_WINDOW) {
      // The oldest attempt in the window leaves it first; that is when a slot frees.
      const freesAt = inWindow[0]!.at.getTime() + TASK_POST_WINDOW_MS;
      const retryAfter = Math.max(1, Math.ceil((freesAt - now.getTime()) / 1000));
      throw new AppError(
        'rate_limited',
        `at most ${TASK_POSTS_PER_WINDOW} task creations per minute; retry in ${retryAfter} s`,
        retryAfter,
      );
    }
    await tx.insert(taskPostAttempts).values({ workspaceId, at: now });
    // Keep the table small: attempts older than the window no longer matter.
    await tx
      .delete(taskPostAttempts)
      .where(and(eq(taskPostAttempts.workspaceId, workspaceId), lt(taskPostAttempts.at, windowStart)));
  });
}
