import { readdir } from 'node:fs/promises';
import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import { tasks } from '../db/schema.js';
import type { Config } from '../config.js';
import type { Deps } from '../deps.js';
import { CHANNELS } from '../events/bus.js';
import { newId } from '../ids.js';
import { MAX_ATTEMPTS, runTask } from './runner.js';
import type { StepRegistry } from '../steps/step.js';
import { checkOpenPulls } from '../tasks/merge-tracking.js';
import { sweepExpiredKeys } from '../tasks/idempotency-keys.js';
import { endTask } from '../tasks/lifecycle/end.js';
import { GATE_STATUSES } from '../tasks/states.js';
import { removeWorkspace } from '../workspace/checkout.js';
import { workRootOf } from '../workspace/layout.js';
import { claimPeriodic } from './periodic.js';

export const GATE_TIMEOUT_MS = 5 * 60_000;
/** How often one worker deletes Idempotency-Keys whose 24 h are over (lookups ignore them anyway). */
export const IDEMPOTENCY_SWEEP_MS = 3600_000;

export interface WorkerOptions {
  /** Tasks this worker runs at once. */
  concurrency: number;
  /** How often a running task's heartbeat is written (and its status re-read, the kill fallback). */
  heartbeatMs: number;
  /** A running task whose heartbeat is older than this is taken over by another worker (at most 60 s). */
  staleMs: number;
  /** How often gate timeouts, dead workers and lost jobs are looked for. */
  maintenanceMs: number;
}

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = {
  concurrency: 2,
  heartbeatMs: 5_000,
  staleMs: 30_000,
  maintenanceMs: 5_000,
};

export function workerOptions(config: Config): WorkerOptions {
  return {
    ...DEFAULT_WORKER_OPTIONS,
    ...config.worker,
    maintenanceMs: Math.min(DEFAULT_WORKER_OPTIONS.maintenanceMs, config.worker.staleMs / 2),
  };
}

