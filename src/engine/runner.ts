import { and, eq, sql } from 'drizzle-orm';
import { DEMO_STAGES, isPlanName, planLimits } from '../accounts/plans.js';
import { accounts, apiTokens, tasks } from '../db/schema.js';
import { storableJson, storableText } from '../db/storable.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import type { Deps } from '../deps.js';
import { newId } from '../ids.js';
import { claimTask } from '../tasks/lifecycle/claim.js';
import { endTask } from '../tasks/lifecycle/end.js';
import { parkTask } from '../tasks/lifecycle/park.js';
import type { Task } from '../tasks/service.js';
import { appendLog, notifyTask } from '../tasks/task-logs.js';
import type { TaskSet } from '../tasks/transitions.js';
import { PIPELINE, type StepName, type StepRegistry, type StepResult } from '../steps/step.js';
import { stepModel } from './step-model.js';
import { WorkspaceLease } from './workspace-lease.js';

/** What the runner keeps in tasks.progress so any worker can carry on after the last finished step. */
export interface Progress {
  outputs: Partial<Record<StepName, Record<string, unknown>>>;
  next: StepName | 'end';
  /** Validator output the next fixer run should address. */
  failure?: Record<string, unknown>;
  /** Gates already approved for the current outputs. */
  approved?: { plan?: boolean; diff?: boolean };
  /** The commit the run's checkout started from; a resumed run checks out the same one. */
  baseCommit?: string;
}

export interface RunOptions {
  workerId: string;
  /** A running task whose heartbeat is older than this may be taken over. */
  staleMs: number;
}

const readProgress = (task: Task): Progress => {
  const p = (task.progress ?? {}) as Partial<Progress>;
  return {
    outputs: p.outputs ?? {},
    next: p.next ?? 'planner',
    failure: p.failure,
    approved: p.approved ?? {},
    baseCommit: p.baseCommit,
  };
};

const nextOf = (step: StepName): StepName | 'end' => PIPELINE[PIPELINE.indexOf(step) + 1] ?? 'end';

/** Why a step does not run for this task, or undefined when it does. */
function skipReason(task: Task, step: StepName, demo: boolean): string | undefined {
  if (task.taskType === 'scaffold') {
    if (step === 'locator' || step === 'inspector') return 'a scaffold task has no repository to search';
    if (step === 'pr')
      return 'a scaffold task publishes its site; POST /v1/tasks/{id}/deploy-git pushes it to a new repository';
    if (demo && step !== 'planner') return 'demo tokens stop after the planner for scaffold tasks';
  }
  if (demo && !DEMO_STAGES.includes(step)) return 'demo tokens stop after the inspector';
  if (step === 'pr' && task.mode === 'preview') return 'preview mode opens no pull request';
  return undefined;
}

/**
 * The gate in front of a step, if any: the plan gate before anything after the planner,
 * the diff gate before the validator. Checked before the step (not after the one before),
 * so a worker dying between the two cannot slip past a gate.
 */
function gateBefore(task: Task, step: StepName, progress: Progress): 'awaiting_plan' | 'awaiting_diff' | undefined {
  if (task.approvalMode !== 'manual') return undefined;
  if (step !== 'planner' && progress.outputs.planner && !progress.approved?.plan) return 'awaiting_plan';
  if (step === 'validator' && !progress.approved?.diff) return 'awaiting_diff';
  return undefined;
}

class Lost extends Error {}

const budgetPlan = (plan: string | undefined) => (plan && isPlanName(plan) ? plan : 'free');

/**
 * Runs a task from where it stands until it finishes, fails, or stops at an approval gate
 * (the worker is then free). Every write is guarded on this worker still owning the task,
 * so a kill or a takeover turns the rest of the run into no-ops.
 */
