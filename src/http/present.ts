import type { Account } from '../accounts/accounts.js';
import type { apiTokens, providerKeys } from '../db/schema.js';
import type { Task, TaskLog } from '../tasks/service.js';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

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

export function taskSummaryJson(t: Task) {
  return {
    id: t.id,
    prompt: t.prompt,
    status: t.status,
    pr_url: t.prUrl,
    mode: t.mode,
    task_type: t.taskType,
    repo_url: t.repoUrl,
    deployed_url: t.deployedUrl,
    cost_usd: Number(t.costUsd),
    created_at: t.createdAt.toISOString(),
    finished_at: iso(t.finishedAt),
  };
}

export function logJson(l: TaskLog) {
  return {
    id: l.id,
    step: l.step,
    status: l.status,
    input: l.input,
    output: l.output,
    tokens: l.tokens,
    cost_usd: Number(l.costUsd),
    duration_ms: l.durationMs,
    created_at: l.createdAt.toISOString(),
  };
}

export function providerKeyJson(k: typeof providerKeys.$inferSelect) {
  return {
    provider: k.provider,
    last4: k.last4,
    base_url: k.baseUrl,
    default_model: k.defaultModel,
    context_window: k.contextWindow,
    created_at: k.createdAt.toISOString(),
  };
}

export function tokenJson(t: typeof apiTokens.$inferSelect) {
  return {
    id: t.id,
    name: t.name,
    kind: t.kind,
    last4: t.last4,
    created_at: t.createdAt.toISOString(),
    last_used_at: iso(t.lastUsedAt),
    expires_at: iso(t.expiresAt),
    revoked_at: iso(t.revokedAt),
  };
}

export function adminAccountJson(a: Account) {
  return {
    id: a.id,
    email: a.email,
    name: a.name,
    plan: a.plan,
    credits: a.credits,
    use_byok: a.useByok,
    is_admin: a.isAdmin,
    created_at: a.createdAt.toISOString(),
  };
}
