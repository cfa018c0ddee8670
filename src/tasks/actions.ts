import type { Within } from '../db/client.js';
import { taskLogs } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { DIFF_GATED_STEP, type Progress, REUSED_STEPS, parseFixOutputs, readProgress } from '../step-contract/index.js';
import { AppError } from '../errors.js';
import { CHANNELS } from '../events/bus.js';
import type { AuthContext } from '../accounts/authenticate.js';
import { loginOn } from '../workspaces/scm-connection.js';
import { hostOfUrl } from '../scm/hosts.js';
import { admitTask, insertAdmitted } from './lifecycle/admit.js';
import { endTask } from './lifecycle/end.js';
import { resumeTask } from './lifecycle/resume.js';
import { type CreateOptions, type Task, getOwnTask, spendNoticed } from './service.js';

/**
 * Force-stops a pending, running or waiting task: cancelled, credit released, `within` run, in one
 * transaction; then, once that has committed, the run is aborted and its processes killed before
 * this returns when it runs in this process, and told by NOTIFY when it runs elsewhere.
 */
export async function killTask(deps: Deps, workspaceId: string, taskId: string, within?: Within<Task>): Promise<Task> {
  const existing = await getOwnTask(deps, workspaceId, taskId);
  const killed = await endTask(deps, taskId, { status: 'cancelled', error: 'killed by the caller', within });
  if (!killed)
    throw new AppError(
      'conflict',
      `task ${taskId} has already finished (${existing.status}); only pending, running or waiting tasks can be killed`,
    );
  await deps.runs.abort(taskId, 'killed by the caller');
  await deps.events.publish(CHANNELS.taskKill, taskId).catch(() => {});
  return killed;
}

export type Stage = 'plan' | 'diff';

/** Resumes a task waiting at a gate; an edited plan replaces the planner's output. */
export async function approveTask(
  deps: Deps,
  workspaceId: string,
  taskId: string,
  stage: Stage,
  plan?: Record<string, unknown>,
  /** Run in the transaction that resumes the task (its audit row); the run is queued after. */
  within?: Within<Task>,
): Promise<Task> {
  const task = await getOwnTask(deps, workspaceId, taskId);
  const waiting = stage === 'plan' ? 'awaiting_plan' : 'awaiting_diff';
  if (task.status !== waiting) {
    throw new AppError('conflict', `task ${taskId} is ${task.status}, not waiting for ${stage} approval`);
  }
  if (plan !== undefined && stage !== 'plan')
    throw new AppError('bad_request', 'plan: an edited plan can only come with stage "plan"');
  const progress = readProgress(task.progress);
  const outputs = plan ? withEditedPlan(task, progress, plan) : progress.outputs;
  const next: Progress = { ...progress, outputs, approved: { ...progress.approved, [stage]: true } };
  const resumed = await resumeTask(deps, taskId, waiting, next, within);
  if (!resumed) throw new AppError('conflict', `task ${taskId} is no longer waiting for ${stage} approval`);
  return resumed;
}

/**
 * The outputs with the reviewer's edit of the plan over the planner's. Only a fix plan is
 * edited here: its fields are the ones the route takes; a site plan has other fields.
 */
function withEditedPlan(task: Task, progress: Progress, plan: Record<string, unknown>) {
  if (task.taskType !== 'fix')
    throw new AppError(
      'bad_request',
      `plan: only a fix task's plan can be edited; approve a ${task.taskType} plan as it is`,
    );
  const planner = parseFixOutputs(progress.outputs).planner;
  return { ...progress.outputs, planner: { ...planner, ...plan, edited_by_reviewer: true } };
}

/**
 * The caller's preview that may be continued: not a demo token's, a fix task (a scaffold run
 * opens no pull request), in preview mode and done; and the account must be connected to the
 * code host, which the child's pr step pushes and opens the pull request with. All checked
 * before anything is held or created: the task's own state (409) before the account's (412).
 */
