import { and, gt, inArray, isNotNull, lt, sql } from 'drizzle-orm';
import { tasks, triggerDeliveries } from '../db/schema.js';
import type { Deps } from '../deps.js';

/** Answers of tasks that ended longer ago than this are left as they are (the connection may be gone for good). */
const ANSWER_WINDOW_MS = 24 * 3600_000;

/**
 * What a lost job leaves behind, found again by the worker's maintenance: deliveries recorded but
 * not acted on (the job never queued, or its worker died while acting), and triggered tasks that
 * ended without their answer brought up to date.
 */
export async function requeueTriggerJobs(deps: Pick<Deps, 'db' | 'clock' | 'queue'>, staleMs: number): Promise<void> {
  const now = deps.clock.now().getTime();
  const stale = new Date(now - staleMs);
  const lost = await deps.db
    .update(triggerDeliveries)
    .set({ status: 'received' })
    // An `acting` row older than the stale time lost its worker; a `received` one was never taken.
    .where(and(inArray(triggerDeliveries.status, ['received', 'acting']), lt(triggerDeliveries.receivedAt, stale)))
    .returning({ id: triggerDeliveries.id });
  for (const { id } of lost) await deps.queue.enqueueTrigger({ delivery: id });
  const unanswered = await deps.db
    .select({ id: tasks.id })
    .from(tasks)
    .where(
      and(
        isNotNull(tasks.trigger),
        inArray(tasks.status, ['done', 'failed', 'cancelled']),
        gt(tasks.finishedAt, new Date(now - ANSWER_WINDOW_MS)),
        lt(tasks.finishedAt, stale),
        sql`${tasks.trigger}->>'answered' is distinct from ${tasks.status}`,
      ),
    )
    .limit(100);
  for (const { id } of unanswered) await deps.queue.enqueueTrigger({ answer: id });
}
