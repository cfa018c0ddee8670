import type { BillingPlan } from '../billing/billing-plan.js';
import type { BillingPlanName } from '../config/billing-plans.js';
import { storableJson, storableText } from '../db/storable.js';
import type { Deps } from '../deps.js';
import type { TrackedSpawn } from '../processes/process-set.js';
import {
  type Pipeline,
  type Progress,
  type StepDescriptor,
  type TaskPatch,
  outputSchemasOf,
} from '../step-contract/index.js';
import { type StepHelpers, type StepRegistry, type StepResult, payloadFor } from '../steps/step.js';
import type { Gate } from '../tasks/lifecycle/park.js';
import type { RunWrite } from '../tasks/lifecycle/save.js';
import type { Task } from '../tasks/service.js';
import type { TaskCheckout } from '../checkout/checkout.js';
import { AttemptTrees, attemptHelpers } from './attempt-helpers.js';
import { stepModel } from './step-model.js';
import { gateBefore, kindOf, mayRetry, nextOf, reworkStep, skipReason } from './step-policy.js';

export type StepModel = ReturnType<typeof stepModel>;

/** A step's record in the task's log (the runner writes it to task_logs; the eval keeps none). */
export interface StepLogEntry {
  step: string;
  status: 'running' | 'done' | 'failed' | 'skipped';
  input?: Record<string, unknown>;
  output?: Record<string, unknown>;
  tokens?: number;
  costUsd?: number;
  durationMs?: number;
}

/** What a step reports while it runs (its setup output, the agent's turns): a `running` record of that step. */
export interface StepReport {
  step: string;
  output: Record<string, unknown>;
}

/** What one step's run came to, for a driver that measures it (the eval): told once its output is in the progress. */
export interface StepRan {
  step: string;
  /** The rework round the run belongs to (the task's retry count when it started). */
  round: number;
  ms: number;
  model: StepModel;
  /** The step's result, or why it threw. */
  result?: StepResult<object>;
  error?: string;
}

/**
 * Where the loop keeps the task: the database for the runner (every write guarded on the
 * worker still holding the task), memory for the eval. The loop decides; the store records.
 */
export interface TaskStore {
  /** Writes to the task (the progress as the loop holds it when `progress` is set) and keeps `loop.task` current. */
  save(write: Omit<RunWrite, 'progress'> & { progress?: true }): Promise<void>;
  log(entry: StepLogEntry): Promise<void>;
  /**
   * A running step's own record (helpers.report): the runner appends it to the task's log as a
   * `running` row of the step, the eval keeps it in memory. Steps write no log of their own.
   */
  report(record: StepReport): Promise<void>;
  /** The task stops at a gate (nothing held while it waits). */
  park(gate: Gate): Promise<void>;
  /** The task ends: done, or failed with why. */
  end(end: { status: 'done' } | { status: 'failed'; error: string }): Promise<void>;
  /** A step threw: the store rethrows what is not the step's fault (the runner: the database away). */
  stepThrew?(err: unknown): void;
  /** What a step's run came to, before its result is applied. */
  ran?(ran: StepRan): Promise<void>;
  /**
   * A model call of the task cost `usd` (0: one is about to start): the runner records it where the
   * spend limits count it and answers the reached cap's sentence when the task must stop.
   */
  billed?(usd: number): Promise<string | undefined>;
}

/** One run of a task through its pipeline: what every step of it shares. */
export interface StepLoop {
  deps: Deps;
  /** The steps' descriptors, in order (the contract's STEPS in production). */
  pipeline: Pipeline;
  /** Each step's function by name. */
  steps: StepRegistry;
  /** The task as last saved by this run. */
  task: Task;
  progress: Progress;
  signal: AbortSignal;
  /**
   * Fired when the worker stops (SIGTERM): the loop ends before its next step, the step
   * running now finishes and its output is saved, so the task resumes after it elsewhere.
   */
  drain?: AbortSignal;
  spawn: TrackedSpawn;
  /** The task's checkout, made on first use. */
  checkout(): Promise<TaskCheckout>;
  /** The task came with a demo token: the steps after its kind's demo steps are skipped. */
  demo: boolean;
  limits: BillingPlan;
  billingPlan: BillingPlanName;
  store: TaskStore;
}

