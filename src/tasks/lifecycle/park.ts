import type { SQL } from 'drizzle-orm';
import type { Deps } from '../../deps.js';
import { notifyTask } from '../task-logs.js';
import { type TaskSet, moveTask } from '../transitions.js';

export type Gate = 'awaiting_plan' | 'awaiting_diff';

/**
 * Parks a running task at an approval gate with its progress: no worker holds it while it
 * waits, and the attempt count (which only counts workers dying) starts again, as this is a
 * clean hand-off. The gate's clock starts now (expireGates). False when `where` no longer holds.
 */
export async function parkTask(
  deps: Pick<Deps, 'db' | 'clock' | 'metrics' | 'events'>,
  taskId: string,
  gate: Gate,
  /** The run's progress as stored (the engine's to shape: step-contract's Progress). */
  progress: TaskSet['progress'],
  where: SQL | undefined,
): Promise<boolean> {
  const moved = await moveTask(
    deps.db,
    taskId,
    gate,
    { progress, workerId: null, attempts: 0, gateSince: deps.clock.now(), currentStep: null },
    where,
  );
  if (!moved) return false;
  deps.metrics.gateWaits.inc({ stage: gate === 'awaiting_plan' ? 'plan' : 'diff' });
  await notifyTask(deps, taskId);
  return true;
}
