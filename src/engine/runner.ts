import { type SQL, and, eq, sql } from 'drizzle-orm';
import { isBillingPlanName, billingPlan } from '../accounts/billing-plan.js';
import { accounts, apiTokens, tasks } from '../db/schema.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import type { Deps } from '../deps.js';
import { newId } from '../ids.js';
import { type StepName, parseFixOutputs, readProgress } from '../step-contract/index.js';
import type { StepRegistry } from '../steps/step.js';
import { claimTask } from '../tasks/lifecycle/claim.js';
import { endTask } from '../tasks/lifecycle/end.js';
import { parkTask } from '../tasks/lifecycle/park.js';
import type { Task } from '../tasks/service.js';
import { appendLog, notifyTask } from '../tasks/task-logs.js';
import { Lost, type TaskRun, runStep } from './run-step.js';
import { gateBefore, nextOf, skipReason } from './step-policy.js';
import { WorkspaceLease } from './workspace-lease.js';

export interface RunOptions {
  workerId: string;
  /** A running task whose heartbeat is older than this may be taken over. */
  staleMs: number;
}

const budgetPlan = (plan: string | undefined) => (plan && isBillingPlanName(plan) ? plan : 'free');

/**
 * Runs a task from where it stands until it finishes, fails, or stops at an approval gate
 * (the worker is then free). Every write is guarded on this worker still owning the task,
 * so a kill or a takeover turns the rest of the run into no-ops.
 */
export async function runTask(deps: Deps, steps: StepRegistry, taskId: string, opts: RunOptions): Promise<void> {
  const claimed = await claimTask(deps, taskId, opts);
  if (!claimed) return;
  await notifyTask(deps, taskId);
  const handle = deps.runs.start(taskId);
  const run = openRun(deps, steps, claimed, opts, handle);
  try {
    await loadLimits(run);
    await runSteps(run);
  } catch (err) {
    await runFailed(run, err, opts.staleMs);
  } finally {
    await run.lease.dispose().catch((err) => deps.log.warn({ err, task: taskId }, 'could not remove the workspace'));
    deps.runs.finish(taskId, handle);
  }
}

type RunHandle = ReturnType<Deps['runs']['start']>;

/** The run's shared state; its plan limits are read once it runs (loadLimits). */
function openRun(deps: Deps, steps: StepRegistry, claimed: Task, opts: RunOptions, handle: RunHandle): TaskRun {
  const taskId = claimed.id;
  const mine = and(eq(tasks.status, 'running'), eq(tasks.workerId, opts.workerId));
  const progress = readProgress(claimed.progress);
  const run: TaskRun = {
    deps,
    steps,
    taskId,
    task: claimed,
    progress,
    mine,
    signal: handle.controller.signal,
    processes: handle.processes,
    // A resumed run checks out the same commit and carries the fixer's diff again.
    lease: new WorkspaceLease(
      deps,
      claimed,
      () => ({ baseCommit: progress.baseCommit, diff: parseFixOutputs(progress.outputs).fixer?.diff }),
      handle.processes.spawn,
      handle.controller.signal,
    ),
    demo: false,
    limits: billingPlan('free'),
    budget: 'free',
    // Attempts count only workers dying; a claim after a clean hand-off may repeat a number.
    claimLog: { attempt: claimed.attempts, worker: opts.workerId, claim: newId() },
    save: async (set) => {
      const [row] = await deps.db
        .update(tasks)
        .set(set)
        .where(and(eq(tasks.id, taskId), mine))
        .returning();
      if (!row) throw new Lost();
      run.task = row;
    },
  };
  return run;
}

/** The limits of the task's plan, and its model budget: a demo token's own, else the account's plan. */
async function loadLimits(run: TaskRun) {
  const { deps, task } = run;
  const [account] = await deps.db.select().from(accounts).where(eq(accounts.id, task.accountId));
  const demo = task.tokenId
    ? (await deps.db.select({ kind: apiTokens.kind }).from(apiTokens).where(eq(apiTokens.id, task.tokenId)))[0]
        ?.kind === 'demo'
    : false;
  run.demo = demo;
  run.limits = billingPlan(demo ? 'demo' : (account?.plan ?? 'free'));
  run.budget = demo ? 'demo' : budgetPlan(account?.plan);
}

/** The steps from the saved one on: skipped, stopped at a gate, or run; then the task is done. */
async function runSteps(run: TaskRun) {
  const { deps, taskId, progress } = run;
  while (progress.next !== 'end') {
    const step: StepName = progress.next;
    if (run.signal.aborted) throw new Lost();
    const skip = skipReason(run.task, step, run.demo);
    if (skip) {
      await appendLog(deps, taskId, { step, status: 'skipped', output: { reason: skip } });
      progress.next = nextOf(step);
      await run.save({ progress, currentStep: null });
      continue;
    }
    const gate = gateBefore(run.task, step, progress);
    if (gate) {
      // Nothing is held while waiting: the checkout goes before the task says it waits.
      await run.lease.dispose();
      await parkTask(deps, taskId, gate, progress, run.mine);
      return;
    }
    if ((await runStep(run, step)) === 'ended') return;
  }
  // The checkout goes before the task reports its end, so a finished task leaves nothing on disk.
  await run.lease.dispose();
  await endTask(deps, taskId, { status: 'done', where: run.mine });
}

/** A run that threw: lost (nothing to do), the database away (handed back), or an engine fault (failed). */
async function runFailed(run: TaskRun, err: unknown, staleMs: number) {
  const { deps, taskId } = run;
  if (err instanceof Lost || run.signal.aborted) return;
  if (isDatabaseUnavailable(err)) {
    // The database restarting or unreachable is no fault of the task: it goes back to the
    // queue from its last saved step once the database answers, without counting an attempt.
    deps.log.warn({ err, task: taskId }, 'database unavailable during a run; handing the task back');
    await handBack(deps, taskId, run.mine, staleMs);
    return;
  }
  // A fault of the engine itself (a bug): fail the task rather than leave it running.
  deps.log.error({ err, task: taskId }, 'task run failed');
  // The database's own words, not the driver's wrapper: Drizzle's message quotes the query's
  // parameters, which are the task's data and have no place in its error.
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  await endTask(deps, taskId, {
    status: 'failed',
    where: run.mine,
    error: `internal error: ${cause instanceof Error ? cause.message : String(cause)}`,
  }).catch(() => {});
}

/**
 * Releases this worker's claim on a task (the attempt not counted) and queues it again,
 * retrying while the database is still away; if it stays away longer than `staleMs`, the
 * takeover of stale runs picks the task up instead.
 */
async function handBack(deps: Deps, taskId: string, mine: SQL | undefined, staleMs: number) {
  const deadline = Date.now() + staleMs;
  for (;;) {
    try {
      const released = await deps.db
        .update(tasks)
        .set({ workerId: null, currentStep: null, attempts: sql`greatest(${tasks.attempts} - 1, 0)` })
        .where(and(eq(tasks.id, taskId), mine))
        .returning({ id: tasks.id });
      if (released.length) await deps.queue.enqueue(taskId);
      return;
    } catch (err) {
      if (!isDatabaseUnavailable(err) || Date.now() > deadline) return;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
