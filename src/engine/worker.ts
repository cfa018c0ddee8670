import { readdir } from 'node:fs/promises';
import type { Config } from '../config/config.js';
import type { Deps } from '../deps.js';
import { CHANNELS } from '../events/bus.js';
import { newId } from '../ids.js';
import { runTask } from './runner.js';
import type { Pipeline } from '../step-contract/index.js';
import type { StepRegistry } from '../steps/step.js';
import { checkOpenPulls } from '../tasks/merge-tracking.js';
import { sweepExpiredKeys } from '../tasks/idempotency-keys.js';
import { expireGates } from '../tasks/lifecycle/expire-gates.js';
import { beat, runningAmong } from '../tasks/lifecycle/heartbeat.js';
import { handBack, requeueLost, requeueOrphans } from '../tasks/lifecycle/requeue.js';
import { removeCheckout } from '../checkout/checkout.js';
import { workRootOf } from '../checkout/layout.js';
import { dropOldPayloads } from '../webhooks/deliveries.js';
import { applyAuditRetention } from '../audit/retention.js';
import { requeueDueDeliveries, runDeliveryJob } from '../webhooks/attempt.js';
import { claimPeriodic } from './periodic.js';
import { actOnDelivery } from '../triggers/act.js';
import { refreshAnswer } from '../triggers/answer.js';
import { updateOutdatedHooks } from '../triggers/hook-events.js';
import { requeueTriggerJobs } from '../triggers/sweep.js';

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
  /** Webhook delivery attempts this worker makes at once (each waits on a remote endpoint, not the CPU). */
  webhookConcurrency: number;
  /**
   * How long stop() lets running steps finish before it aborts them; the tasks are handed back
   * either way. 0 (the default here, for workers started without the config) aborts at once;
   * the config's default (EMEND_STOP_GRACE_SECONDS) is 25 s.
   */
  stopGraceMs: number;
  /** The steps' descriptors, in order: the contract's STEPS unless a test runs a pipeline with a step added. */
  pipeline?: Pipeline;
}

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = {
  concurrency: 2,
  heartbeatMs: 5_000,
  staleMs: 30_000,
  maintenanceMs: 5_000,
  webhookConcurrency: 4,
  stopGraceMs: 0,
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
  /**
   * Stops taking jobs at once, lets the steps running finish (within stopGraceMs; past it they
   * are aborted) and hands their tasks back. Called again, it returns the same stop.
   */
  stop(): Promise<void>;
}

/**
 * A worker: takes "run task" jobs from the queue, keeps heartbeats for its running tasks,
 * hears kills by NOTIFY (and notices them on the heartbeat as a fallback), and schedules the
 * maintenance every worker shares (the lifecycle operations in src/tasks/lifecycle: gates
 * left unapproved for 5 minutes cancelled, tasks of dead workers handed to live ones or
 * failed after two deaths, lost jobs queued again) and the periodic jobs.
 */
export async function startWorker(
  deps: Deps,
  steps: StepRegistry,
  options: Partial<WorkerOptions> = {},
): Promise<Worker> {
  const opts = { ...DEFAULT_WORKER_OPTIONS, ...options };
  const id = `${process.pid}-${newId()}`;
  let stopping = false;
  let stopped: Promise<void> | undefined;
  const running = new Set<Promise<void>>();
  // Fired by stop(): every run ends after the step it is in.
  const drain = new AbortController();

  const stopConsuming = await deps.queue.work(opts.concurrency, async (taskId) => {
    const run = runTask(deps, steps, taskId, {
      workerId: id,
      staleMs: opts.staleMs,
      pipeline: opts.pipeline,
      drain: drain.signal,
    });
    running.add(run);
    try {
      await run;
    } finally {
      running.delete(run);
    }
  });
  const stopDeliveries = await deps.queue.workDeliveries(opts.webhookConcurrency, (deliveryId) =>
    runDeliveryJob(deps, deliveryId),
  );
  // Code-host triggers: act on a delivery, or bring a triggered task's answer up to date. A job
  // never rejects (its state is its row; the maintenance sweep tries again), and stop() waits for
  // the ones running, so none is left touching the database after the worker has stopped.
  const triggerJobs = new Set<Promise<void>>();
  const stopTriggers = await deps.queue.workTriggers(opts.webhookConcurrency, async (job) => {
    const run = ('delivery' in job ? actOnDelivery(deps, job.delivery) : refreshAnswer(deps, job.answer)).catch(
      (err) => {
        if (!stopping) deps.log.warn({ err, job }, 'trigger job failed; the sweep will try again');
      },
    );
    triggerJobs.add(run);
    try {
      await run;
    } finally {
      triggerJobs.delete(run);
    }
  });
  const unsubscribe = [
    deps.events.subscribe(CHANNELS.taskQueued, () => deps.queue.wake()),
    deps.events.subscribe(CHANNELS.taskKill, (taskId) => void deps.runs.abort(taskId, 'killed')),
  ];
  const maintain = () => maintenance(deps, id, opts.staleMs);

  await removeStaleCheckouts(deps).catch((err) => deps.log.warn({ err }, 'could not clean up old checkouts'));

  const guard = (fn: () => Promise<void>, what: string) => () =>
    void fn().catch((err) => {
      if (!stopping) deps.log.warn({ err, worker: id }, `${what} failed`);
    });
  // The heartbeat goes on while stop() waits for running steps, or another worker would take them over.
  const heartbeats = setInterval(
    guard(() => heartbeat(deps, id), 'heartbeat'),
    opts.heartbeatMs,
  );
  const maintenanceTimer = setInterval(guard(maintain, 'maintenance'), opts.maintenanceMs);
  const { pipeline: _pipeline, ...logged } = opts;
  deps.log.info({ worker: id, ...logged }, 'worker started');

  return {
    id,
    maintain,
    stop() {
      stopped ??= stop();
      return stopped;
    },
  };

  async function stop() {
    stopping = true;
    clearInterval(maintenanceTimer);
    await stopConsuming();
    await stopDeliveries();
    await stopTriggers();
    // The steps running finish and their outputs are saved; the runs then end before their next
    // step. Past the grace, the steps still running are aborted below (their work is redone).
    drain.abort();
    if (running.size > 0) {
      deps.log.info(
        { worker: id, tasks: deps.runs.ids(), graceMs: opts.stopGraceMs },
        'worker stopping: finishing steps',
      );
      await settledWithin([...running], opts.stopGraceMs);
    }
    clearInterval(heartbeats);
    await Promise.allSettled([...triggerJobs]);
    // pg-boss marks a finished job complete without awaiting it: let that query start before the
    // caller may close the database.
    await new Promise((resolve) => setImmediate(resolve));
    for (const u of unsubscribe) u();
    // Runs in progress are aborted and handed back: another worker (or this one, restarted)
    // carries on from the last finished step, and a clean shutdown does not count as an attempt.
    await deps.runs.abortAll('the worker is shutting down');
    await Promise.allSettled([...running]);
    await handBack(deps, id, 'all');
  }
}

