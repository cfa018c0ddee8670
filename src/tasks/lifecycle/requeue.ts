import { and, eq, isNull, lt, or } from 'drizzle-orm';
import { tasks } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { MAX_ATTEMPTS } from './claim.js';
import { endTask } from './end.js';

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

/**
 * A worker shutting down hands its running tasks back: no worker, attempts reset (a clean
 * shutdown is not a worker dying), queued again so another worker carries on from the last
 * finished step.
 */
export async function releaseWorkerTasks(deps: Pick<Deps, 'db' | 'queue'>, workerId: string): Promise<void> {
  const released = await deps.db
    .update(tasks)
    .set({ workerId: null, attempts: 0 })
    .where(and(eq(tasks.status, 'running'), eq(tasks.workerId, workerId)))
    .returning({ id: tasks.id });
  for (const r of released) await deps.queue.enqueue(r.id).catch(() => {});
}
