import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import { tasks } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import type { Task } from '../task.js';
import { moveTask } from '../transitions.js';

/** Workers that may take a task up in a row without a clean hand-off (gate, shutdown) before it fails. */
export const MAX_ATTEMPTS = 2;

export interface Claimant {
  workerId: string;
  /** A running task whose heartbeat is older than this may be taken over. */
  staleMs: number;
}

/**
 * Takes the task if it is free: pending, or running with no live worker (one that crashed),
 * fewer than MAX_ATTEMPTS times. The guarded update makes the claim exclusive across workers;
 * undefined when another worker has it or it is not runnable.
 */
export async function claimTask(
  deps: Pick<Deps, 'db' | 'clock'>,
  taskId: string,
  by: Claimant,
): Promise<Task | undefined> {
  const now = deps.clock.now();
  const stale = new Date(now.getTime() - by.staleMs);
  const claimable = or(
    eq(tasks.status, 'pending'),
    and(
      eq(tasks.status, 'running'),
      or(isNull(tasks.workerId), lt(tasks.heartbeatAt, stale)),
      lt(tasks.attempts, MAX_ATTEMPTS),
    ),
  );
  return moveTask(
    deps.db,
    taskId,
    'running',
    {
      workerId: by.workerId,
      heartbeatAt: now,
      attempts: sql`${tasks.attempts} + 1`,
      startedAt: sql`coalesce(${tasks.startedAt}, ${now})`,
    },
    claimable,
    true,
  );
}
