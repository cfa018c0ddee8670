import { randomUUID } from 'node:crypto';
import { BILLING_PLANS } from '../billing/billing-plan.js';
import type { BillingPlanName } from '../config/billing-plans.js';
import type { FixerKind } from '../config/config.js';
import type { Deps } from '../deps.js';
import { type StepLoop, type StepRan, type StepReport, runLoop } from '../engine/step-loop.js';
import { ProcessSet } from '../processes/process-set.js';
import { type Progress, STEPS, type StepName, parseFixOutputs } from '../step-contract/index.js';
import { registryOf, stepFunctions } from '../steps/registry.js';
import type { StepResult } from '../steps/step.js';
import type { Task } from '../tasks/service.js';
import type { TaskCheckout } from '../checkout/checkout.js';
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

/** The agent fixer's conversations on one instance, from its turn records (docs/agent.md). */
export interface AgentTurns {
  /** Model turns over all its runs (a retry after a failed verdict is a new conversation). */
  turns: number;
  /** Tool calls by tool (`bash`, `editor`, `submit`; `none` for a reply that called nothing). */
  tools: Record<string, number>;
  /** Runs that ended with a submit, of the fixer's runs. */
  submitted: number;
  runs: number;
  /** The commands it ran (their first 200 characters) and how each ended: an exit code, null for a timeout or a limit. */
  commands: { command: string; exit_code: number | null }[];
  /** Editor calls refused (a passage not found, the plan's file bound): how many, and the first five with why. */
  editor_refused: number;
  refusals: { action: string; reason: string }[];
}

/** What the fix pipeline did to one instance's checkout. */
export interface PipelineOutcome {
  /** Which fixer ran. */
  fixer: FixerKind;
  /** The fixer's provider/model (else the first step's that called one). */
  model?: string;
  /** The agent fixer's turns and tool calls (`--fixer agent`). */
  agent?: AgentTurns;
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
    /** The reproduction verdict in words (what the change's own tests did), when there was one. */
    reproduction?: string;
  };
  /** The step that threw, and why: the service would fail the task, and deliver no change. */
  failure?: { step: StepName; reason: string };
  /**
   * `--attempts N`: each attempt (its temperature, verdict, size, tokens) and which was chosen,
   * and why (docs/agent.md, "Attempts"); absent for one attempt.
   */
  attempts?: {
    attempt: number;
    temperature: number;
    status: 'validated' | 'failed';
    passed: boolean | null;
    new_failures: number;
    lines: number;
    tokens: number;
    chosen: boolean;
    error?: string;
  }[];
  choice?: { attempt: number; reason: string };
}

export interface PipelineContext {
  deps: Deps;
  /** The billing plan whose limits (files, retries) and per-task budget the run has. */
  billingPlan: Exclude<BillingPlanName, 'demo'>;
  /** Which fixer the tasks run (`emend eval --fixer`). */
  fixer: FixerKind;
  /** The fixer attempts each task runs (`emend eval --attempts`, within the plan's); 1 by default. */
  attempts?: number;
  signal: AbortSignal;
}

/** The workspace an eval's tasks name: no row holds it, so the steps' reads of its keys, memory and settings find nothing. */
const EVAL_WORKSPACE_ID = '00000000-0000-4000-8000-000000000000';

/**
 * The task the steps see: a managed preview task on the instance's repository, prompted by its
 * problem statement, running the eval's fixer.
 */
function evalTask(instance: Instance, baseCommit: string, deps: Deps, fixer: FixerKind, attempts: number): Task {
  const [owner, name] = instance.repo.split('/');
  const now = deps.clock.now();
  return {
    id: randomUUID(),
    workspaceId: EVAL_WORKSPACE_ID,
    createdBy: null,
    tokenId: null,
    parentId: null,
    taskType: 'fix',
    // The task's own choice, which the fixer step reads.
    fixer,
    fixAttempts: attempts,
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
    trigger: null,
    createdAt: now,
    startedAt: now,
    finishedAt: null,
  };
}

/**
 * Runs the fix steps on the checkout through the engine's step loop (src/engine/step-loop.ts),
 * as the runner does but with the task in memory: the service's step functions (without the
 * account's memory) and step models, the same skips (preview mode: no pull request), a failed
 * validation sending the fixer back with the failure while the plan's retries last, each step's
 * output stored as the runner stores it and read back through the step contract. A step that
 * throws ends the run. The task lives in memory only: what the steps report while they run (the
 * agent's turns, setup output) is kept in the run's store and read from there.
 */
