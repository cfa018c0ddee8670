import type { SQL } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import { notifyTask } from '../task-logs.js';
import { announceDeliveries, recordEvent } from '../../webhooks/deliveries.js';
import { taskJson } from '../present.js';
import { type TaskSet, moveTask } from '../transitions.js';

export type Gate = 'awaiting_plan' | 'awaiting_diff';

/**
 * Parks a running task at an approval gate with its progress: no worker holds it while it
 * waits (its task.awaiting_approval webhook event recorded with the move), and the attempt count (which only counts workers dying) starts again, as this is a
 * clean hand-off. The gate's clock starts now (expireGates). False when `where` no longer holds.
 */
export async function parkTask(
  deps: Pick<Deps, 'db' | 'clock' | 'metrics' | 'events' | 'queue' | 'log'>,
  taskId: string,
  gate: Gate,
  /** The run's progress as stored (the engine's to shape: step-contract's Progress). */
  progress: TaskSet['progress'],
  where: SQL | undefined,
): Promise<boolean> {
  const now = deps.clock.now();
  const moved = await deps.db.transaction(async (tx) => {
    const row = await moveTask(
      tx,
      taskId,
      gate,
      { progress, workerId: null, attempts: 0, gateSince: now, currentStep: null },
      where,
    );
    if (!row) return undefined;
    const stage = gate === 'awaiting_plan' ? 'plan' : 'diff';
    return recordEvent(tx, now, row.workspaceId, 'task.awaiting_approval', { task: taskJson(row), stage });
  });
  if (!moved) return false;
  await announceDeliveries(deps, moved);
  deps.metrics.gateWaits.inc({ stage: gate === 'awaiting_plan' ? 'plan' : 'diff' });
  await notifyTask(deps, taskId);
  return true;
}