async function continuablePreview(deps: Deps, auth: AuthContext, taskId: string): Promise<Task> {
  if (auth.tokenKind === 'demo') {
    throw new AppError(
      'DEMO_LIMIT_REACHED',
      'demo tokens cannot promote a preview to a pull request; sign up for a full account',
    );
  }
  const parent = await getOwnTask(deps, auth.workspace.id, taskId);
  if (parent.taskType !== 'fix') {
    throw new AppError(
      'conflict',
      `only a fix task can be continued; a ${parent.taskType} task opens no pull request (deploy its site ` +
        'with POST /v1/tasks/{id}/deploy-git)',
    );
  }
  if (parent.mode !== 'preview' || parent.status !== 'done') {
    throw new AppError(
      'conflict',
      `only a preview task that is done can be continued; this one is a ${parent.mode} task, ${parent.status}`,
    );
  }
  const host = parent.repoUrl ? hostOfUrl(deps.config, parent.repoUrl)?.host : undefined;
  if (!host || !(await loginOn(deps, auth.workspace.id, host))) {
    throw new AppError(
      'scm_not_connected',
      `the continued run pushes a branch and opens a ${host?.kind.pullNoun ?? 'pull request'} as you: connect ` +
        `your account on ${host?.id ?? 'the code host'} first (POST /v1/me/scm)`,
    );
  }
  return parent;
}

/** The child's columns taken from its parent: same prompt, repository, branch and diff. */
const inherited = (parent: Task) => ({
  parentId: parent.id,
  taskType: parent.taskType,
  approvalMode: parent.approvalMode,
  prompt: parent.prompt,
  repoUrl: parent.repoUrl,
  repoOwner: parent.repoOwner,
  repoName: parent.repoName,
  baseBranch: parent.baseBranch,
  diffSummary: parent.diffSummary,
});

/**
 * Promotes a finished preview to a full run: a child task in pr mode that starts from the
 * parent's plan, located files, insights and diff, so it runs the validator and opens the PR.
 */
export async function continueTask(
  deps: Deps,
  auth: AuthContext,
  taskId: string,
  options: CreateOptions = {},
): Promise<Task> {
  const parent = await continuablePreview(deps, auth, taskId);
  // Copied as stored: the child's run parses them with the contract when it reads them.
  const parentOutputs = readProgress(parent.progress).outputs;
  const reused = REUSED_STEPS.flatMap((step) => {
    const output = parentOutputs[step];
    return output ? [{ step, output }] : [];
  });
  const outputs = Object.fromEntries(reused.map((r) => [r.step, r.output]));
  const next = REUSED_STEPS.find((s) => !outputs[s]) ?? DIFF_GATED_STEP;
  const now = deps.clock.now();
  const child = await deps.db.transaction(async (tx) => {
    const who = { workspaceId: auth.workspace.id, accountId: auth.account.id, tokenId: auth.tokenId, isDemo: false };
    const admission = await admitTask(tx, who, 'continue', now);
    const progress: Progress = { outputs, next, approved: { plan: true } };
    // The parent's fixer, unless the plan no longer offers it (the default every plan has, then).
    const fixer = admission.limits.fixers.includes(parent.fixer) ? parent.fixer : 'pipeline';
    // The parent's attempts, as its plan now allows: the child keeps the chosen diff and runs no
    // attempts of its own; a retry after its validation runs one fixer (docs/agent.md, "Attempts").
    const fixAttempts = Math.min(parent.fixAttempts, admission.limits.maxAttempts);
    const row = await insertAdmitted(tx, who, admission, { ...inherited(parent), fixer, fixAttempts, progress }, now);
    // The reused steps show in the child's log, with the parent's outputs.
    for (const { step, output } of reused) {
      await tx.insert(taskLogs).values({
        taskId: row.id,
        step,
        status: 'done',
        input: { reused_from: parent.id },
        output,
        createdAt: now,
      });
    }
    await options.within?.(tx, row);
    return row;
  });
  if (child.creditHeld) await spendNoticed(deps, child);
  await deps.queue.enqueue(child.id);
  return child;
}
