import {
  KIND_PHRASE,
  type Pipeline,
  type Progress,
  type StepDescriptor,
  type TaskKind,
  demoSteps,
  runsFor,
} from '../step-contract/index.js';
import type { Gate } from '../tasks/lifecycle/park.js';
import type { Task } from '../tasks/service.js';

/** The kind of task, as the step descriptors know it. */
export const kindOf = (task: Pick<Task, 'taskType'>): TaskKind => (task.taskType === 'scaffold' ? 'scaffold' : 'fix');

/** The step after this one in the pipeline, or the end. */
export const nextOf = (pipeline: Pipeline, step: string): string =>
  pipeline[pipeline.findIndex((s) => s.name === step) + 1]?.name ?? 'end';

/** Whether a failed verdict sends the task back to the rework step (one rule, in the step contract). */
export { mayRetry } from '../step-contract/retries.js';

/** The step a failed verdict sends the task back to, if the pipeline has one. */
export const reworkStep = (pipeline: Pipeline): string | undefined => pipeline.find((s) => s.rework)?.name;

/**
 * Why a step does not run for this task, or undefined when it does: its kind of task skips it,
 * a demo token stops after its kind's demo steps, a preview skips what it must not do.
 */
export function skipReason(pipeline: Pipeline, step: StepDescriptor, task: Task, demo: boolean): string | undefined {
  const kind = kindOf(task);
  const entry = step.kinds[kind];
  if ('skip' in entry) return entry.skip;
  if (demo && !entry.demo) {
    const last = demoSteps(kind, pipeline).at(-1);
    return `demo tokens stop after the ${last}${KIND_PHRASE[kind]}`;
  }
  if (step.skippedInPreview && task.mode === 'preview') return step.skippedInPreview;
  return undefined;
}

/**
 * The gate in front of a step, if any: a step whose output awaits approval (gateAfter) stops
 * every later step; a step may wait for an approval itself (gateBefore). Checked before the
 * step (not after the one before), so a worker dying between the two cannot slip past a gate.
 */
export function gateBefore(pipeline: Pipeline, step: StepDescriptor, task: Task, progress: Progress): Gate | undefined {
  if (task.approvalMode !== 'manual') return undefined;
  for (const earlier of pipeline) {
    const approval = earlier.gateAfter;
    if (approval && earlier !== step && progress.outputs[earlier.name] && !progress.approved[approval])
      return `awaiting_${approval}`;
  }
  if (step.gateBefore && !progress.approved[step.gateBefore]) return `awaiting_${step.gateBefore}`;
  return undefined;
}

/** The descriptor of a kind's output for a step, when the kind runs it. */
export const outputOf = (step: StepDescriptor, task: Task) => runsFor(step, kindOf(task));
