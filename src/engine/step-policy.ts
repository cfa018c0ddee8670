import { DEMO_STAGES, type BillingPlan } from '../accounts/billing-plan.js';
import { type Progress, STEP_NAMES, type StepName } from '../step-contract/index.js';
import type { Gate } from '../tasks/lifecycle/park.js';
import type { Task } from '../tasks/service.js';

/** The step after this one in the pipeline, or the end. */
export const nextOf = (step: StepName): StepName | 'end' => STEP_NAMES[STEP_NAMES.indexOf(step) + 1] ?? 'end';

/** Whether a failed validation sends the task back to the rework step: at most two retries, fewer if the plan says so. */
export const mayRetry = (retryCount: number, limits: Pick<BillingPlan, 'maxRetries'>): boolean =>
  retryCount < Math.min(limits.maxRetries, 2);

/** Why a step does not run for this task, or undefined when it does. */
export function skipReason(task: Task, step: StepName, demo: boolean): string | undefined {
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
export function gateBefore(task: Task, step: StepName, progress: Progress): Gate | undefined {
  if (task.approvalMode !== 'manual') return undefined;
  if (step !== 'planner' && progress.outputs.planner && !progress.approved.plan) return 'awaiting_plan';
  if (step === 'validator' && !progress.approved.diff) return 'awaiting_diff';
  return undefined;
}