export interface Worker {
  id: string;
  /** One maintenance pass: gate timeouts, takeovers, lost jobs. Runs on a timer too. */
  maintain(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A worker: takes "run task" jobs from the queue, keeps heartbeats for its running tasks,
 * hears kills by NOTIFY (and notices them on the heartbeat as a fallback), and does the
 * periodic maintenance every worker shares: cancelling gates left unapproved for 5
 * minutes, handing tasks of dead workers to live ones, failing tasks whose workers died twice.
 */
export async function startWorker(
  deps: Deps,
  steps: StepRegistry,
  options: Partial<WorkerOptions> = {},
): Promise<Worker> {
  const opts = { ...DEFAULT_WORKER_OPTIONS, ...options };
  const id = `${process.pid}-${newId()}`;
  let stopping = false;
  const running = new Set<Promise<void>>();

  const stopConsuming = await deps.queue.work(opts.concurrency, async (taskId) => {
    const run = runTask(deps, steps, taskId, { workerId: id, staleMs: opts.staleMs });
    running.add(run);
    try {
      await run;
    } finally {
      running.delete(run);
    }
  });

  const unsubscribe = [
    deps.events.subscribe(CHANNELS.taskQueued, () => deps.queue.wake()),
    deps.events.subscribe(CHANNELS.taskKill, (taskId) => void deps.runs.abort(taskId, 'killed')),
  ];

  const heartbeat = async () => {
    const ids = deps.runs.ids();
    if (ids.length === 0) return;
    const now = deps.clock.now();
    const alive = await deps.db
      .update(tasks)
      .set({ heartbeatAt: now })
      .where(and(inArray(tasks.id, ids), eq(tasks.status, 'running'), eq(tasks.workerId, id)))
      .returning({ id: tasks.id });
    // Runs whose task is no longer ours (killed, finished elsewhere) stop here even if the NOTIFY was missed.
    const ours = new Set(alive.map((r) => r.id));
    await Promise.all(
      ids.filter((t) => !ours.has(t)).map((t) => deps.runs.abort(t, 'the task is no longer running here')),
    );
  };

  const maintain = async () => {
    const now = deps.clock.now();
    // Gates not approved in time: cancelled, credit released.
    const gateDeadline = new Date(now.getTime() - GATE_TIMEOUT_MS);
    const expired = await deps.db
      .select({ id: tasks.id })
      .from(tasks)
      .where(and(inArray(tasks.status, [...GATE_STATUSES]), lt(tasks.gateSince, gateDeadline)));
    for (const { id: taskId } of expired) {
      await endTask(deps, taskId, {
        status: 'cancelled',
        error: 'the approval gate was not approved within 5 minutes',
        where: and(inArray(tasks.status, [...GATE_STATUSES]), lt(tasks.gateSince, gateDeadline)),
      });
    }
    // Running tasks whose worker stopped beating: another attempt, or failed after two.
    const stale = new Date(now.getTime() - opts.staleMs);
    const orphans = await deps.db
      .select({ id: tasks.id, attempts: tasks.attempts, step: tasks.currentStep })
      .from(tasks)
      .where(and(eq(tasks.status, 'running'), lt(tasks.heartbeatAt, stale)));
    for (const orphan of orphans) {
      if (orphan.attempts >= MAX_ATTEMPTS) {
        await endTask(deps, orphan.id, {
          status: 'failed',
          where: and(eq(tasks.status, 'running'), lt(tasks.heartbeatAt, stale)),
          error: `the worker running ${orphan.step ?? 'the task'} stopped responding ${MAX_ATTEMPTS} times; giving up`,
        });
      } else {
        await deps.queue.enqueue(orphan.id);
      }
    }
    // Running tasks released at a gate approval, and pending tasks whose job was lost, are queued again.
    const lostBefore = new Date(now.getTime() - opts.staleMs);
    const lost = await deps.db
      .select({ id: tasks.id })
      .from(tasks)
      .where(
        sql`(${tasks.status} = 'pending' and ${tasks.createdAt} < ${lostBefore}) or (${tasks.status} = 'running' and ${tasks.workerId} is null and ${tasks.heartbeatAt} < ${lostBefore})`,
      );
    for (const { id: taskId } of lost) await deps.queue.enqueue(taskId);
    if (await claimPeriodic(deps, 'idempotency-sweep', IDEMPOTENCY_SWEEP_MS)) await sweepExpiredKeys(deps);
    // Pull requests the service opened: merged? edited by a person? One worker per period asks.
    if (await claimPeriodic(deps, 'merge-tracking', deps.config.mergeCheckMs)) {
      const report = await checkOpenPulls(deps);
      if (report.checked) deps.log.info({ worker: id, ...report }, 'pull requests checked');
    }
  };

  await removeStaleWorkspaces(deps).catch((err) => deps.log.warn({ err }, 'could not clean up old workspaces'));

  const guard = (fn: () => Promise<void>, what: string) => () =>
    void fn().catch((err) => {
      if (!stopping) deps.log.warn({ err, worker: id }, `${what} failed`);
    });
  const timers = [
    setInterval(guard(heartbeat, 'heartbeat'), opts.heartbeatMs),
    setInterval(guard(maintain, 'maintenance'), opts.maintenanceMs),
  ];
  deps.log.info({ worker: id, ...opts }, 'worker started');

  return {
    id,
    maintain,
    async stop() {
      stopping = true;
      for (const t of timers) clearInterval(t);
      await stopConsuming();
      for (const u of unsubscribe) u();
      // Runs in progress are aborted and handed back: another worker (or this one, restarted)
      // carries on from the last finished step, and a clean shutdown does not count as an attempt.
      await deps.runs.abortAll('the worker is shutting down');
      await Promise.allSettled([...running]);
      const released = await deps.db
        .update(tasks)
        .set({ workerId: null, attempts: 0 })
        .where(and(eq(tasks.status, 'running'), eq(tasks.workerId, id)))
        .returning({ id: tasks.id });
      for (const r of released) await deps.queue.enqueue(r.id).catch(() => {});
    },
  };
}

/**
 * Checkouts left on this machine by runs that died with their worker: a task that is not
 * running anywhere now has no use for one (a resumed run makes its own). Checkouts of
 * running tasks stay: another worker on this machine may be using them.
 */
async function removeStaleWorkspaces(deps: Deps) {
  const root = workRootOf(deps.config.dataDir);
  const ids = (await readdir(root).catch(() => [] as string[])).filter((name) => /^[0-9a-f-]{36}$/.test(name));
  if (ids.length === 0) return;
  const running = await deps.db
    .select({ id: tasks.id })
    .from(tasks)
    .where(and(inArray(tasks.id, ids), eq(tasks.status, 'running')));
  const keep = new Set(running.map((r) => r.id));
  for (const id of ids.filter((i) => !keep.has(i))) await removeWorkspace(deps.config.dataDir, id);
}
