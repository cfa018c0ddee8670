import { isDatabaseUnavailable } from '../db/unavailable.js';
import type { Deps } from '../deps.js';
import { newId } from '../ids.js';
import { type Pipeline, STEPS, parseFixOutputs, readProgress } from '../step-contract/index.js';
import type { StepRegistry } from '../steps/step.js';
import { claimTask } from '../tasks/lifecycle/claim.js';
import { endTask } from '../tasks/lifecycle/end.js';
import { parkTask } from '../tasks/lifecycle/park.js';
import { handBack } from '../tasks/lifecycle/requeue.js';
import { taskLimits } from '../tasks/lifecycle/task-limits.js';
import { heldBy, saveRun } from '../tasks/lifecycle/save.js';
import type { Task } from '../tasks/service.js';
import { appendLog, notifyTask } from '../tasks/task-logs.js';
import { modelCallBilled } from '../tasks/spend-notices.js';
import { type StepLoop, runLoop } from './step-loop.js';
import { CheckoutLease } from './checkout-lease.js';

export interface RunOptions {
  workerId: string;
  /** A running task whose heartbeat is older than this may be taken over. */
  staleMs: number;
  /** The steps' descriptors, in order: the contract's STEPS unless a test adds a step. */
  pipeline?: Pipeline;
  /** Fired when the worker stops: the run ends after the step it is in (the worker hands the task back). */
  drain?: AbortSignal;
}

/** The run lost its task (killed, taken over): the rest of the run does nothing. */
class Lost extends Error {}

/**
 * Runs a task from where it stands until it finishes, fails, or stops at an approval gate
 * (the worker is then free): the step loop (step-loop.ts) with the task in the database.
 * Every write is guarded on this worker still owning the task, so a kill or a takeover turns
 * the rest of the run into no-ops.
 */
export async function runTask(deps: Deps, steps: StepRegistry, taskId: string, opts: RunOptions): Promise<void> {
  const claimed = await claimTask(deps, taskId, opts);
  if (!claimed) return;
  await notifyTask(deps, taskId);
  const handle = deps.runs.start(taskId);
  const pipeline = opts.pipeline ?? STEPS;
  const progress = readProgress(
    claimed.progress,
    pipeline.map((s) => s.name),
  );
  // A resumed run checks out the same commit and carries the fixer's diff again.
  const lease = new CheckoutLease(
    deps,
    claimed,
    () => ({ baseCommit: progress.baseCommit, diff: parseFixOutputs(progress.outputs).fixer?.diff }),
    handle.processes.spawn,
    handle.controller.signal,
  );
  try {
    const limits = await taskLimits(deps, claimed);
    await runLoop(databaseLoop(deps, { pipeline, steps }, claimed, progress, opts, { lease, handle, limits }));
  } catch (err) {
    await runFailed(deps, taskId, handle.controller.signal, err, opts);
  } finally {
    await lease.dispose().catch((err) => deps.log.warn({ err, task: taskId }, 'could not remove the checkout'));
    deps.runs.finish(taskId, handle);
  }
}

type RunHandle = ReturnType<Deps['runs']['start']>;

/** The loop of one claim's run, with the task kept in the database under this worker's guard. */
function databaseLoop(
  deps: Deps,
  { pipeline, steps }: Pick<StepLoop, 'pipeline' | 'steps'>,
  claimed: Task,
  progress: StepLoop['progress'],
  opts: RunOptions,
  run: { lease: CheckoutLease; handle: RunHandle; limits: Awaited<ReturnType<typeof taskLimits>> },
): StepLoop {
  const taskId = claimed.id;
  const mine = heldBy(opts.workerId);
  // Which claim ran a step (its id, attempt and worker), so a step run twice by one claim, or by
  // two claims at once, shows in the log. Attempts count only workers dying; a claim after a
  // clean hand-off may repeat a number.
  const claimLog = { attempt: claimed.attempts, worker: opts.workerId, claim: newId() };
  const loop: StepLoop = {
    deps,
    pipeline,
    steps,
    task: claimed,
    progress,
    signal: run.handle.controller.signal,
    drain: opts.drain,
    spawn: run.handle.processes.spawn,
    checkout: () => run.lease.get(),
    ...run.limits,
    store: {
      save: async ({ progress: withProgress, ...write }) => {
        const row = await saveRun(deps, taskId, opts.workerId, { ...write, ...(withProgress ? { progress } : {}) });
        if (!row) throw new Lost();
        loop.task = row;
      },
      log: async (entry) => {
        await appendLog(
          deps,
          taskId,
          entry.status === 'running' ? { ...entry, input: { ...entry.input, ...claimLog } } : entry,
        );
      },
      // A step's own records carry no claim: the step's start row names it.
      report: async ({ step, output }) => {
        await appendLog(deps, taskId, { step, status: 'running', output });
      },
      // Nothing is held while waiting: the checkout goes before the task says it waits.
      park: async (gate) => {
        await run.lease.dispose();
        await parkTask(deps, taskId, gate, progress, mine);
      },
      // The checkout goes before the task reports its end, so a finished task leaves nothing on disk.
      end: async (end) => {
        await run.lease.dispose();
        await endTask(deps, taskId, { ...end, where: mine });
      },
      // Each model call's cost counts against the spend limits as it is billed, not when the step ends.
      billed: (usd) => modelCallBilled(deps, loop.task, usd),
      // The database going away is not the step's failure: the run is handed back.
      stepThrew: (err) => {
        if (isDatabaseUnavailable(err)) throw err;
      },
    },
  };
  return loop;
}

/** A run that threw: lost (nothing to do), the database away (handed back), or an engine fault (failed). */
async function runFailed(deps: Deps, taskId: string, signal: AbortSignal, err: unknown, opts: RunOptions) {
  if (err instanceof Lost || signal.aborted) return;
  if (isDatabaseUnavailable(err)) {
    // The database restarting or unreachable is no fault of the task: it goes back to the
    // queue from its last saved step once the database answers, without counting an attempt.
    deps.log.warn({ err, task: taskId }, 'database unavailable during a run; handing the task back');
    await handBack(deps, opts.workerId, { task: taskId, retryForMs: opts.staleMs });
    return;
  }
  // A fault of the engine itself (a bug): fail the task rather than leave it running.
  deps.log.error({ err, task: taskId }, 'task run failed');
  // The database's own words, not the driver's wrapper: Drizzle's message quotes the query's
  // parameters, which are the task's data and have no place in its error.
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  await endTask(deps, taskId, {
    status: 'failed',
    where: heldBy(opts.workerId),
    error: `internal error: ${cause instanceof Error ? cause.message : String(cause)}`,
  }).catch(() => {});
}
