import { and, asc, eq, inArray, notInArray } from 'drizzle-orm';
import {
  apiTokens,
  creditLedger,
  providerKeys,
  repoMemory,
  repoSecrets,
  repoSettings,
  scmConnections,
  scmOauthFlows,
  taskFeedback,
  taskPostAttempts,
  tasks,
  webhookEndpoints,
  webSessions,
  workspaceInvitations,
  workspaceMembers,
  workspaces,
} from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { taskJson } from '../tasks/present.js';
import { TERMINAL_STATUSES } from '../tasks/states.js';
import { dropTriggersOf, listTriggers } from '../triggers/repo-triggers.js';
import { listMembers } from './members.js';
import type { Workspace } from './workspaces.js';

/** A team workspace, its creator the owner; free plan, no credits until the operator grants some. */
export async function createWorkspace(
  deps: Pick<Deps, 'db' | 'clock'>,
  ownerId: string,
  name: string,
): Promise<Workspace> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const [ws] = await tx.insert(workspaces).values({ id: newId(), name, createdAt: now }).returning();
    await tx
      .insert(workspaceMembers)
      .values({ workspaceId: ws!.id, accountId: ownerId, role: 'owner', createdAt: now });
    return ws!;
  });
}

export async function renameWorkspace(deps: Pick<Deps, 'db'>, workspaceId: string, name: string): Promise<Workspace> {
  const [ws] = await deps.db.update(workspaces).set({ name }).where(eq(workspaces.id, workspaceId)).returning();
  return ws!;
}

/**
 * Deletes a team workspace as DELETE of a task deletes a task: its tasks (with their logs, files
 * and feedback), members, invitations, tokens, sessions' choice of it, keys, connections,
 * repository settings and secrets, memory, webhooks and triggers (unregistered on the host) go;
 * the workspace row stays, marked deleted, with its credit ledger (the accounting). A task
 * still queued, running or at a gate is a conflict: kill it first. A personal workspace goes
 * only with its account.
 */
export async function deleteWorkspace(
  deps: Pick<Deps, 'db' | 'clock' | 'config' | 'fetch' | 'secretKey' | 'log'>,
  ws: Workspace,
): Promise<void> {
  if (ws.personalOf) throw new AppError('conflict', 'a personal workspace is deleted with its account, not on its own');
  const active = await deps.db
    .select({ id: tasks.id, status: tasks.status })
    .from(tasks)
    .where(and(eq(tasks.workspaceId, ws.id), notInArray(tasks.status, [...TERMINAL_STATUSES])))
    .limit(1);
  if (active[0])
    throw new AppError(
      'conflict',
      `task ${active[0].id} is ${active[0].status}: only a workspace whose tasks have all finished can be deleted (kill it first)`,
    );
  // The code host's webhooks first: they need the connection the rest of the deletion removes.
  await dropTriggersOf(deps, ws.id);
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    await tx.update(workspaces).set({ deletedAt: now }).where(eq(workspaces.id, ws.id));
    await tx.delete(tasks).where(and(eq(tasks.workspaceId, ws.id), inArray(tasks.status, [...TERMINAL_STATUSES])));
    for (const table of [
      workspaceMembers,
      workspaceInvitations,
      apiTokens,
      providerKeys,
      scmConnections,
      scmOauthFlows,
      repoSettings,
      repoSecrets,
      repoMemory,
      taskFeedback,
      taskPostAttempts,
      webhookEndpoints,
    ])
      await tx.delete(table).where(eq(table.workspaceId, ws.id));
    await tx.update(webSessions).set({ workspaceId: null }).where(eq(webSessions.workspaceId, ws.id));
  });
}

/**
 * Everything the workspace holds, for its owner to take away: the workspace, members,
 * invitations (no secrets), tasks as the API shows them, repository settings (secret names,
 * never values), memory, webhook endpoints (no signing secrets), triggers and the credit ledger.
 */
export async function exportWorkspace(deps: Pick<Deps, 'db'>, ws: Workspace) {
  const [members, invitations, taskRows, settings, secrets, memory, endpoints, triggers, ledger] = await Promise.all([
    listMembers(deps, ws.id),
    deps.db.select().from(workspaceInvitations).where(eq(workspaceInvitations.workspaceId, ws.id)),
    deps.db.select().from(tasks).where(eq(tasks.workspaceId, ws.id)).orderBy(asc(tasks.createdAt), asc(tasks.id)),
    deps.db.select().from(repoSettings).where(eq(repoSettings.workspaceId, ws.id)),
    deps.db
      .select({ repo: repoSecrets.repo, name: repoSecrets.name, updatedAt: repoSecrets.updatedAt })
      .from(repoSecrets)
      .where(eq(repoSecrets.workspaceId, ws.id)),
    deps.db.select().from(repoMemory).where(eq(repoMemory.workspaceId, ws.id)),
    deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.workspaceId, ws.id)),
    listTriggers(deps, ws.id),
    deps.db
      .select()
      .from(creditLedger)
      .where(eq(creditLedger.workspaceId, ws.id))
      .orderBy(asc(creditLedger.createdAt), asc(creditLedger.id)),
  ]);
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return {
    workspace: {
      id: ws.id,
      name: ws.name,
      personal: ws.personalOf !== null,
      plan: ws.plan,
      credits: ws.credits,
      use_byok: ws.useByok,
      approval_mode: ws.approvalMode,
      fixer: ws.fixer,
      created_at: ws.createdAt.toISOString(),
    },
    members: members.map((m) => ({
      account_id: m.accountId,
      email: m.email,
      name: m.name,
      role: m.role,
      since: m.since.toISOString(),
    })),
    invitations: invitations.map((i) => ({
      id: i.id,
      role: i.role,
      email: i.email,
      expires_at: i.expiresAt.toISOString(),
      accepted_at: iso(i.acceptedAt),
      revoked_at: iso(i.revokedAt),
    })),
    tasks: taskRows.map(taskJson),
    // Every repository with settings or secrets (a secret needs no other setting), secrets by name only.
    repo_settings: [...new Set([...settings.map((s) => s.repo), ...secrets.map((x) => x.repo)])].map((repo) => {
      const s = settings.find((x) => x.repo === repo);
      return {
        repo,
        setup_command: s?.setupCommand ?? null,
        test_command: s?.testCommand ?? null,
        env: s?.env ?? {},
        secrets: secrets.filter((x) => x.repo === repo).map((x) => x.name),
      };
    }),
    memory: memory.map((m) => ({ id: m.id, repo: m.repo, kind: m.kind, content: m.content, task_id: m.taskId })),
    webhooks: endpoints.map((e) => ({ id: e.id, url: e.url, events: e.events, enabled: e.enabled })),
    triggers: triggers.map((t) => ({ repo: t.repo, host: t.host })),
    credit_ledger: ledger.map((l) => ({
      id: l.id,
      task_id: l.taskId,
      kind: l.kind,
      amount: l.amount,
      note: l.note,
      created_at: l.createdAt.toISOString(),
    })),
  };
}
