import type { Deps } from '../deps.js';
import type { ModelClient } from '../llm/client.js';
import type { PlanLimits } from '../accounts/plans.js';
import type { Task } from '../tasks/service.js';
import type { Workspace } from '../workspace/checkout.js';
import type { TrackedSpawn } from '../processes/process-set.js';

export const PIPELINE = ['planner', 'locator', 'inspector', 'fixer', 'validator', 'pr'] as const;
export type StepName = (typeof PIPELINE)[number];

/** What a step returns: its output (persisted, shown in the log), and what it cost. */
export interface StepResult {
  output: Record<string, unknown>;
  tokens?: number;
  costUsd?: number;
  /** For the validator: false when the change did not pass; the runner may re-run the fixer. */
  passed?: boolean;
}

export interface StepPayload {
  task: Task;
  /** Outputs of the steps finished so far (after resume too). */
  outputs: Partial<Record<StepName, Record<string, unknown>>>;
  /** For the fixer on a retry: the validator output that failed. */
  failure?: Record<string, unknown>;
  /** 0 on the first fixer run, then 1, 2 on retries. */
  retry: number;
}

export interface StepHelpers {
  deps: Deps;
  /** Aborted when the task is killed; pass it to model calls and child processes. */
  signal: AbortSignal;
  /** Progress notes from inside a step (debug log, tagged with the task and step). */
  log(message: string, data?: Record<string, unknown>): void;
  /** Starts a child process that a kill ends with its whole process group. */
  spawn: TrackedSpawn;
  /**
   * The task's checkout of its base branch (fix tasks), made on first use and removed when
   * the run ends; on a resumed run it carries the fixer's diff again.
   */
  workspace(): Promise<Workspace>;
  /**
   * The model this step calls, chosen for the task (its BYOK key or the operator's), with
   * the task's budget and the step's meter: whatever it spends is added to the task even
   * when the step fails. Throws NoModelKey when the task has no usable key.
   */
  model(): Promise<ModelClient>;
  /** Limits of the task's plan (demo tokens have their own). */
  limits: PlanLimits;
}

export type StepFn = (payload: StepPayload, helpers: StepHelpers) => Promise<StepResult>;
export type StepRegistry = Record<StepName, StepFn>;
