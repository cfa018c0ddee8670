import type { z } from 'zod';

/** The kinds of task, whose steps produce different outputs (a site's plan is not a fix's plan). */
export const TASK_KINDS = ['fix', 'scaffold'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

/** The approvals a manual task waits for (tasks.status `awaiting_<approval>`, progress.approved). */
export type Approval = 'plan' | 'diff';

/** How one kind of task runs a step. */
export interface StepForKind {
  /** What the step produces for this kind: stored in the progress, parsed by the steps after it. */
  output: z.ZodType;
  /** The output's name among the OpenAPI document's components (the panel's types come from it). */
  component: string;
  /** Demo tokens run the step for this kind; they stop after the last such step. */
  demo?: true;
  /**
   * A failed verdict of the step, once no retry is left, ends the task (failed, with these
   * words); without it the task goes on (a fix that did not pass still becomes a draft PR).
   */
  failedVerdictEnds?: string;
}

/** A kind of task that does not run the step: the skip's reason, as the log shows it. */
export interface SkippedByKind {
  skip: string;
}

/**
 * Everything the service knows about a step apart from its function: the runner, the eval, the
 * OpenAPI document and the panel read it here, and never test a step's name.
 */
export interface StepDescriptor {
  /** The step's name in progress, logs and the API; its place is its index in the pipeline. */
  name: string;
  /** Every kind of task, running the step (with its output) or skipping it (with why). */
  kinds: { readonly [K in TaskKind]: StepForKind | SkippedByKind };
  /** The step calls a model (chosen per step, EMEND_MODEL_TEMPERATURE_<STEP>); the others are refused one. */
  model: boolean;
  /** Why a preview task skips the step; absent when preview tasks run it. */
  skippedInPreview?: string;
  /** A failed verdict of a later step sends the task back here while retries remain, with the failure. */
  rework?: true;
  /**
   * The step judges the change (its verdict is what sends the task back to the rework step). A
   * change already judged in the step that made it (its attempts, docs/agent.md "Attempts"; the
   * TaskPatch's `judged`) is not judged again: the loop takes that verdict as this step's result.
   */
  judge?: true;
  /** A manual task stops after this step, before any later one, until its output is approved. */
  gateAfter?: Approval;
  /** A manual task stops before this step until this approval is given (again after a change). */
  gateBefore?: Approval;
}

/** The steps a task runs, in order: the contract's STEPS, or (in tests) a pipeline with a step added. */
export type Pipeline = readonly StepDescriptor[];

export const runsFor = (step: StepDescriptor, kind: TaskKind): StepForKind | undefined => {
  const entry = step.kinds[kind];
  return 'output' in entry ? entry : undefined;
};

/** How a skip reason names a kind of task: the fix task is the default and says nothing. */
export const KIND_PHRASE: Record<TaskKind, string> = { fix: '', scaffold: ' for scaffold tasks' };
