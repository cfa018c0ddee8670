import { type SQL, sql } from 'drizzle-orm';
import type { BillingPlan } from '../accounts/billing-plan.js';
import type { BillingPlanName } from '../config/billing-plans.js';
import { tasks } from '../db/schema.js';
import { storableJson, storableText } from '../db/storable.js';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import type { Deps } from '../deps.js';
import type { ProcessSet } from '../processes/process-set.js';
import { OUTPUT_SCHEMAS, type Progress, REWORK_STEP, type StepName, type TaskPatch } from '../step-contract/index.js';
import { type StepHelpers, type StepRegistry, type StepResult, payloadFor } from '../steps/step.js';
import { endTask } from '../tasks/lifecycle/end.js';
import type { Task } from '../tasks/service.js';
import { appendLog } from '../tasks/task-logs.js';
import type { TaskSet } from '../tasks/transitions.js';
import { stepModel } from './step-model.js';
import { mayRetry, nextOf } from './step-policy.js';
import type { WorkspaceLease } from './workspace-lease.js';

/** The run lost its task (killed, taken over): the rest of the run does nothing. */
export class Lost extends Error {}

/** One claim's run of a task: what every step of it shares. */
export interface TaskRun {
  deps: Deps;
  steps: StepRegistry;
  taskId: string;
  /** The task row as last saved by this run. */
  task: Task;
  progress: Progress;
  /** Guards every write on this worker still owning the task. */
  mine: SQL | undefined;
  signal: AbortSignal;
  processes: ProcessSet;
  lease: WorkspaceLease;
  /** The task came with a demo token: demo limits, and the steps after the demo stages skipped. */
  demo: boolean;
  limits: BillingPlan;
  budget: BillingPlanName;
  /** What the running log record says about who ran the step. */
  claimLog: { attempt: number; worker: string; claim: string };
  /** Writes to the task if this worker still owns it (and keeps the row), else throws Lost. */
  save(set: TaskSet): Promise<void>;
}

type StepModel = ReturnType<typeof stepModel>;

/** Runs one step and applies what it returned; 'ended' when it ended the task. */
export async function runStep(run: TaskRun, step: StepName): Promise<'next' | 'ended'> {
  const { deps, task } = run;
  await run.save({ currentStep: step });
  const rework = step === REWORK_STEP;
  const retry = rework ? task.retryCount : 0;
  // Which claim ran the step (its id, attempt and worker), so a step run twice by one claim,
  // or by two claims at once, shows in the log; round is the fixer round the step belongs to.
  await appendLog(deps, run.taskId, {
    step,
    status: 'running',
    input: { retry, round: task.retryCount, ...run.claimLog },
  });
  const started = performance.now();
  const model = stepModel(deps, task, step, run.budget, run.signal);
  let result: StepResult<object>;
  try {
    result = await run.steps[step](payloadFor(task, run.progress, retry, rework), helpersFor(run, step, model));
  } catch (err) {
    if (run.signal.aborted) throw new Lost();
    // The database going away is not the step's failure: the run is handed back.
    if (isDatabaseUnavailable(err)) throw err;
    await stepFailed(run, step, err, model, started);
    return 'ended';
  }
  if (run.signal.aborted) throw new Lost();
  return applyResult(run, step, result, model, started);
}

function helpersFor(run: TaskRun, step: StepName, model: StepModel): StepHelpers {
  const { deps } = run;
  return {
    deps,
    signal: run.signal,
    spawn: run.processes.spawn,
    log: (message, data) => deps.log.debug({ task: run.taskId, step, ...data }, message),
    model: model.client,
    limits: run.limits,
    workspace: async () => {
      const ws = await run.lease.get();
      run.progress.baseCommit ??= ws.baseCommit;
      return ws;
    },
  };
}

