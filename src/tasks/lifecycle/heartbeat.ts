import { and, eq, inArray } from 'drizzle-orm';
import { tasks } from '../../db/schema.js';
import type { Deps } from '../../deps.js';

/**
 * Writes the heartbeat of the tasks `workerId` runs and returns those still its own: a task
 * killed, ended or taken over elsewhere is missing from the answer, and its run should stop.
 */
export async function beat(
  deps: Pick<Deps, 'db' | 'clock'>,
  workerId: string,
  taskIds: string[],
): Promise<Set<string>> {
  const alive = await deps.db
    .update(tasks)
    .set({ heartbeatAt: deps.clock.now() })
    .where(and(inArray(tasks.id, taskIds), eq(tasks.status, 'running'), eq(tasks.workerId, workerId)))
    .returning({ id: tasks.id });
  return new Set(alive.map((r) => r.id));
}

/** Which of `taskIds` are running on some worker now. */
export async function runningAmong(deps: Pick<Deps, 'db'>, taskIds: string[]): Promise<Set<string>> {
  const rows = await deps.db
    .select({ id: tasks.id })
    .from(tasks)
    .where(and(inArray(tasks.id, taskIds), eq(tasks.status, 'running')));
  return new Set(rows.map((r) => r.id));
}
