import { randomUUID } from 'node:crypto';
import { BILLING_PLANS, type BillingPlan } from '../accounts/billing-plan.js';
import type { BillingPlanName } from '../config/billing-plans.js';
import { storableJson } from '../db/storable.js';
import type { Deps } from '../deps.js';
import { stepModel } from '../engine/step-model.js';
import { mayRetry, nextOf, skipReason } from '../engine/step-policy.js';
import { ProcessSet } from '../processes/process-set.js';
import { type Progress, REWORK_STEP, type StepName, parseFixOutputs } from '../step-contract/index.js';
import { fixerStep } from '../steps/fix/fixer.js';
import { inspectorStep } from '../steps/fix/inspector.js';
import { locatorStep } from '../steps/fix/locator.js';
import { plannerStep } from '../steps/fix/planner.js';
import { validatorStep } from '../steps/fix/validator.js';
import { type FixPayload, type StepFn, type StepHelpers, type StepResult, payloadFor } from '../steps/step.js';
import type { Task } from '../tasks/service.js';
import type { Workspace } from '../workspace/checkout.js';
import type { Instance } from './dataset.js';
import type { EditOutcome } from './oracle.js';

/** One run of one step: its wall time and what its model calls used. */
export interface StepRun {
  step: StepName;
  /** The fixer round the run belongs to: 0, then 1 and 2 after failed validations. */
  round: number;
  status: 'done' | 'failed';
  ms: number;
  /** provider/model, when the step called a model. */
  model?: string;
  calls: number;
  /**
   * Answers billed but sent back: the fixer's whose edits did not all apply (or had a format
   * problem, or were cut off), a structured step's that did not match its schema.
   */
  sent_back: number;
  input_tokens: number;
  output_tokens: number;
  /** USD; null when the price table does not know the model (EMEND_MODEL_PRICES can add it). */
  cost_usd: number | null;
  error?: string;
}

/** What the fix pipeline did to one instance's checkout. */
export interface PipelineOutcome {
  /** The fixer's provider/model (else the first step's that called one). */
  model?: string;
  steps: StepRun[];
  /** The files the locator passed on (its `selected`), in rank order. */
  located: string[];
  /** The fixer's edit blocks over all its runs: applied, and the ones the applier refused. */
  edits: EditOutcome;
  /** The last validator verdict: true or false, null when it found no tests, undefined when it never ran. */
  validator?: boolean | null;
  /** What the last validator run says about its verdict: the command, its note, the counts, the new failures. */
  validation?: {
    command: string | null;
    message?: string;
    tests?: { passed: number; failed: number; skipped: number };
    new_failures: string[];
  };
  /** The step that threw, and why: the service would fail the task, and deliver no change. */
  failure?: { step: StepName; reason: string };
}

/** The service's own fix steps, as the registry runs them for a fix task (no pull request in preview mode). */
const FIX_STEPS: Partial<Record<StepName, StepFn<FixPayload, object>>> = {
  planner: plannerStep(),
  locator: locatorStep(),
  inspector: inspectorStep(),
  fixer: fixerStep(),
  validator: validatorStep(),
};

export interface PipelineContext {
  deps: Deps;
  /** The plan whose limits (files, retries) and per-task budget the run has. */
  plan: Exclude<BillingPlanName, 'demo'>;
  signal: AbortSignal;
}

/** The task the steps see: a managed preview task on the instance's repository, prompted by its problem statement. */
function evalTask(instance: Instance, baseCommit: string, deps: Deps): Task {
  const [owner, name] = instance.repo.split('/');
  const now = deps.clock.now();
  return {
    id: randomUUID(),
    accountId: '00000000-0000-4000-8000-000000000000',
    tokenId: null,
    parentId: null,
    taskType: 'fix',
    mode: 'preview',
    status: 'running',
    approvalMode: 'auto',
    prompt: instance.problem_statement,
    repoUrl: `https://github.com/${instance.repo}`,
    repoOwner: owner ?? null,
    repoName: name ?? null,
    baseBranch: baseCommit,
    prUrl: null,
    deployedUrl: null,
    deployedRepo: null,
    siteSlug: null,
    diffSummary: null,
    costUsd: 0,
    tokensTotal: 0,
    durationMs: null,
    retryCount: 0,
    prMerged: false,
    prMergedAt: null,
    humanEditAfter: false,
    byok: false,
    creditHeld: false,
    error: null,
    progress: {},
    currentStep: null,
    workerId: null,
    heartbeatAt: null,
    attempts: 1,
    gateSince: null,
    createdAt: now,
    startedAt: now,
    finishedAt: null,
  };
}

/**
 * Runs planner → locator → inspector → fixer → validator on the checkout as the engine's
 * runner does (src/engine/runner.ts, run-step.ts): the same step functions and step models,
 * the same skip rule (preview mode: no pull request), a failed validation sending the fixer
 * back with the failure while the plan's retries last, each step's output stored as the runner
 * stores it and read back through the step contract. A step that throws ends the run.
 */