/** A step that threw: logged with what its model calls cost (the task's either way), and the task fails. */
async function stepFailed(run: TaskRun, step: StepName, err: unknown, model: StepModel, started: number) {
  const { deps, task } = run;
  const message = storableText(err instanceof Error ? err.message : String(err));
  const spent = model.spent(task.byok);
  await appendLog(deps, run.taskId, {
    step,
    status: 'failed',
    output: { error: message, ...spent.output },
    tokens: spent.tokens,
    costUsd: spent.costUsd,
    durationMs: Math.round(performance.now() - started),
  });
  await run.save({
    tokensTotal: sql`${tasks.tokensTotal} + ${spent.tokens}`,
    costUsd: sql`${tasks.costUsd} + ${spent.costUsd}`,
  });
  await run.lease.dispose();
  await endTask(deps, run.taskId, { status: 'failed', where: run.mine, error: `${step} failed: ${message}` });
}

/** The task's columns a patch sets. */
const columnsOf = (patch: TaskPatch): TaskSet => ({
  ...(patch.diffSummary !== undefined ? { diffSummary: patch.diffSummary } : {}),
  ...(patch.prUrl !== undefined ? { prUrl: patch.prUrl } : {}),
});

/**
 * Stores a step's output and applies its patch, whichever step it was: the output joins the
 * progress and the log; `changed` reopens the diff gate; `passed: false` sends the task back
 * to the rework step while retries remain.
 */
async function applyResult(
  run: TaskRun,
  step: StepName,
  result: StepResult<object>,
  model: StepModel,
  started: number,
): Promise<'next' | 'ended'> {
  const { deps, task, progress } = run;
  checkContract(run, step, result.output);
  const spent = model.spent(task.byok);
  // The output joins the task's progress (jsonb) and the next steps' input: storable from here on.
  const output = { ...storableJson(result.output), ...spent.output };
  const tokens = (result.tokens ?? 0) + spent.tokens;
  const costUsd = task.byok ? 0 : (result.costUsd ?? 0) + spent.costUsd;
  const patch = result.patch ?? {};
  const failedValidation = patch.passed === false;
  const durationMs = Math.round(performance.now() - started);
  await appendLog(deps, run.taskId, {
    step,
    status: failedValidation ? 'failed' : 'done',
    output,
    tokens,
    costUsd,
    durationMs,
  });
  deps.metrics.stepDuration.observe({ step }, durationMs / 1000);
  progress.outputs[step] = output;
  progress.next = nextOf(step);
  const set: TaskSet = {
    tokensTotal: sql`${tasks.tokensTotal} + ${tokens}`,
    costUsd: sql`${tasks.costUsd} + ${costUsd}`,
    ...columnsOf(patch),
  };
  if (patch.changed) {
    progress.failure = undefined;
    progress.approved = { ...progress.approved, diff: false };
  }
  const retrying = failedValidation && mayRetry(task.retryCount, run.limits);
  if (retrying) {
    progress.failure = output;
    progress.next = REWORK_STEP;
    set.retryCount = task.retryCount + 1;
  }
  await run.save({ ...set, progress, currentStep: null });
  if (!failedValidation || retrying || task.taskType !== 'scaffold') return 'next';
  // A fix that did not pass still becomes a draft PR for a person to judge; a site that
  // did not pass is not published at all.
  await endTask(deps, run.taskId, {
    status: 'failed',
    where: run.mine,
    error: 'the site did not pass validation; see the validator step for the problems',
  });
  return 'ended';
}

/**
 * An output its step's contract schema does not accept is stored all the same (the run goes
 * on), but the steps after it will read it as absent: the log says so where it starts.
 */
function checkContract(run: TaskRun, step: StepName, output: object) {
  const kind = run.task.taskType === 'scaffold' ? 'scaffold' : 'fix';
  const schemas: Partial<Record<StepName, { safeParse(v: unknown): { success: boolean } }>> = OUTPUT_SCHEMAS[kind];
  const schema = schemas[step];
  if (schema && !schema.safeParse(output).success)
    run.deps.log.warn({ task: run.taskId, step }, 'step output does not match its contract; later steps ignore it');
}
