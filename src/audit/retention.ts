import { and, asc, eq, lte, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { auditEvents } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { appendRow, lockChain } from './record.js';

/** What a summary row's detail says of the rows it stands for (src/audit/verify.ts reads `folded`). */
export interface FoldedDetail {
  folded: {
    from_seq: number;
    to_seq: number;
    /** The hash of the last row folded: the next row left names it as its prev_hash. */
    last_hash: string;
    first_at: string;
    last_at: string;
    rows: number;
    /** Rows per action (`token.minted`), refusals as `act:denied`; a folded summary's counts carried over. */
    counts: Record<string, number>;
  };
}

/** The transaction-local setting that lets the fold's DELETE past audit_events' append-only trigger. */
export const AUDIT_FOLD_SETTING = 'emend.audit_fold';

/**
 * Retention (EMEND_AUDIT_RETENTION_DAYS): a workspace's rows older than the cutoff are folded, not
 * dropped. In one transaction holding the chain's lock, a summary row is appended at the end of
 * the chain (so it is chained and hashed like any row: editing it breaks the chain), saying which
 * rows it stands for, how many of each action, their first and last time and the last one's hash;
 * then those rows are deleted (the one deletion the table lets through). `verify` accepts a chain
 * that starts after 1 only where such a summary names the rows before it and the hash the first
 * row left links to.
 */
export async function foldWorkspace(db: Db, workspaceId: string, cutoff: Date, now: Date): Promise<number> {
  return db.transaction(async (tx) => {
    await lockChain(tx, workspaceId);
    const [edge] = await tx
      .select({ seq: sql<number>`max(${auditEvents.seq})`.mapWith(Number) })
      .from(auditEvents)
      .where(and(eq(auditEvents.workspaceId, workspaceId), lte(auditEvents.at, cutoff)));
    if (!edge?.seq) return 0;
    const old = await tx
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.workspaceId, workspaceId), lte(auditEvents.seq, edge.seq)))
      .orderBy(asc(auditEvents.seq));
    const counts: Record<string, number> = {};
    let rows = 0;
    let fromSeq = Number.POSITIVE_INFINITY;
    let firstAt = '';
    for (const row of old) {
      const carried = row.kind === 'summary' ? (row.detail as Partial<FoldedDetail>).folded : undefined;
      // A summary folded again stands for the rows it folded: its counts, range and first time carry over.
      const from = carried
        ? { seq: carried.from_seq, at: carried.first_at }
        : { seq: row.seq, at: row.at.toISOString() };
      if (from.seq < fromSeq) fromSeq = from.seq;
      if (!firstAt || from.at < firstAt) firstAt = from.at;
      if (carried) {
        for (const [k, n] of Object.entries(carried.counts)) counts[k] = (counts[k] ?? 0) + n;
        rows += carried.rows;
      } else {
        const key = row.decision === 'denied' ? `${row.action}:denied` : row.action;
        counts[key] = (counts[key] ?? 0) + 1;
        rows += 1;
      }
    }
    const last = old.at(-1)!;
    const detail: FoldedDetail = {
      folded: {
        from_seq: fromSeq,
        to_seq: last.seq,
        last_hash: last.hash,
        first_at: firstAt,
        last_at: last.at.toISOString(),
        rows,
        counts,
      },
    };
    await appendRow(tx, {
      workspaceId,
      at: now,
      kind: 'summary',
      action: 'audit.summarised',
      decision: 'allowed',
      actorAccountId: null,
      actorTokenId: null,
      actorSessionId: null,
      actorRole: null,
      targets: {},
      requestId: null,
      clientAddress: null,
      userAgent: null,
      detail: detail as unknown as Record<string, unknown>,
    });
    // The table refuses every UPDATE and DELETE (migrations/0025_audit_append_only.sql) but a
    // DELETE in a transaction marked as the fold's; the mark ends with this transaction.
    await tx.execute(sql`select set_config(${AUDIT_FOLD_SETTING}, 'on', true)`);
    await tx.delete(auditEvents).where(and(eq(auditEvents.workspaceId, workspaceId), lte(auditEvents.seq, last.seq)));
    return old.length;
  });
}

/** Folds every workspace's rows older than the retention; how many rows were folded. Off at 0 days. */
export async function applyAuditRetention(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<number> {
  const days = deps.config.auditRetentionDays;
  if (!days) return 0;
  const now = deps.clock.now();
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  const due = await deps.db
    .selectDistinct({ id: auditEvents.workspaceId })
    .from(auditEvents)
    .where(and(lte(auditEvents.at, cutoff), eq(auditEvents.kind, 'event')));
  let folded = 0;
  for (const { id } of due) folded += await foldWorkspace(deps.db, id, cutoff, now);
  return folded;
}