/**
 * How a loop stopped: the task done, parked at a gate, failed, or lost (aborted: killed, taken
 * over, shut down; or drained: stopped between steps for the worker to hand the task back).
 */
export type LoopEnd = 'done' | 'parked' | 'failed' | 'lost';

/**
 * Runs the task from its saved next step until it ends, stops at a gate, or is aborted: each
 * step is skipped (by its descriptor), gated, or run with its result applied. The loop knows
 * steps only through their descriptors and what they return.
 */
export async function runLoop(loop: StepLoop): Promise<LoopEnd> {
  const { progress, store } = loop;
  const { pipeline } = loop;
  while (progress.next !== 'end') {
    const step = pipeline.find((s) => s.name === progress.next);
    if (!step) throw new Error(`the pipeline has no ${progress.next} step`);
    if (loop.signal.aborted || loop.drain?.aborted) return 'lost';
    const skip = skipReason(pipeline, step, loop.task, loop.demo);
    if (skip) {
      await store.log({ step: step.name, status: 'skipped', output: { reason: skip } });
      progress.next = nextOf(pipeline, step.name);
      await store.save({ progress: true, currentStep: null });
      continue;
    }
    const gate = gateBefore(pipeline, step, loop.task, progress);
    if (gate) {
      await store.park(gate);
      return 'parked';
    }
    const ran = await runStep(loop, step);
    if (ran !== 'next') return ran;
  }
  await store.end({ status: 'done' });
  return 'done';
}

/** Runs one step and applies what it returned. */
async function runStep(loop: StepLoop, step: StepDescriptor): Promise<'next' | 'failed' | 'lost'> {
  const { deps, task, store } = loop;
  await store.save({ currentStep: step.name });
  const rework = step.rework === true;
  const retry = rework ? task.retryCount : 0;
  // A change the step that made it had judged already (its attempts): that verdict, not another run.
  const judged = step.judge ? loop.progress.judged : undefined;
  // round is the rework round the step belongs to.
  await store.log({
    step: step.name,
    status: 'running',
    input: { retry, round: task.retryCount, ...(judged ? { judged_in: judged.from } : {}) },
  });
  const started = performance.now();
  const billed = store.billed?.bind(store);
  const model = stepModel(deps, task, step.name, loop.billingPlan, loop.signal, billed);
  const fn = loop.steps[step.name];
  if (judged) {
    loop.progress.judged = undefined;
    const result = {
      output: judged.output,
      ...(judged.passed !== undefined ? { patch: { passed: judged.passed } } : {}),
    };
    const ran = { step: step.name, round: task.retryCount, ms: elapsed(started), model, result };
    return applyResult(loop, step, result, model, started, ran);
  }
  const trees = new AttemptTrees(loop);
  let result: StepResult<object>;
  try {
    if (!fn) throw new Error(`no function is registered for the ${step.name} step`);
    result = await fn(payloadFor(task, loop.progress, retry, rework), helpersFor(loop, step.name, model, trees));
  } catch (err) {
    await trees.dispose();
    if (loop.signal.aborted) return 'lost';
    const stopped = model.stopped();
    if (stopped !== undefined) {
      await stepFailed(loop, step.name, stopped, model, started, 'stopped');
      return 'failed';
    }
    store.stepThrew?.(err);
    const error = err instanceof Error ? err.message : String(err);
    await store.ran?.({ step: step.name, round: task.retryCount, ms: elapsed(started), model, error });
    await stepFailed(loop, step.name, error, model, started);
    return 'failed';
  }
  await trees.dispose();
  const ms = elapsed(started);
  if (loop.signal.aborted) return 'lost';
  // A step that caught the stop and finished anyway ends here all the same: its result is not applied.
  const stopped = model.stopped();
  if (stopped !== undefined) {
    await stepFailed(loop, step.name, stopped, model, started, 'stopped');
    return 'failed';
  }
  return applyResult(loop, step, result, model, started, {
    step: step.name,
    round: task.retryCount,
    ms,
    model,
    result,
  });
}

const elapsed = (started: number) => Math.round(performance.now() - started);

