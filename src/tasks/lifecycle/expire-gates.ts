import { and, inArray, lt } from 'drizzle-orm';
import { tasks } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { GATE_STATUSES } from '../states.js';
import { endTask } from './end.js';

/** How long a task may wait at an approval gate before it is cancelled. */
export const GATE_TIMEOUT_MS = 5 * 60_000;

/**
 * Cancels the tasks left at a gate longer than GATE_TIMEOUT_MS, credit released (endTask).
 * Each end is guarded on the task still being at an expired gate, so an approval that lands
 * first wins and two workers sweeping at once end a task once. Returns how many it ended.
 */
export async function expireGates(
  deps: Pick<Deps, 'db' | 'clock' | 'metrics' | 'events' | 'queue' | 'log'>,
): Promise<number> {
  const deadline = new Date(deps.clock.now().getTime() - GATE_TIMEOUT_MS);
  const expired = and(inArray(tasks.status, [...GATE_STATUSES]), lt(tasks.gateSince, deadline));
  const rows = await deps.db.select({ id: tasks.id }).from(tasks).where(expired);
  let ended = 0;
  for (const { id } of rows) {
    const row = await endTask(deps, id, {
      status: 'cancelled',
      error: 'the approval gate was not approved within 5 minutes',
      where: expired,
    });
    if (row) ended++;
  }
  return ended;
}
