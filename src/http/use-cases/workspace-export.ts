import { asc, eq } from 'drizzle-orm';
import {
  creditLedger,
  modelSpend,
  providerKeys,
  repoMemory,
  repoSecrets,
  repoSettings,
  scmConnections,
  spendNotices,
  taskFeedback,
  tasks,
  webhookDeliveries,
  webhookEndpoints,
  workspaceInvitations,
} from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { taskJson } from '../../tasks/present.js';
import { listTriggers } from '../../triggers/repo-triggers.js';
import { listMembers } from '../../workspaces/members.js';
import { EXPORT_SECTIONS, type ExportSection, WORKSPACE_TABLES } from './workspace-tables.js';
import type { Workspace } from '../../workspaces/workspaces.js';

type Db = Pick<Deps, 'db'>;
const iso = (d: Date | null) => d?.toISOString() ?? null;

/**
 * Each section of the export, from the rows of the tables that name it in WORKSPACE_TABLES.
 * Each reads the columns it writes, so a secret column (WORKSPACE_TABLES' `secret`) is not even read.
 */
const SECTIONS: { [S in ExportSection]: (deps: Db, workspaceId: string) => Promise<unknown[]> } = {
  members: async (deps, id) =>
    (await listMembers(deps, id)).map((m) => ({
      account_id: m.accountId,
      email: m.email,
      name: m.name,
      role: m.role,
      since: m.since.toISOString(),
    })),
  invitations: async (deps, id) =>
    (
      await deps.db
        .select({
          id: workspaceInvitations.id,
          role: workspaceInvitations.role,
          email: workspaceInvitations.email,
          expiresAt: workspaceInvitations.expiresAt,
          acceptedAt: workspaceInvitations.acceptedAt,
          revokedAt: workspaceInvitations.revokedAt,
        })
        .from(workspaceInvitations)
        .where(eq(workspaceInvitations.workspaceId, id))
    ).map((i) => ({
      id: i.id,
      role: i.role,
      email: i.email,
      expires_at: i.expiresAt.toISOString(),
      accepted_at: iso(i.acceptedAt),
      revoked_at: iso(i.revokedAt),
    })),
  tasks: async (deps, id) =>
    (
      await deps.db.select().from(tasks).where(eq(tasks.workspaceId, id)).orderBy(asc(tasks.createdAt), asc(tasks.id))
    ).map(taskJson),
  task_feedback: async (deps, id) =>
    (
      await deps.db
        .select()
        .from(taskFeedback)
        .where(eq(taskFeedback.workspaceId, id))
        .orderBy(asc(taskFeedback.createdAt), asc(taskFeedback.id))
    ).map((f) => ({
      id: f.id,
      task_id: f.taskId,
      rating: f.rating,
      correct: f.correct,
      reuse: f.reuse,
      note: f.note,
      created_at: f.createdAt.toISOString(),
    })),
  // Every repository with settings or secrets (a secret needs no other setting), secrets by name only.
  repo_settings: async (deps, id) => {
    const [settings, secrets] = await Promise.all([
      deps.db.select().from(repoSettings).where(eq(repoSettings.workspaceId, id)),
      deps.db
        .select({ repo: repoSecrets.repo, name: repoSecrets.name })
        .from(repoSecrets)
        .where(eq(repoSecrets.workspaceId, id)),
    ]);
    return [...new Set([...settings.map((s) => s.repo), ...secrets.map((x) => x.repo)])].map((repo) => {
      const s = settings.find((x) => x.repo === repo);
      return {
        repo,
        setup_command: s?.setupCommand ?? null,
        test_command: s?.testCommand ?? null,
        env: s?.env ?? {},
        attempts: s?.attempts ?? null,
        secrets: secrets.filter((x) => x.repo === repo).map((x) => x.name),
      };
    });
  },
  memory: async (deps, id) =>
    (await deps.db.select().from(repoMemory).where(eq(repoMemory.workspaceId, id))).map((m) => ({
      id: m.id,
      repo: m.repo,
      kind: m.kind,
      content: m.content,
      task_id: m.taskId,
    })),
  provider_keys: async (deps, id) =>
    (
      await deps.db
        .select({
          provider: providerKeys.provider,
          last4: providerKeys.last4,
          baseUrl: providerKeys.baseUrl,
          defaultModel: providerKeys.defaultModel,
          contextWindow: providerKeys.contextWindow,
          createdAt: providerKeys.createdAt,
        })
        .from(providerKeys)
        .where(eq(providerKeys.workspaceId, id))
        .orderBy(asc(providerKeys.provider))
    ).map((k) => ({
      provider: k.provider,
      last4: k.last4,
      base_url: k.baseUrl,
      default_model: k.defaultModel,
      context_window: k.contextWindow,
      created_at: k.createdAt.toISOString(),
    })),
  scm_connections: async (deps, id) =>
    (
      await deps.db
        .select({
          host: scmConnections.host,
          login: scmConnections.login,
          expiresAt: scmConnections.expiresAt,
          createdAt: scmConnections.createdAt,
        })
        .from(scmConnections)
        .where(eq(scmConnections.workspaceId, id))
        .orderBy(asc(scmConnections.host))
    ).map((c) => ({
      host: c.host,
      login: c.login,
      expires_at: iso(c.expiresAt),
      created_at: c.createdAt.toISOString(),
    })),
  webhooks: async (deps, id) =>
    (
      await deps.db
        .select({
          id: webhookEndpoints.id,
          url: webhookEndpoints.url,
          events: webhookEndpoints.events,
          enabled: webhookEndpoints.enabled,
        })
        .from(webhookEndpoints)
        .where(eq(webhookEndpoints.workspaceId, id))
    ).map((e) => ({ id: e.id, url: e.url, events: e.events, enabled: e.enabled })),
  // As GET /v1/me/webhooks/{id}/deliveries shows them, with their endpoint: the payloads stay behind.
  webhook_deliveries: async (deps, id) =>
    (
      await deps.db
        .select({
          id: webhookDeliveries.id,
          endpointId: webhookDeliveries.endpointId,
          eventId: webhookDeliveries.eventId,
          eventType: webhookDeliveries.eventType,
          status: webhookDeliveries.status,
          attempts: webhookDeliveries.attempts,
          lastStatusCode: webhookDeliveries.lastStatusCode,
          lastError: webhookDeliveries.lastError,
          createdAt: webhookDeliveries.createdAt,
          finishedAt: webhookDeliveries.finishedAt,
        })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.workspaceId, id))
        .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id))
    ).map((d) => ({
      id: d.id,
      endpoint_id: d.endpointId,
      event_id: d.eventId,
      event: d.eventType,
      status: d.status,
      attempts: d.attempts,
      last_response_code: d.lastStatusCode,
      last_error: d.lastError,
      created_at: d.createdAt.toISOString(),
      finished_at: iso(d.finishedAt),
    })),
  triggers: async (deps, id) => (await listTriggers(deps, id)).map((t) => ({ repo: t.repo, host: t.host })),
  credit_ledger: async (deps, id) =>
    (
      await deps.db
        .select()
        .from(creditLedger)
        .where(eq(creditLedger.workspaceId, id))
        .orderBy(asc(creditLedger.createdAt), asc(creditLedger.id))
    ).map((l) => ({
      id: l.id,
      task_id: l.taskId,
      kind: l.kind,
      amount: l.amount,
      account_id: l.accountId,
      note: l.note,
      created_at: l.createdAt.toISOString(),
    })),
  model_spend: async (deps, id) =>
    (
      await deps.db
        .select()
        .from(modelSpend)
        .where(eq(modelSpend.workspaceId, id))
        .orderBy(asc(modelSpend.createdAt), asc(modelSpend.id))
    ).map((m) => ({
      task_id: m.taskId,
      account_id: m.accountId,
      usd: m.usd,
      created_at: m.createdAt.toISOString(),
    })),
  spend_notices: async (deps, id) =>
    (
      await deps.db
        .select()
        .from(spendNotices)
        .where(eq(spendNotices.workspaceId, id))
        .orderBy(asc(spendNotices.createdAt))
    ).map((n) => ({
      month: n.month,
      subject: n.subject,
      cap: n.cap,
      threshold: n.threshold,
      created_at: n.createdAt.toISOString(),
    })),
};

