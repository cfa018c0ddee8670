import type { Task } from './task.js';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/**
 * The task object of the API (GET /v1/tasks/{id}'s `task`), here below the HTTP layer because
 * webhook events carry the same object.
 */
export function taskJson(t: Task) {
  return {
    id: t.id,
    status: t.status,
    mode: t.mode,
    task_type: t.taskType,
    prompt: t.prompt,
    repo_url: t.repoUrl,
    repo_owner: t.repoOwner,
    repo_name: t.repoName,
    base_branch: t.baseBranch,
    approval_mode: t.approvalMode,
    parent_id: t.parentId,
    pr_url: t.prUrl,
    deployed_url: t.deployedUrl,
    deployed_repo: t.deployedRepo,
    diff_summary: t.diffSummary,
    cost_usd: Number(t.costUsd),
    tokens_total: t.tokensTotal,
    duration_ms: t.durationMs,
    retry_count: t.retryCount,
    pr_merged: t.prMerged,
    pr_merged_at: iso(t.prMergedAt),
    human_edit_after: t.humanEditAfter,
    byok: t.byok,
    error: t.error,
    created_at: t.createdAt.toISOString(),
    started_at: iso(t.startedAt),
    finished_at: iso(t.finishedAt),
  };
}
