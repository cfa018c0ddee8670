import { type SQL, and, asc, desc, eq, gte, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { auditEvents } from '../db/schema.js';
import { AppError } from '../errors.js';
import type { AuditRow } from './record.js';

/** The filters of GET /v1/workspaces/{id}/audit (combined with AND). */
export interface AuditQuery {
  limit?: number;
  /** The seq the page starts below (newest first): from the Link header. */
  cursor?: string;
  /** Rows of this account (actor). */
  actor?: string;
  /** `token.minted`, a prefix ending in a dot (`member.`), or a gate act for refusals. */
  action?: string;
  decision?: 'allowed' | 'denied';
  /** Rows naming this id among their targets (a task, an account, a token…). */
  target?: string;
  since?: Date;
  until?: Date;
}

export const AUDIT_PAGE_MAX = 200;

/** The seq a cursor names; bad_request naming the field otherwise. */
function cursorSeq(cursor: string): number {
  if (!/^[1-9][0-9]{0,14}$/.test(cursor))
    throw new AppError('bad_request', 'cursor: not a cursor this service gave (take it from the Link header)');
  return Number(cursor);
}

function whereOf(workspaceId: string, q: AuditQuery): SQL | undefined {
  if (q.since && q.until && q.since > q.until) throw new AppError('bad_request', 'since: later than until');
  const action = q.action;
  return and(
    eq(auditEvents.workspaceId, workspaceId),
    q.cursor !== undefined ? lt(auditEvents.seq, cursorSeq(q.cursor)) : undefined,
    q.actor ? eq(auditEvents.actorAccountId, q.actor) : undefined,
    action
      ? action.endsWith('.')
        ? sql`starts_with(${auditEvents.action}, ${action})`
        : eq(auditEvents.action, action)
      : undefined,
    q.decision ? eq(auditEvents.decision, q.decision) : undefined,
    q.target
      ? sql`exists (select 1 from jsonb_each_text(${auditEvents.targets}) t where t.value = ${q.target})`
      : undefined,
    q.since ? gte(auditEvents.at, q.since) : undefined,
    q.until ? lt(auditEvents.at, q.until) : undefined,
  );
}

/** One page of a workspace's log, newest first, and the cursor of the next when more follow. */
export async function listAudit(
  db: Db,
  workspaceId: string,
  q: AuditQuery,
): Promise<{ rows: AuditRow[]; next?: string }> {
  const limit = Math.min(q.limit ?? 100, AUDIT_PAGE_MAX);
  const rows = await db
    .select()
    .from(auditEvents)
    .where(whereOf(workspaceId, q))
    .orderBy(desc(auditEvents.seq))
    .limit(limit + 1);
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  return { rows: page, next: more ? String(page.at(-1)!.seq) : undefined };
}

/** Every row the filters pick, oldest first, a batch at a time (the JSON-lines export). */
export async function* eachAudit(db: Db, workspaceId: string, q: AuditQuery, batch = 500): AsyncGenerator<AuditRow> {
  let after = 0;
  for (;;) {
    const rows = await db
      .select()
      .from(auditEvents)
      .where(and(whereOf(workspaceId, { ...q, cursor: undefined }), sql`${auditEvents.seq} > ${after}`))
      .orderBy(asc(auditEvents.seq))
      .limit(batch);
    yield* rows;
    if (rows.length < batch) return;
    after = rows.at(-1)!.seq;
  }
}