export async function runTask(deps: Deps, steps: StepRegistry, taskId: string, opts: RunOptions): Promise<void> {
  const claimed = await claimTask(deps, taskId, opts);
  if (!claimed) return;
  // Attempts count only workers dying; a claim after a clean hand-off may repeat a number.
  const claimId = newId();
  await notifyTask(deps, taskId);
  const run = deps.runs.start(taskId);
  const mine = and(eq(tasks.status, 'running'), eq(tasks.workerId, opts.workerId));
  let task = claimed;
  const progress = readProgress(task);
  const lease = new WorkspaceLease(
    deps,
    task,
    () => ({ baseCommit: progress.baseCommit, diff: progress.outputs.fixer?.diff as string | undefined }),
    run.processes.spawn,
    run.controller.signal,
  );
  try {
    const [account] = await deps.db.select().from(accounts).where(eq(accounts.id, task.accountId));
    const demo = task.tokenId
      ? (await deps.db.select({ kind: apiTokens.kind }).from(apiTokens).where(eq(apiTokens.id, task.tokenId)))[0]
          ?.kind === 'demo'
      : false;
    const limits = planLimits(demo ? 'demo' : (account?.plan ?? 'free'));
    const save = async (set: TaskSet) => {
      const [row] = await deps.db
        .update(tasks)
        .set(set)
        .where(and(eq(tasks.id, taskId), mine))
        .returning();
      if (!row) throw new Lost();
      task = row;
    };

    while (progress.next !== 'end') {
      const step: StepName = progress.next;
      if (run.controller.signal.aborted) throw new Lost();
      const skip = skipReason(task, step, demo);
      if (skip) {
        await appendLog(deps, taskId, { step, status: 'skipped', output: { reason: skip } });
        progress.next = nextOf(step);
        await save({ progress, currentStep: null });
        continue;
      }
      const gate = gateBefore(task, step, progress);
      if (gate) {
        // Nothing is held while waiting: the checkout goes before the task says it waits.
        await lease.dispose();
        await parkTask(deps, taskId, gate, progress, mine);
        return;
      }
      await save({ currentStep: step });
      const retry = step === 'fixer' ? task.retryCount : 0;
      // Which claim ran the step (its id, attempt and worker), so a step run twice by one claim,
      // or by two claims at once, shows in the log; round is the fixer round the step belongs to.
      await appendLog(deps, taskId, {
        step,
        status: 'running',
        input: { retry, round: task.retryCount, attempt: task.attempts, worker: opts.workerId, claim: claimId },
      });
      const started = performance.now();
      const model = stepModel(deps, task, step, demo ? 'demo' : budgetPlan(account?.plan), run.controller.signal);
      let result: StepResult;
      try {
        result = await steps[step](
          { task, outputs: progress.outputs, failure: step === 'fixer' ? progress.failure : undefined, retry },
          {
            deps,
            signal: run.controller.signal,
            spawn: run.processes.spawn,
            log: (message, data) => deps.log.debug({ task: taskId, step, ...data }, message),
            model: model.client,
            limits,
            workspace: async () => {
              const ws = await lease.get();
              progress.baseCommit ??= ws.baseCommit;
              return ws;
            },
          },
        );
      } catch (err) {
        if (run.controller.signal.aborted) throw new Lost();
        // The database going away is not the step's failure: the run is handed back below.
        if (isDatabaseUnavailable(err)) throw err;
        const message = storableText(err instanceof Error ? err.message : String(err));
        // What the step's model calls cost is the task's, whether or not the step got anywhere.
        const spent = model.spent(task.byok);
        await appendLog(deps, taskId, {
          step,
          status: 'failed',
          output: { error: message, ...spent.output },
          tokens: spent.tokens,
          costUsd: spent.costUsd,
          durationMs: Math.round(performance.now() - started),
        });
        await save({
          tokensTotal: sql`${tasks.tokensTotal} + ${spent.tokens}`,
          costUsd: sql`${tasks.costUsd} + ${spent.costUsd}`,
        });
        await lease.dispose();
        await endTask(deps, taskId, { status: 'failed', where: mine, error: `${step} failed: ${message}` });
        return;
      }
      if (run.controller.signal.aborted) throw new Lost();
      // The output joins the task's progress (jsonb) and the next steps' input: storable from here on.
      result.output = storableJson(result.output);
      const spent = model.spent(task.byok);
      const tokens = (result.tokens ?? 0) + spent.tokens;
      const costUsd = task.byok ? 0 : (result.costUsd ?? 0) + spent.costUsd;
      if (Object.keys(spent.output).length) result.output = { ...result.output, ...spent.output };
      const failedValidation = step === 'validator' && result.passed === false;
      await appendLog(deps, taskId, {
        step,
        status: failedValidation ? 'failed' : 'done',
        output: result.output,
        tokens,
        costUsd,
        durationMs: Math.round(performance.now() - started),
      });
      deps.metrics.stepDuration.observe({ step }, (performance.now() - started) / 1000);
      progress.outputs[step] = result.output;
      progress.next = nextOf(step);
      const set: TaskSet = {
        tokensTotal: sql`${tasks.tokensTotal} + ${tokens}`,
        costUsd: sql`${tasks.costUsd} + ${costUsd}`,
      };
      if (step === 'fixer') {
        progress.failure = undefined;
        progress.approved = { ...progress.approved, diff: false };
        if (typeof result.output.diff === 'string') set.diffSummary = truncateDiff(result.output.diff);
      }
      if (step === 'pr' && typeof result.output.pr_url === 'string') set.prUrl = result.output.pr_url;
      const retrying = failedValidation && task.retryCount < Math.min(limits.maxRetries, 2);
      if (retrying) {
        progress.failure = result.output;
        progress.next = 'fixer';
        set.retryCount = task.retryCount + 1;
      }
      await save({ ...set, progress, currentStep: null });
      if (failedValidation && !retrying && task.taskType === 'scaffold') {
        // A fix that did not pass still becomes a draft PR for a person to judge; a site that
        // did not pass is not published at all.
        await endTask(deps, taskId, {
          status: 'failed',
          where: mine,
          error: 'the site did not pass validation; see the validator step for the problems',
        });
        return;
      }
    }
    // The checkout goes before the task reports its end, so a finished task leaves nothing on disk.
    await lease.dispose();
    await endTask(deps, taskId, { status: 'done', where: mine });
  } catch (err) {
    if (err instanceof Lost || run.controller.signal.aborted) return;
    if (isDatabaseUnavailable(err)) {
      // The database restarting or unreachable is no fault of the task: it goes back to the
      // queue from its last saved step once the database answers, without counting an attempt.
      deps.log.warn({ err, task: taskId }, 'database unavailable during a run; handing the task back');
      await handBack(deps, taskId, mine, opts.staleMs);
      return;
    }
    // A fault of the engine itself (a bug): fail the task rather than leave it running.
    deps.log.error({ err, task: taskId }, 'task run failed');
    // The database's own words, not the driver's wrapper: Drizzle's message quotes the query's
    // parameters, which are the task's data and have no place in its error.
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
    await endTask(deps, taskId, {
      status: 'failed',
      where: mine,
      error: `internal error: ${cause instanceof Error ? cause.message : String(cause)}`,
    }).catch(() => {});
  } finally {
    await lease.dispose().catch((err) => deps.log.warn({ err, task: taskId }, 'could not remove the workspace'));
    deps.runs.finish(taskId, run);
  }
}

/**
 * Releases this worker's claim on a task (the attempt not counted) and queues it again,
 * retrying while the database is still away; if it stays away longer than `staleMs`, the
 * takeover of stale runs picks the task up instead.
 */
async function handBack(deps: Deps, taskId: string, mine: ReturnType<typeof and>, staleMs: number) {
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

const DIFF_SUMMARY_BYTES = 4096;

/**
 * diff_summary: the unified diff cut to 4 KB (marker included) on a line boundary, so no
 * hunk line is shown half; the marker says how much was left out.
 */
export function truncateDiff(diff: string): string {
  const total = Buffer.byteLength(diff, 'utf8');
  if (total <= DIFF_SUMMARY_BYTES) return diff;
  const marker = (shown: number) => `... diff truncated: ${shown} of ${total} bytes shown ...\n`;
  const room = DIFF_SUMMARY_BYTES - Buffer.byteLength(marker(total), 'utf8');
  const head = Buffer.from(diff, 'utf8').subarray(0, room).toString('utf8');
  const cut = head.lastIndexOf('\n');
  const kept = cut >= 0 ? head.slice(0, cut + 1) : '';
  return kept + marker(Buffer.byteLength(kept, 'utf8'));
}
