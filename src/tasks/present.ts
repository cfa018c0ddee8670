import type { Task } from './task.js';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** The columns a run changes: those the log stream's `state` event carries. */
export type TaskStateColumns = 'status' | 'prUrl' | 'costUsd' | 'tokensTotal' | 'deployedUrl' | 'error';

/**
 * The one presenter of the task object: every field of the API's task (GET /v1/tasks/{id}'s
 * `task`, webhook events' `task`) from its column, here below the HTTP layer because webhook
 * events carry the same object. The list's summary and the stream's `state` event are views of
 * it (taskSummaryJson, taskStateJson); no field is converted anywhere else.
 */
export function taskJson(t: Task) {
  const { status, pr_url, cost_usd, tokens_total, deployed_url, error } = taskStateJson(t);
  return {
    id: t.id,
    status,
    mode: t.mode,
    task_type: t.taskType,
    prompt: t.prompt,
    repo_url: t.repoUrl,
    repo_owner: t.repoOwner,
    repo_name: t.repoName,
    base_branch: t.baseBranch,
    approval_mode: t.approvalMode,
    fixer: t.fixer,
    attempts: t.fixAttempts,
    parent_id: t.parentId,
    pr_url,
    deployed_url,
    deployed_repo: t.deployedRepo,
    diff_summary: t.diffSummary,
    cost_usd,
    tokens_total,
    duration_ms: t.durationMs,
    retry_count: t.retryCount,
    pr_merged: t.prMerged,
    pr_merged_at: iso(t.prMergedAt),
    human_edit_after: t.humanEditAfter,
    byok: t.byok,
    error,
    trigger: triggerJson(t.trigger),
    created_at: t.createdAt.toISOString(),
    started_at: iso(t.startedAt),
    finished_at: iso(t.finishedAt),
  };
}

/** Where a task was asked for on the code host (its public part; the answer's bookkeeping stays inside). */
function triggerJson(t: Task['trigger']) {
  if (!t) return null;
  return {
    host: t.host,
    kind: t.kind,
    thread: t.thread,
    number: t.number,
    comment_url: t.commentUrl,
    actor: t.actor,
    ...(t.ci ? { ci: { sha: t.ci.sha, jobs: t.ci.jobs, tests: t.ci.tests, round: t.ci.round } } : {}),
  };
}

/** A task in GET /v1/tasks (TaskSummary): the task object cut to the list's fields. */
export function taskSummaryJson(t: Task) {
  const { id, prompt, status, pr_url, mode, task_type, repo_url, deployed_url, cost_usd, created_at, finished_at } =
    taskJson(t);
  return { id, prompt, status, pr_url, mode, task_type, repo_url, deployed_url, cost_usd, created_at, finished_at };
}

/**
 * The data of the log stream's `state` event (TaskStateEvent): the fields of the task object a
 * run changes, from only those columns (the stream reads no more of the row).
 */
export function taskStateJson(t: Pick<Task, TaskStateColumns>) {
  return {
    status: t.status,
    pr_url: t.prUrl,
    cost_usd: Number(t.costUsd),
    tokens_total: t.tokensTotal,
    deployed_url: t.deployedUrl,
    error: t.error,
  };
}
