import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import { tasks } from '../../db/schema.js';
import { isDatabaseUnavailable } from '../../db/unavailable.js';
import type { Deps } from '../../deps.js';
import { MAX_ATTEMPTS } from './claim.js';
import { endTask } from './end.js';
import { heldBy } from './save.js';

type RequeueDeps = Pick<Deps, 'db' | 'clock' | 'metrics' | 'events' | 'queue' | 'log'>;

/**
 * Running tasks whose worker stopped beating for `staleMs`: queued for another attempt (the
 * claim takes them over), or failed once MAX_ATTEMPTS workers died on them.
 */
export async function requeueOrphans(deps: RequeueDeps, staleMs: number): Promise<void> {
  const stale = new Date(deps.clock.now().getTime() - staleMs);
  const orphaned = and(eq(tasks.status, 'running'), lt(tasks.heartbeatAt, stale));
  const orphans = await deps.db
    .select({ id: tasks.id, attempts: tasks.attempts, step: tasks.currentStep })
    .from(tasks)
    .where(orphaned);
  for (const orphan of orphans) {
    if (orphan.attempts < MAX_ATTEMPTS) {
      await deps.queue.enqueue(orphan.id);
      continue;
    }
    await endTask(deps, orphan.id, {
      status: 'failed',
      where: orphaned,
      error: `the worker running ${orphan.step ?? 'the task'} stopped responding ${MAX_ATTEMPTS} times; giving up`,
    });
  }
}

/**
 * Tasks with no job in the queue after `staleMs`: pending ones whose job was lost, and running
 * ones released by a gate approval or a hand-back (no worker) whose job was lost. Queued again;
 * a duplicate job is harmless, the claim lets one through.
 */
export async function requeueLost(deps: Pick<Deps, 'db' | 'clock' | 'queue'>, staleMs: number): Promise<void> {
  const before = new Date(deps.clock.now().getTime() - staleMs);
  const lost = await deps.db
    .select({ id: tasks.id })
    .from(tasks)
    .where(
      or(
        and(eq(tasks.status, 'pending'), lt(tasks.createdAt, before)),
        and(eq(tasks.status, 'running'), isNull(tasks.workerId), lt(tasks.heartbeatAt, before)),
      ),
    );
  for (const { id } of lost) await deps.queue.enqueue(id);
}

/** Which of a worker's running tasks it hands back: one (its run could not go on), or all (it is stopping). */
export type HandBack = { task: string; retryForMs: number } | 'all';

/**
 * Releases a worker's running tasks (no worker holds them) and queues them again, so a worker
 * carries on from the last finished step; the attempt count (which counts only workers dying)
 * is not raised by this. A run handing back its one task (the database away) undoes its own
 * claim's count and clears its step, retrying while the database is still away for up to
 * `retryForMs` (past that, the takeover of stale runs picks the task up instead); a worker
 * shutting down hands back all of its tasks with their counts reset (a clean shutdown is not
 * a worker dying). A job that could not be queued is left to requeueLost.
 */
export async function handBack(deps: Pick<Deps, 'db' | 'queue'>, workerId: string, which: HandBack): Promise<void> {
  const one = which !== 'all';
  const deadline = Date.now() + (one ? which.retryForMs : 0);
  for (;;) {
    try {
      const released = await deps.db
        .update(tasks)
        .set(
          one
            ? { workerId: null, currentStep: null, attempts: sql`greatest(${tasks.attempts} - 1, 0)` }
            : { workerId: null, attempts: 0 },
        )
        .where(and(one ? eq(tasks.id, which.task) : undefined, heldBy(workerId)))
        .returning({ id: tasks.id });
      for (const r of released) await deps.queue.enqueue(r.id).catch(() => {});
      return;
    } catch (err) {
      if (!one) throw err;
      if (!isDatabaseUnavailable(err) || Date.now() > deadline) return;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
