import { type SQL, and, eq, sql } from 'drizzle-orm';
import { tasks } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import type { Task } from '../task.js';

/** The guard on every write of a run: the task is still running on this worker (not killed, not taken over). */
export const heldBy = (workerId: string): SQL | undefined =>
  and(eq(tasks.status, 'running'), eq(tasks.workerId, workerId));

/** What a run writes to its task as it goes: the stored progress, the step it is on, its totals and a step's patch. */
export interface RunWrite {
  /** The run's progress as stored (the engine's to shape: step-contract's Progress). */
  progress?: unknown;
  currentStep?: string | null;
  /** Added to the task's totals. */
  tokens?: number;
  costUsd?: number;
  retryCount?: number;
  diffSummary?: string;
  prUrl?: string;
}

/**
 * Writes to a running task if `workerId` still holds it, and returns the row as written;
 * undefined when it no longer does (killed, taken over), in which case nothing changed.
 */
export async function saveRun(
  deps: Pick<Deps, 'db'>,
  taskId: string,
  workerId: string,
  write: RunWrite,
): Promise<Task | undefined> {
  const { tokens, costUsd, ...columns } = write;
  const [row] = await deps.db
    .update(tasks)
    .set({
      ...columns,
      ...(tokens !== undefined ? { tokensTotal: sql`${tasks.tokensTotal} + ${tokens}` } : {}),
      ...(costUsd !== undefined ? { costUsd: sql`${tasks.costUsd} + ${costUsd}` } : {}),
    })
    .where(and(eq(tasks.id, taskId), heldBy(workerId)))
    .returning();
  return row;
}
