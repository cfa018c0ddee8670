import { eq } from 'drizzle-orm';
import type { Within } from '../../db/client.js';
import { tasks } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import type { Task } from '../task.js';
import { notifyTask } from '../task-logs.js';
import { type TaskSet, moveTask } from '../transitions.js';
import type { Gate } from './park.js';

/**
 * Resumes a task parked at `gate` with its new progress (the gate approved, perhaps an edited
 * plan): running with no worker, the gate's clock stopped, and, once that has committed, queued
 * so a worker claims it.
 * Undefined when the task is no longer at that gate (approved twice, cancelled, expired).
 */
export async function resumeTask(
  deps: Pick<Deps, 'db' | 'events' | 'queue'>,
  taskId: string,
  gate: Gate,
  progress: TaskSet['progress'],
  /** Run in the transaction that resumes it, with the resumed row (an approval's audit row). */
  within?: Within<Task>,
): Promise<Task | undefined> {
  const resumed = await deps.db.transaction(async (tx) => {
    const row = await moveTask(
      tx,
      taskId,
      'running',
      { progress, gateSince: null, workerId: null },
      eq(tasks.status, gate),
    );
    if (row) await within?.(tx, row);
    return row;
  });
  if (!resumed) return undefined;
  await notifyTask(deps, taskId);
  await deps.queue.enqueue(taskId);
  return resumed;
}