function helpersFor(loop: StepLoop, step: string, model: StepModel, trees: AttemptTrees): StepHelpers {
  const { deps } = loop;
  return {
    deps,
    signal: loop.signal,
    spawn: loop.spawn,
    log: (message, data) => deps.log.debug({ task: loop.task.id, step, ...data }, message),
    report: (output) => loop.store.report({ step, output }),
    model: model.client,
    limits: loop.limits,
    checkout: async () => {
      const checkout = await loop.checkout();
      loop.progress.baseCommit ??= checkout.baseCommit;
      return checkout;
    },
    attempt: (n, options = {}) => attemptHelpers(loop, step, model, trees, n, options),
  };
}

/**
 * A step that threw, or that a spend limit stopped: logged with what its model calls cost (the
 * task's either way), and the task fails (`<step> failed: …` or `<step> stopped: <the cap>`).
 */
async function stepFailed(
  loop: StepLoop,
  step: string,
  error: string,
  model: StepModel,
  started: number,
  how: 'failed' | 'stopped' = 'failed',
) {
  const { task, store } = loop;
  const message = storableText(error);
  const spent = model.spent(task.byok);
  await store.log({
    step,
    status: 'failed',
    output: { error: message, ...spent.output },
    tokens: spent.tokens,
    costUsd: spent.costUsd,
    durationMs: elapsed(started),
  });
  await store.save({ tokens: spent.tokens, costUsd: spent.costUsd });
  await store.end({ status: 'failed', error: `${step} ${how}: ${message}` });
}

/** The task's columns a patch sets. */
const columnsOf = (patch: TaskPatch): RunWrite => ({
  ...(patch.diffSummary !== undefined ? { diffSummary: patch.diffSummary } : {}),
  ...(patch.prUrl !== undefined ? { prUrl: patch.prUrl } : {}),
});

/**
 * Stores a step's output and applies its patch, whichever step it was: the output joins the
 * progress and the log; `changed` reopens the diff gate; `passed: false` sends the task back
 * to the rework step while retries remain, and else ends it if the step's descriptor says so.
 */
async function applyResult(
  loop: StepLoop,
  step: StepDescriptor,
  result: StepResult<object>,
  model: StepModel,
  started: number,
  ran: StepRan,
): Promise<'next' | 'failed'> {
  const { deps, task, progress, store } = loop;
  const { pipeline } = loop;
  checkContract(loop, step, result.output);
  const spent = model.spent(task.byok);
  // The output joins the task's progress (jsonb) and the next steps' input: storable from here on.
  const output = { ...storableJson(result.output), ...spent.output };
  const tokens = (result.tokens ?? 0) + spent.tokens;
  const costUsd = task.byok ? 0 : (result.costUsd ?? 0) + spent.costUsd;
  const patch = result.patch ?? {};
  const failedVerdict = patch.passed === false;
  const durationMs = elapsed(started);
  await store.log({ step: step.name, status: failedVerdict ? 'failed' : 'done', output, tokens, costUsd, durationMs });
  deps.metrics.stepDuration.observe({ step: step.name }, durationMs / 1000);
  progress.outputs[step.name] = output;
  await store.ran?.(ran);
  progress.next = nextOf(pipeline, step.name);
  const write: RunWrite = { tokens, costUsd, ...columnsOf(patch) };
  if (patch.changed) {
    progress.failure = undefined;
    progress.approved = { ...progress.approved, diff: false };
    // A new change: only a verdict given with it stands.
    progress.judged = patch.judged;
  }
  const rework = reworkStep(pipeline);
  const retrying = failedVerdict && rework !== undefined && mayRetry(task.retryCount, loop.limits);
  if (retrying) {
    progress.failure = output;
    progress.next = rework;
    write.retryCount = task.retryCount + 1;
  }
  await store.save({ ...write, progress: true, currentStep: null });
  const ends = failedVerdict && !retrying ? step.kinds[kindOf(task)] : undefined;
  if (!ends || !('failedVerdictEnds' in ends) || ends.failedVerdictEnds === undefined) return 'next';
  await store.end({ status: 'failed', error: ends.failedVerdictEnds });
  return 'failed';
}

/**
 * An output its step's contract schema does not accept is stored all the same (the run goes
 * on), but the steps after it will read it as absent: the log says so where it starts.
 */
function checkContract(loop: StepLoop, step: StepDescriptor, output: object) {
  const schema = outputSchemasOf(kindOf(loop.task), loop.pipeline)[step.name];
  if (schema && !schema.safeParse(output).success)
    loop.deps.log.warn(
      { task: loop.task.id, step: step.name },
      'step output does not match its contract; later steps ignore it',
    );
}
