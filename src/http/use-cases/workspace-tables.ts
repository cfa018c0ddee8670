import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import * as schema from '../../db/schema.js';

/**
 * What deleting a workspace does to, and what its export takes from, every table whose rows
 * belong to a workspace (a `workspace_id` column). Keyed by every such table of src/db/schema.ts,
 * so a new one does not compile until it is decided here; test/http/use-cases/workspace-tables.db.test.ts
 * also compares the list with the migrated database. Deletion (workspace-deletion.ts) and the
 * export (workspace-export.ts) both read it. The workspace row itself stays, marked deleted: kept rows name it.
 * Rows keyed by a task or a trigger alone (task logs, site files and screenshots, idempotency
 * keys, trigger deliveries) go with their task or trigger through their foreign keys.
 */

type Schema = typeof schema;
type WorkspaceOwned = PgTable & { workspaceId: AnyPgColumn };

/** The schema's name of every table with a workspace_id column. */
export type WorkspaceTableName = { [K in keyof Schema]: Schema[K] extends WorkspaceOwned ? K : never }[keyof Schema];

/** The export's sections after `workspace`, in the order it writes them. */
export const EXPORT_SECTIONS = [
  'members',
  'invitations',
  'tasks',
  'task_feedback',
  'repo_settings',
  'memory',
  'provider_keys',
  'scm_connections',
  'webhooks',
  'webhook_deliveries',
  'triggers',
  'credit_ledger',
  'model_spend',
  'spend_notices',
] as const;
export type ExportSection = (typeof EXPORT_SECTIONS)[number];

export interface TableDecision<T extends WorkspaceOwned> {
  table: T;
  /**
   * What deleting the workspace does to its rows: they go, or stay (naming the deleted
   * workspace), or stay with workspace_id cleared; the last two say why.
   */
  onDelete: 'delete' | { keep: string } | { unlink: string };
  /** The export's section that holds the rows, or why they are not exported. */
  exportAs: ExportSection | { omitted: string };
  /** Columns holding a secret (a hash, an encrypted value): never exported, shown or logged. */
  secret: readonly (keyof T['$inferSelect'])[];
}

