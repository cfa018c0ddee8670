import type { Tx } from '../db/client.js';
import type { Deps } from '../deps.js';
import {
  type ExampleContent,
  type LessonContent,
  forgetTaskItems,
  insertMemoryItem,
  replaceTestCommand,
} from '../memory/repo-memory.js';
import type { Task } from '../tasks/service.js';
import { type FixOutputs, type ValidatorOutput, parseFixOutputs, readProgress } from '../step-contract/index.js';
import type { CurrentFeedback } from './feedback-types.js';

type Outputs = Partial<FixOutputs>;

/**
 * The step outputs the runner kept in tasks.progress of a fix task, parsed with the step
 * contract: an output that does not parse (a row from an older build) is absent.
 */
export const outputsOf = (task: Pick<Task, 'progress'>): Outputs =>
  parseFixOutputs(readProgress(task.progress).outputs);

/** The files a task touched (the fixer's), or else the ones the locator chose. */
export function filesOf(outputs: Outputs): string[] {
  const changed = outputs.fixer?.files_changed ?? [];
  if (changed.length) return changed.map((c) => c.path);
  return outputs.locator?.selected ?? [];
}

/** The diff the fixer left, or null when it made none. */
export function diffOf(outputs: Outputs): string | null {
  const diff = outputs.fixer?.diff;
  return diff?.trim() ? diff : null;
}

/**
 * Rebuilds the lesson and example a task's feedback makes, replacing whatever an earlier
 * post of feedback on the task made (so posting again never duplicates them):
 * - a lesson when the result was not (or partly) correct and the reviewer wrote a note;
 * - an example when the reviewer said to reuse a task that ended done with a diff.
 * Fix tasks on a repository only; memory stays with the task's account.
 */
export async function memoryFromFeedback(tx: Tx, now: Date, task: Task, feedback: CurrentFeedback): Promise<void> {
  if (task.taskType !== 'fix' || !task.repoUrl) return;
  await forgetTaskItems(tx, task.workspaceId, task.id, ['lesson', 'example']);
  const outputs = outputsOf(task);
  const base = { workspaceId: task.workspaceId, repo: task.repoUrl, taskId: task.id };
  if ((feedback.correct === 'no' || feedback.correct === 'partial') && feedback.note) {
    const lesson: LessonContent = {
      note: feedback.note,
      prompt: task.prompt,
      files: filesOf(outputs),
      correct: feedback.correct,
    };
    await insertMemoryItem(tx, now, { ...base, kind: 'lesson', content: lesson });
  }
  const diff = diffOf(outputs);
  if (feedback.reuse === 'yes' && task.status === 'done' && diff) {
    const plan = outputs.planner;
    const example: ExampleContent = {
      prompt: task.prompt,
      plan: plan ? { summary: plan.summary, steps: plan.steps } : null,
      diff,
    };
    await insertMemoryItem(tx, now, { ...base, kind: 'example', content: example });
  }
}

/**
 * Remembers the test command of a passing validator run when the validator found it by
 * itself (source `detected`): the next run on the repository starts from it. A command from
 * the repository's own .emend/test, or one already from memory, is not stored again.
 * Returns the new item's id, or undefined when nothing was stored.
 */
export async function rememberTestCommand(
  deps: Pick<Deps, 'db' | 'clock'>,
  task: Pick<Task, 'id' | 'workspaceId' | 'repoUrl' | 'taskType'>,
  output: ValidatorOutput,
): Promise<string | undefined> {
  if (task.taskType !== 'fix' || !task.repoUrl) return undefined;
  if (output.passed !== true || output.source !== 'detected' || !output.command?.trim()) return undefined;
  return replaceTestCommand(deps, {
    workspaceId: task.workspaceId,
    repo: task.repoUrl,
    command: output.command,
    taskId: task.id,
  });
}