export async function runPipeline(
  checkout: TaskCheckout,
  instance: Instance,
  ctx: PipelineContext,
): Promise<PipelineOutcome> {
  const { deps, signal } = ctx;
  const task = evalTask(instance, checkout.baseCommit, deps, ctx.fixer, ctx.attempts ?? 1);
  const progress: Progress = { outputs: {}, next: 'planner', approved: {}, baseCommit: checkout.baseCommit };
  const processes = new ProcessSet();
  const outcome: PipelineOutcome = {
    fixer: ctx.fixer,
    steps: [],
    located: [],
    edits: { applied: 0, failures: [] },
  };
  // The steps' own records (helpers.report), in the order they were made.
  const reports: StepReport[] = [];
  const loop: StepLoop = {
    deps,
    pipeline: STEPS,
    steps: registryOf(stepFunctions()),
    task,
    progress,
    signal,
    spawn: processes.spawn,
    checkout: async () => checkout,
    demo: false,
    limits: BILLING_PLANS[ctx.billingPlan],
    billingPlan: ctx.billingPlan,
    store: {
      // The task's totals (the next steps' budget counts what a step spent) and retries, in memory.
      save: async (write) => {
        task.tokensTotal += write.tokens ?? 0;
        task.costUsd += write.costUsd ?? 0;
        if (write.retryCount !== undefined) task.retryCount = write.retryCount;
      },
      log: async () => {},
      report: async (record) => {
        reports.push(record);
      },
      park: async () => {
        throw new Error('an eval task has no approval gates');
      },
      end: async () => {},
      ran: async (ran) => {
        const run = await stepRun(ran);
        outcome.steps.push(run);
        outcome.model ??= run.model;
        if (ran.step === 'fixer' && run.model) outcome.model = run.model;
        if (ran.result) record(outcome, ran.step, progress, ran.result);
        else outcome.failure = { step: ran.step as StepName, reason: ran.error ?? 'failed' };
      },
    },
  };
  try {
    await runLoop(loop);
    if (ctx.fixer === 'agent') outcome.agent = agentTurns(reports, outcome.steps);
    return outcome;
  } finally {
    await processes.killAll();
  }
}

/** The agent fixer's turns (its model calls) and its tool calls (its turn records, reported by step `fixer`). */
function agentTurns(reports: StepReport[], steps: StepRun[]): AgentTurns {
  const rows = reports.filter((r) => r.step === 'fixer');
  const tools: Record<string, number> = {};
  const commands: AgentTurns['commands'] = [];
  const refusals: AgentTurns['refusals'] = [];
  let refused = 0;
  for (const { output } of rows) {
    const record = output.agent_turn as
      | { tool?: unknown; action?: unknown; exit_code?: unknown; ok?: unknown; observation?: unknown }
      | undefined;
    if (!record) continue;
    const tool = String(record.tool);
    tools[tool] = (tools[tool] ?? 0) + 1;
    if (tool === 'editor' && record.ok === false) {
      refused++;
      if (refusals.length < 5)
        refusals.push({ action: String(record.action), reason: String(record.observation).slice(0, 300) });
    }
    if (tool === 'bash')
      commands.push({
        command: String(record.action).slice(0, 200),
        exit_code: typeof record.exit_code === 'number' ? record.exit_code : null,
      });
  }
  // One model call per turn; a turn may call several tools.
  const fixer = steps.filter((s) => s.step === 'fixer');
  return {
    turns: fixer.reduce((n, s) => n + s.calls, 0),
    tools,
    submitted: tools.submit ?? 0,
    runs: fixer.length,
    commands,
    editor_refused: refused,
    refusals,
  };
}

/** One step's run as the eval reports it: its time, its model and what its calls used. */
async function stepRun({ step, round, ms, model, result, error }: StepRan): Promise<StepRun> {
  const { meter } = model;
  const client = meter.calls > 0 ? await model.client().catch(() => undefined) : undefined;
  return {
    step: step as StepName,
    round,
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
}

/**
 * What the eval reads of a finished step, from its stored output through the step contract:
 * the located files, the edits, the validator's verdict.
 */
function record(outcome: PipelineOutcome, step: string, progress: Progress, result: StepResult<object>) {
  const outputs = parseFixOutputs(progress.outputs);
  if (step === 'locator') outcome.located = outputs.locator?.selected ?? [];
  if (step === 'fixer' && outputs.fixer) {
    outcome.edits.applied += outputs.fixer.edits_applied;
    for (const f of outputs.fixer.edits_failed)
      outcome.edits.failures.push(`apply ${f.path}: ${f.reason.split('\n')[0]}`);
    const { attempts, choice } = outputs.fixer;
    if (attempts && choice) {
      outcome.attempts = attempts.map((a) => ({
        attempt: a.attempt,
        temperature: a.temperature,
        status: a.status,
        passed: a.passed,
        new_failures: a.new_failure_count,
        lines: a.lines_added + a.lines_removed,
        tokens: a.tokens,
        chosen: a.chosen,
        ...(a.error !== undefined ? { error: a.error } : {}),
      }));
      outcome.choice = choice;
    }
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
        ...(v.reproduction ? { reproduction: v.reproduction.note } : {}),
      };
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