/** Waits for the promises to settle, or for `ms` to pass, whichever comes first. */
async function settledWithin(promises: Promise<unknown>[], ms: number) {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(promises),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

/** Beats for this process's runs; runs whose task is no longer ours stop, even if the kill's NOTIFY was missed. */
async function heartbeat(deps: Deps, workerId: string) {
  const ids = deps.runs.ids();
  if (ids.length === 0) return;
  const ours = await beat(deps, workerId, ids);
  await Promise.all(
    ids.filter((t) => !ours.has(t)).map((t) => deps.runs.abort(t, 'the task is no longer running here')),
  );
}

/** One maintenance pass; every worker runs it, the guarded operations make overlaps harmless. */
async function maintenance(deps: Deps, workerId: string, staleMs: number) {
  await expireGates(deps);
  await requeueOrphans(deps, staleMs);
  await requeueLost(deps, staleMs);
  await requeueDueDeliveries(deps, staleMs);
  await requeueTriggerJobs(deps, staleMs);
  await periodicJobs(deps, workerId);
}

/** Jobs one worker per period runs, whichever claims the period first. */
async function periodicJobs(deps: Deps, workerId: string) {
  if (await claimPeriodic(deps, 'idempotency-sweep', IDEMPOTENCY_SWEEP_MS)) await sweepExpiredKeys(deps);
  if (await claimPeriodic(deps, 'webhook-payloads', IDEMPOTENCY_SWEEP_MS)) await dropOldPayloads(deps);
  // Audit rows past the retention are folded into a summary row, never silently dropped.
  if (await claimPeriodic(deps, 'audit-retention', IDEMPOTENCY_SWEEP_MS)) {
    const folded = await applyAuditRetention(deps);
    if (folded) deps.log.info({ worker: workerId, folded }, 'audit rows past the retention folded');
  }
  // Triggers' webhooks made before emend asked for some events (CI follow-ups' checks): asked for them now.
  if (await claimPeriodic(deps, 'trigger-hooks', IDEMPOTENCY_SWEEP_MS)) {
    const report = await updateOutdatedHooks(deps);
    if (report.updated || report.failed) deps.log.info({ worker: workerId, ...report }, 'old webhooks updated');
  }
  // Pull requests the service opened: merged? edited by a person?
  if (await claimPeriodic(deps, 'merge-tracking', deps.config.mergeCheckMs)) {
    const report = await checkOpenPulls(deps);
    if (report.checked) deps.log.info({ worker: workerId, ...report }, 'pull requests checked');
  }
}

/**
 * Checkouts left on this machine by runs that died with their worker: a task that is not
 * running anywhere now has no use for one (a resumed run makes its own). Checkouts of
 * running tasks stay: another worker on this machine may be using them.
 */
async function removeStaleCheckouts(deps: Deps) {
  const root = workRootOf(deps.config.dataDir);
  const ids = (await readdir(root).catch(() => [] as string[])).filter((name) => /^[0-9a-f-]{36}$/.test(name));
  if (ids.length === 0) return;
  const keep = await runningAmong(deps, ids);
  for (const id of ids.filter((i) => !keep.has(i))) await removeCheckout(deps.config.dataDir, id);
}