/** The sections some table names (WORKSPACE_TABLES' `exportAs`), in EXPORT_SECTIONS' order. */
export const exportedSections = (): ExportSection[] => {
  const named = new Set(Object.values(WORKSPACE_TABLES).map((d) => d.exportAs));
  return EXPORT_SECTIONS.filter((s) => named.has(s));
};

/**
 * Everything the workspace holds, for its owner to take away: the workspace, then a section for
 * every table WORKSPACE_TABLES exports (docs/teams.md lists them), never a secret.
 */
export async function exportWorkspace(deps: Db, workspace: Workspace): Promise<Record<string, unknown>> {
  const sections = exportedSections();
  const written = await Promise.all(sections.map((s) => SECTIONS[s](deps, workspace.id)));
  return {
    workspace: {
      id: workspace.id,
      name: workspace.name,
      personal: workspace.personalOf !== null,
      plan: workspace.plan,
      credits: workspace.credits,
      use_byok: workspace.useByok,
      approval_mode: workspace.approvalMode,
      fixer: workspace.fixer,
      monthly_spend_cap_usd: workspace.monthlySpendCapUsd,
      monthly_credit_cap: workspace.monthlyCreditCap,
      created_at: workspace.createdAt.toISOString(),
    },
    ...Object.fromEntries(sections.map((s, i) => [s, written[i]])),
  };
}