export const WORKSPACE_TABLES: { [K in WorkspaceTableName]: TableDecision<Schema[K]> } = {
  // Membership ends with the workspace; the export lists members with their account's email and name.
  workspaceMembers: { table: schema.workspaceMembers, onDelete: 'delete', exportAs: 'members', secret: [] },
  // Pending ones could otherwise be accepted into a deleted workspace; exported without the link's hash.
  workspaceInvitations: {
    table: schema.workspaceInvitations,
    onDelete: 'delete',
    exportAs: 'invitations',
    secret: ['tokenHash'],
  },
  // All of them: deletion is refused while one is active (with its logs, files and screenshots by cascade).
  tasks: { table: schema.tasks, onDelete: 'delete', exportAs: 'tasks', secret: [] },
  // The feedback history (GET /v1/tasks/{id}/feedback shows the newest): the workspace's judgement of its tasks.
  taskFeedback: { table: schema.taskFeedback, onDelete: 'delete', exportAs: 'task_feedback', secret: [] },
  // Exported with repository settings, by name only.
  repoSettings: { table: schema.repoSettings, onDelete: 'delete', exportAs: 'repo_settings', secret: [] },
  repoSecrets: { table: schema.repoSecrets, onDelete: 'delete', exportAs: 'repo_settings', secret: ['valueEnc'] },
  repoMemory: { table: schema.repoMemory, onDelete: 'delete', exportAs: 'memory', secret: [] },
  // Metadata as GET /v1/me/keys shows it (provider, last 4, model settings), never the key.
  providerKeys: { table: schema.providerKeys, onDelete: 'delete', exportAs: 'provider_keys', secret: ['keyEnc'] },
  // Host and login as GET /v1/me shows them, never the tokens.
  scmConnections: {
    table: schema.scmConnections,
    onDelete: 'delete',
    exportAs: 'scm_connections',
    secret: ['tokenEnc', 'refreshEnc'],
  },
  // A connection being made (minutes long), holding the host's sealed code: nothing to take away.
  scmOauthFlows: {
    table: schema.scmOauthFlows,
    onDelete: 'delete',
    exportAs: { omitted: 'a connection being made, minutes long: nothing of the workspace’s to take away' },
    secret: ['codeEnc', 'confirmHash'],
  },
  // Tokens stop working with the workspace. Each is its own account's credential, listed to that
  // account only (GET /v1/me/tokens): the owner sees no one's tokens anywhere else either.
  apiTokens: {
    table: schema.apiTokens,
    onDelete: 'delete',
    exportAs: { omitted: 'each token is its account’s credential, listed to that account only' },
    secret: ['tokenHash'],
  },
  // A panel session is its account's sign-in: it stays, back on its token's workspace (one opened
  // with a token of this workspace goes with that token, by cascade).
  webSessions: {
    table: schema.webSessions,
    onDelete: { unlink: 'a session is its account’s sign-in: it acts in its token’s workspace again' },
    exportAs: { omitted: 'an account’s sign-in, not the workspace’s' },
    secret: ['idHash'],
  },
  // Single sign-on: the provider's client (its secret sealed) and the email domains it takes in go
  // with the workspace; not exported, as a restore must not sign a second server in as this one.
  workspaceSso: {
    table: schema.workspaceSso,
    onDelete: 'delete',
    exportAs: { omitted: 'the identity provider’s client, with its secret: set it again where it is imported' },
    secret: ['clientSecretSealed'],
  },
  ssoDomains: {
    table: schema.ssoDomains,
    onDelete: 'delete',
    exportAs: { omitted: 'part of the single sign-on setting, not exported with it' },
    secret: [],
  },
  // Bookkeeping of the task-post rate limit (a 60 s window).
  taskPostAttempts: {
    table: schema.taskPostAttempts,
    onDelete: 'delete',
    exportAs: { omitted: 'rate-limit bookkeeping of the last minute' },
    secret: [],
  },
  // Exported without their signing secrets; their deliveries as GET …/deliveries shows them (no payload).
  webhookEndpoints: { table: schema.webhookEndpoints, onDelete: 'delete', exportAs: 'webhooks', secret: ['secretEnc'] },
  webhookDeliveries: {
    table: schema.webhookDeliveries,
    onDelete: 'delete',
    exportAs: 'webhook_deliveries',
    secret: [],
  },
  // The host's webhooks are unregistered first (they need the connection); exported without their secrets.
  repoTriggers: { table: schema.repoTriggers, onDelete: 'delete', exportAs: 'triggers', secret: ['secretEnc'] },
  // The installation is the host account's, not the workspace's: it stays unclaimed, for another workspace to claim.
  scmInstallations: {
    table: schema.scmInstallations,
    onDelete: {
      unlink: 'the app stays installed on the host account; an admin of it may claim it for another workspace',
    },
    exportAs: { omitted: 'the host account’s installation, not the workspace’s data: the panel shows who claimed it' },
    secret: [],
  },
  // The group's webhook is removed first (with the bot's token), then the row; the token is the
  // group's credential, handed to this server, not the workspace's data.
  scmGroupBots: {
    table: schema.scmGroupBots,
    onDelete: 'delete',
    exportAs: { omitted: 'a group’s bot credential: GET /v1/me/scm/groups lists the groups and bots' },
    secret: ['tokenEnc', 'secretEnc'],
  },
  // The accounting: every movement of credits stays, as docs/teams.md promises.
  creditLedger: {
    table: schema.creditLedger,
    onDelete: { keep: 'the accounting: every movement of credits is kept' },
    exportAs: 'credit_ledger',
    secret: [],
  },
  // The metered model spend the monthly caps count: accounting too, kept like the credit ledger.
  modelSpend: {
    table: schema.modelSpend,
    onDelete: { keep: 'the accounting: metered model spend is kept, as the credit ledger is' },
    exportAs: 'model_spend',
    secret: [],
  },
  // Which spend-limit thresholds a month crossed (each sent once as a webhook event).
  spendNotices: { table: schema.spendNotices, onDelete: 'delete', exportAs: 'spend_notices', secret: [] },
  // The validator's kept baselines: a cache of the base commits' test runs, run again on demand.
  baselineResults: {
    table: schema.baselineResults,
    onDelete: 'delete',
    exportAs: { omitted: 'a cache of test runs on base commits, made again by the next validation' },
    secret: [],
  },
  // The record of who did what, the deletion included: append-only (docs/security.md, "Audit log").
  auditEvents: {
    table: schema.auditEvents,
    onDelete: { keep: 'the audit log is append-only: it records the deletion too' },
    exportAs: { omitted: 'the audit log has its own export, GET /v1/workspaces/{id}/audit.jsonl' },
    secret: [],
  },
};
