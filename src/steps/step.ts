import type { Deps } from '../deps.js';
import type { ModelClient } from '../llm/client.js';
import type { BillingPlan } from '../billing/billing-plan.js';
import type { Task } from '../tasks/service.js';
import type { TaskCheckout } from '../checkout/checkout.js';
import type { TrackedSpawn } from '../processes/process-set.js';
import {
  type FixOutputs,
  type Progress,
  type SiteOutputs,
  SiteValidatorOutput,
  type StepOutput,
  type TaskPatch,
  ValidatorOutput,
  parseFixOutputs,
  parseSiteOutputs,
} from '../step-contract/index.js';

/** The payload's parts every step gets, whatever the kind of task. */
interface PayloadBase {
  task: Task;
  /** 0 on the first fixer run, then 1, 2 on retries. */
  retry: number;
}

/** A fix task's payload: the outputs of the steps finished so far (after resume too), as the contract types them. */
export interface FixPayload extends PayloadBase {
  kind: 'fix';
  outputs: Partial<FixOutputs>;
  /** For the fixer on a retry: the validator output that did not pass. */
  failure?: ValidatorOutput;
}

/** A scaffold task's payload: the site's steps produce their own outputs. */
export interface SitePayload extends PayloadBase {
  kind: 'scaffold';
  outputs: Partial<SiteOutputs>;
  /** For the site fixer on a retry: the site validator output that did not pass. */
  failure?: SiteValidatorOutput;
}

export type StepPayload = FixPayload | SitePayload;

/** What a step returns: its output (persisted, shown in the log), what to change on the task, and what it cost. */
export interface StepResult<O extends object = StepOutput> {
  output: O;
  patch?: TaskPatch;
  tokens?: number;
  costUsd?: number;
}

export interface StepHelpers {
  deps: Deps;
  /** Aborted when the task is killed; pass it to model calls and child processes. */
  signal: AbortSignal;
  /** Progress notes from inside a step (debug log, tagged with the task and step). */
  log(message: string, data?: Record<string, unknown>): void;
  /**
   * A record of the step's progress for the task's log and its live stream (the runner's store
   * appends it as a `running` row of this step, the eval's keeps it). Resolves once recorded:
   * a step that chains its reports keeps them in order, and waits for the last before it returns.
   */
  report(output: Record<string, unknown>): Promise<void>;
  /** Starts a child process that a kill ends with its whole process group. */
  spawn: TrackedSpawn;
  /**
   * The task's checkout of its base branch (fix tasks), made on first use and removed when
   * the run ends; on a resumed run it carries the fixer's diff again.
   */
  checkout(): Promise<TaskCheckout>;
  /**
   * The model this step calls, chosen for the task (its BYOK key or the operator's), with
   * the task's budget and the step's meter: whatever it spends is added to the task even
   * when the step fails. Throws NoModelKey when the task has no usable key.
   */
  model(): Promise<ModelClient>;
  /** Limits of the task's plan (demo tokens have their own). */
  limits: BillingPlan;
  /**
   * Helpers for attempt `n` (1, 2, …) of this step, run beside the others (docs/agent.md,
   * "Attempts"): its own checkout, a copy of the task's at the base commit (made on first use,
   * removed when the step ends); its own model client at `temperature` (default: the step's),
   * whose calls count as the step's for the task's cost, budget and spend limits; its reports
   * tagged `attempt: n`. The rest is the step's: a kill stops every attempt.
   */
  attempt(n: number, options?: { temperature?: number }): AttemptHelpers;
}

/** One attempt's helpers: a step's, with what its own model calls have used so far. */
export interface AttemptHelpers extends StepHelpers {
  spent(): { tokens: number; costUsd: number };
}

export type StepFn<P extends StepPayload = StepPayload, O extends object = StepOutput> = (
  payload: P,
  helpers: StepHelpers,
) => Promise<StepResult<O>>;
/** A step of fix tasks, returning that step's output. */
export type FixStep<S extends keyof FixOutputs> = StepFn<FixPayload, FixOutputs[S]>;
/** A step of scaffold tasks, returning that step's output. */
export type SiteStep<S extends keyof SiteOutputs> = StepFn<SitePayload, SiteOutputs[S]>;
/**
 * What the runner runs, by name: any step of either kind. The runner stores an output without
 * reading it (the steps that read it parse it with the contract), so the registry asks only
 * for an object; the real steps are declared as FixStep or SiteStep of their own output.
 */
export type RegistryStep = StepFn<StepPayload, object>;
/**
 * What the runner runs, by name: a function for each step of the pipeline it drives (the
 * contract's STEPS unless the worker is given another: a test's pipeline with a step added).
 */
export type StepRegistry<N extends string = string> = Record<N, RegistryStep>;

/**
 * The payload for a step from the task and its stored progress: the outputs and the failure
 * are parsed with the contract's schemas for the task's kind (what does not parse is absent).
 */
export function payloadFor(task: Task, progress: Progress, retry: number, withFailure: boolean): StepPayload {
  const failure = withFailure ? progress.failure : undefined;
  if (task.taskType === 'scaffold')
    return {
      kind: 'scaffold',
      task,
      retry,
      outputs: parseSiteOutputs(progress.outputs),
      failure: SiteValidatorOutput.optional().catch(undefined).parse(failure),
    };
  return {
    kind: 'fix',
    task,
    retry,
    outputs: parseFixOutputs(progress.outputs),
    failure: ValidatorOutput.optional().catch(undefined).parse(failure),
  };
}
