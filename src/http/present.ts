import type { Account } from '../accounts/accounts.js';
import type { apiTokens, providerKeys } from '../db/schema.js';
import type { Task, TaskLog } from '../tasks/service.js';
import type { WebhookDelivery } from '../webhooks/deliveries.js';
import type { WebhookEndpoint } from '../webhooks/endpoints.js';

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

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

export function webhookEndpointJson(e: WebhookEndpoint) {
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    description: e.description,
    enabled: e.enabled,
    disabled_reason: e.disabledReason,
    failing_since: iso(e.failingSince),
    created_at: e.createdAt.toISOString(),
  };
}

export function webhookDeliveryJson(d: WebhookDelivery) {
  return {
    id: d.id,
    event_id: d.eventId,
    event: d.eventType,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: iso(d.nextAttemptAt),
    last_response_code: d.lastStatusCode,
    last_error: d.lastError,
    duration_ms: d.lastDurationMs,
    payload_kept: d.payload !== null,
    created_at: d.createdAt.toISOString(),
    finished_at: iso(d.finishedAt),
  };
}
