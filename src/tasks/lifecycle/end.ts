import { type SQL, sql } from 'drizzle-orm';
import { settleCredit } from '../../billing/credits.js';
import type { Within } from '../../db/client.js';
import { tasks } from '../../db/schema.js';
import { storableText } from '../../db/storable.js';
import type { Deps } from '../../deps.js';
import { announceDeliveries, recordEvent } from '../../webhooks/deliveries.js';
import { taskJson } from '../present.js';
import type { Task } from '../task.js';
import { notifyTask } from '../task-logs.js';
import { moveTask } from '../transitions.js';

export type EndStatus = 'done' | 'failed' | 'cancelled';

export interface TaskEnd {
  status: EndStatus;
  /** Why the task did not finish; none for a task that is done. */
  error?: string;
  /** The caller's guard on top of the transition table (e.g. "this worker still owns it"). */
  where?: SQL;
  /** Run last in the transaction that ends it, with the ended row (a kill's audit row); not when it did not end. */
  within?: Within<Task>;
}

/**
 * The one way a task ends: final status, finish time and duration, no worker and no step,
 * its credit settled (captured when done, released otherwise) in the same transaction, then
 * the finished-tasks metric and the notify. Its webhook event (task.done, task.failed,
 * task.cancelled) is recorded in the same transaction and sent after it. The update is guarded, so of two ends racing
 * (a kill and a finish, two gate sweeps) exactly one returns the row; the others change
 * nothing, count nothing and get undefined. settleCredit is guarded too: a credit settles once.
 */
export async function endTask(
  deps: Pick<Deps, 'db' | 'clock' | 'metrics' | 'events' | 'queue' | 'log'>,
  taskId: string,
  end: TaskEnd,
): Promise<Task | undefined> {
  const now = deps.clock.now();
  const result = await deps.db.transaction(async (tx) => {
    const row = await moveTask(
      tx,
      taskId,
      end.status,
      {
        finishedAt: now,
        workerId: null,
        currentStep: null,
        error: end.error === undefined ? null : storableText(end.error),
        // Clamped to the column's int range: a task left for weeks (an old row ended by a sweep) must still end.
        durationMs: sql`least(2147483647, greatest(0, extract(epoch from ${now}::timestamptz - ${tasks.createdAt}) * 1000))::int`,
      },
      end.where,
    );
    if (!row) return undefined;
    await settleCredit(tx, taskId, end.status === 'done' ? 'capture' : 'release', now);
    const deliveries = await recordEvent(tx, now, row.workspaceId, `task.${end.status}`, { task: taskJson(row) });
    await end.within?.(tx, row);
    return { row, deliveries };
  });
  if (!result) return undefined;
  const { row: ended, deliveries } = result;
  await announceDeliveries(deps, deliveries);
  // A task asked for on the code host says how it ended there too (src/triggers/answer.ts).
  if (ended.trigger)
    await deps.queue
      .enqueueTrigger({ answer: taskId })
      .catch((err) => deps.log.warn({ err, task: taskId }, 'answer on the code host not queued'));
  deps.metrics.tasksFinished.inc({ status: end.status, task_type: ended.taskType, mode: ended.mode });
  await notifyTask(deps, taskId);
  return ended;
}
