import { desc, eq, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import { auditEvents } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { recordEvent } from '../webhooks/deliveries.js';
import type { AuditAction } from './actions.js';
import { type ChainedFields, GENESIS_HASH, rowHash } from './chain.js';

/** Who acted, as the request shows them (src/http/audit.ts reads it off a request). */
export interface AuditActor {
  accountId: string | null;
  tokenId: string | null;
  sessionId: string | null;
  /** The role in the workspace at the time (null: not a member, e.g. a refused stranger). */
  role: string | null;
  requestId: string | null;
  clientAddress: string | null;
  userAgent: string | null;
}

/** One row to append: an act done, or refused (decision `denied`, `action` the gate's act). */
export interface AuditEntry {
  workspaceId: string;
  action: AuditAction | string;
  decision?: 'allowed' | 'denied';
  actor: AuditActor;
  targets?: Record<string, string>;
  /** Names and states only, never a secret's value. */
  detail?: Record<string, unknown>;
}

export type AuditRow = typeof auditEvents.$inferSelect;

/** An arbitrary fixed key: the first half of the two-key advisory lock that serialises a workspace's appends. */
const AUDIT_LOCK_CLASS = 4_802_017;

/** A User-Agent is kept clipped, as the sessions keep it. */
const USER_AGENT_CHARS = 300;

/** Holds the workspace's chain until the transaction ends: appends and folds wait for each other. */
export async function lockChain(tx: Tx | Db, workspaceId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${AUDIT_LOCK_CLASS}, hashtext(${workspaceId}))`);
}

/**
 * Appends the rows `fields` describe to the workspace's chain, in the caller's transaction: the
 * transaction-scoped advisory lock on the workspace holds other appends until it commits, so
 * concurrent acts keep one chain (on PostgreSQL and PGlite alike).
 */
export async function appendRow(tx: Tx | Db, fields: Omit<ChainedFields, 'seq' | 'prevHash'>): Promise<AuditRow> {
  await lockChain(tx, fields.workspaceId);
  const [last] = await tx
    .select({ seq: auditEvents.seq, hash: auditEvents.hash })
    .from(auditEvents)
    .where(eq(auditEvents.workspaceId, fields.workspaceId))
    .orderBy(desc(auditEvents.seq))
    .limit(1);
  const chained: ChainedFields = { ...fields, seq: (last?.seq ?? 0) + 1, prevHash: last?.hash ?? GENESIS_HASH };
  const [row] = await tx
    .insert(auditEvents)
    .values({ ...chained, hash: rowHash(chained) })
    .returning();
  return row!;
}

/**
 * Records one act or event in the caller's transaction (the act's own: when it rolls back, so
 * does its record), and the `audit.<action>` webhook event for the workspace's endpoints that
 * subscribe to `audit.*`. Returns the deliveries to announce once the transaction has committed.
 */
export async function recordAudit(
  tx: Tx | Db,
  deps: Pick<Deps, 'clock'>,
  entry: AuditEntry,
): Promise<{ row: AuditRow; deliveries: string[] }> {
  const { actor } = entry;
  const row = await appendRow(tx, {
    workspaceId: entry.workspaceId,
    at: deps.clock.now(),
    kind: 'event',
    action: entry.action,
    decision: entry.decision ?? 'allowed',
    actorAccountId: actor.accountId,
    actorTokenId: actor.tokenId,
    actorSessionId: actor.sessionId,
    actorRole: actor.role,
    targets: entry.targets ?? {},
    requestId: actor.requestId?.slice(0, 128) ?? null,
    clientAddress: actor.clientAddress?.slice(0, 64) ?? null,
    userAgent: actor.userAgent?.slice(0, USER_AGENT_CHARS) || null,
    detail: entry.detail ?? {},
  });
  const deliveries = await recordEvent(tx, row.at, row.workspaceId, `audit.${row.action}`, auditJson(row));
  return { row, deliveries };
}

/** A row as the API, the export and the webhook show it (snake_case; the hashes included, to check). */
export function auditJson(row: AuditRow) {
  return {
    seq: row.seq,
    at: row.at.toISOString(),
    kind: row.kind,
    action: row.action,
    decision: row.decision,
    actor: {
      account_id: row.actorAccountId,
      token_id: row.actorTokenId,
      session_id: row.actorSessionId,
      role: row.actorRole,
    },
    targets: row.targets,
    request_id: row.requestId,
    client_address: row.clientAddress,
    user_agent: row.userAgent,
    detail: row.detail,
    prev_hash: row.prevHash,
    hash: row.hash,
  };
}