export async function runPipeline(ws: Workspace, instance: Instance, ctx: PipelineContext): Promise<PipelineOutcome> {
  const { deps, signal } = ctx;
  const task = evalTask(instance, ws.baseCommit, deps);
  const limits: BillingPlan = BILLING_PLANS[ctx.plan];
  const progress: Progress = { outputs: {}, next: 'planner', approved: {}, baseCommit: ws.baseCommit };
  const processes = new ProcessSet();
  const outcome: PipelineOutcome = { steps: [], located: [], edits: { applied: 0, failures: [] } };
  try {
    while (progress.next !== 'end') {
      const step: StepName = progress.next;
      const fn = FIX_STEPS[step];
      if (skipReason(task, step, false) || !fn) {
        progress.next = nextOf(step);
        continue;
      }
      const ran = await runOne(step, fn, { task, progress, limits, processes, ws }, ctx);
      outcome.steps.push(ran.run);
      outcome.model ??= ran.run.model;
      if (step === 'fixer' && ran.run.model) outcome.model = ran.run.model;
      if (!ran.result) {
        outcome.failure = { step, reason: ran.run.error ?? 'failed' };
        return outcome;
      }
      record(outcome, step, progress, ran.result);
      if (signal.aborted) return outcome;
      advance(task, progress, step, ran.result, limits);
    }
    return outcome;
  } finally {
    await processes.killAll();
  }
}

interface RunState {
  task: Task;
  progress: Progress;
  limits: BillingPlan;
  processes: ProcessSet;
  ws: Workspace;
}

/** One step with its own metered model; the run record, and the result unless it threw. */
async function runOne(
  step: StepName,
  fn: StepFn<FixPayload, object>,
  state: RunState,
  ctx: PipelineContext,
): Promise<{ run: StepRun; result?: StepResult<object> }> {
  const { task, progress } = state;
  const rework = step === REWORK_STEP;
  const payload = payloadFor(task, progress, rework ? task.retryCount : 0, rework);
  if (payload.kind !== 'fix') throw new Error('an eval task is a fix task');
  const model = stepModel(ctx.deps, task, step, ctx.plan, ctx.signal);
  const helpers: StepHelpers = {
    deps: ctx.deps,
    signal: ctx.signal,
    spawn: state.processes.spawn,
    log: (message, data) => ctx.deps.log.debug({ task: task.id, step, ...data }, message),
    model: model.client,
    limits: state.limits,
    workspace: async () => state.ws,
  };
  const started = performance.now();
  let result: StepResult<object> | undefined;
  let error: string | undefined;
  try {
    result = await fn(payload, helpers);
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  }
  const ms = Math.round(performance.now() - started);
  const { meter } = model;
  const client = meter.calls > 0 ? await model.client().catch(() => undefined) : undefined;
  const run: StepRun = {
    step,
    round: task.retryCount,
    status: result ? 'done' : 'failed',
    ms,
    ...(client ? { model: `${client.provider}/${client.modelId}` } : {}),
    calls: meter.calls,
    sent_back: meter.malformed,
    input_tokens: meter.inputTokens,
    output_tokens: meter.outputTokens,
    cost_usd: client && client.price.matched === null ? null : meter.costUsd,
    ...(error !== undefined ? { error } : {}),
  };
  // The next steps' budget counts what this one spent, as the task's totals do.
  task.tokensTotal += meter.tokens;
  task.costUsd += meter.costUsd;
  if (result) progress.outputs[step] = { ...storableJson(result.output), ...model.spent(false).output };
  return { run, ...(result ? { result } : {}) };
}

/**
 * What the eval reads of a finished step, from its stored output through the step contract:
 * the located files, the edits, the validator's verdict.
 */
function record(outcome: PipelineOutcome, step: StepName, progress: Progress, result: StepResult<object>) {
  const outputs = parseFixOutputs(progress.outputs);
  if (step === 'locator') outcome.located = outputs.locator?.selected ?? [];
  if (step === 'fixer' && outputs.fixer) {
    outcome.edits.applied += outputs.fixer.edits_applied;
    for (const f of outputs.fixer.edits_failed)
      outcome.edits.failures.push(`apply ${f.path}: ${f.reason.split('\n')[0]}`);
  }
  if (step === 'validator') {
    outcome.validator = result.patch?.passed ?? null;
    const v = outputs.validator;
    if (v)
      outcome.validation = {
        command: v.command,
        ...(v.message !== undefined ? { message: v.message } : {}),
        ...(v.tests ? { tests: v.tests } : {}),
        new_failures: v.new_failures.slice(0, 10),
      };
  }
}

/** The runner's bookkeeping after a step (run-step.ts applyResult): the next step, and the rework on a failed validation. */
function advance(task: Task, progress: Progress, step: StepName, result: StepResult<object>, limits: BillingPlan) {
  const patch = result.patch ?? {};
  progress.next = nextOf(step);
  if (patch.changed) progress.failure = undefined;
  if (patch.passed === false && mayRetry(task.retryCount, limits)) {
    progress.failure = progress.outputs[step];
    progress.next = REWORK_STEP;
    task.retryCount += 1;
  }
}

/** The files a unified diff changes (its `diff --git` headers, else its `+++`/`---` lines), for measurement only. */
export function goldFiles(patch: string): string[] {
  const files = new Set<string>();
  for (const m of patch.matchAll(/^diff --git a\/(\S+) b\/(\S+)$/gm)) files.add(m[2]!);
  if (files.size === 0)
    for (const m of patch.matchAll(/^(?:\+\+\+|---) [ab]\/(\S+)/gm)) if (m[1] !== 'dev/null') files.add(m[1]!);
  return [...files];
}
