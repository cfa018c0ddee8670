import type { JudgedChange } from './progress.js';

/**
 * What a step asks the runner to change on the task besides storing its output. The runner
 * applies it as it is, whichever step returned it: it knows steps only through this contract.
 */
export interface TaskPatch {
  /**
   * The step changed the task's files: the diff gate must be passed again and the last
   * validation failure has been answered.
   */
  changed?: true;
  /** The change in a few kilobytes, shown with the task (tasks.diff_summary). */
  diffSummary?: string;
  /** The pull request the step opened (tasks.pr_url). */
  prUrl?: string;
  /** The step's verdict on the change: false sends the task back to REWORK_STEP while retries remain. */
  passed?: boolean;
  /**
   * With `changed`: the new change was judged already, in this step's run, by the judging step's
   * function (each of a fixer's attempts is validated to choose one; docs/agent.md, "Attempts").
   * The judging step takes this as its result when the task comes to it, instead of running again.
   */
  judged?: JudgedChange;
}
