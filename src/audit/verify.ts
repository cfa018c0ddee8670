import { asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { auditEvents } from '../db/schema.js';
import { GENESIS_HASH, rowHash } from './chain.js';
import type { AuditRow } from './record.js';

/** The first link of a workspace's chain that does not hold, and why. */
export interface BrokenLink {
  workspaceId: string;
  seq: number;
  reason: string;
}

export interface VerifyReport {
  workspaces: number;
  rows: number;
  broken: BrokenLink[];
}

/** What a summary row says it stands for (src/audit/retention.ts writes it). */
interface Folded {
  from_seq: number;
  to_seq: number;
  last_hash: string;
}

const foldedOf = (row: AuditRow): Folded | null => {
  const f = row.kind === 'summary' ? (row.detail as { folded?: Folded }).folded : undefined;
  return f && typeof f.to_seq === 'number' && typeof f.last_hash === 'string' ? f : null;
};

/**
 * Checks one workspace's chain, oldest first: each row's hash is its own (an edited row fails),
 * each row names the previous one's hash and follows it by one (a removed row fails). The chain
 * may begin after 1 only where a summary row of the chain says retention folded the rows before
 * it, naming the last one's hash. Answers the first broken link, or null.
 */
export function verifyRows(rows: readonly AuditRow[]): BrokenLink | null {
  if (rows.length === 0) return null;
  const first = rows[0]!;
  const broken = (row: AuditRow, reason: string) => ({ workspaceId: row.workspaceId, seq: row.seq, reason });
  if (first.seq !== 1) {
    const cover = rows.map(foldedOf).find((f) => f && f.to_seq === first.seq - 1);
    if (!cover) return broken(first, `rows 1 to ${first.seq - 1} are missing and no summary row accounts for them`);
    if (cover.last_hash !== first.prevHash)
      return broken(first, `its prev_hash is not the hash of the last row the summary folded (${cover.to_seq})`);
  } else if (first.prevHash !== GENESIS_HASH) return broken(first, 'the first row does not start the chain');
  let previous: AuditRow | null = null;
  for (const row of rows) {
    if (previous) {
      if (row.seq !== previous.seq + 1)
        return broken(
          row,
          `row ${previous.seq + 1}${row.seq > previous.seq + 2 ? ` to ${row.seq - 1}` : ''} is missing`,
        );
      if (row.prevHash !== previous.hash) return broken(row, `its prev_hash is not row ${previous.seq}'s hash`);
    }
    if (rowHash(row) !== row.hash) return broken(row, 'its contents do not match its hash (edited)');
    previous = row;
  }
  return null;
}

/** Verifies every workspace's chain (or one's), reading a workspace at a time. */
export async function verifyAudit(db: Db, workspaceId?: string): Promise<VerifyReport> {
  const ids = workspaceId
    ? [workspaceId]
    : (await db.selectDistinct({ id: auditEvents.workspaceId }).from(auditEvents).orderBy(sql`1`)).map((r) => r.id);
  const report: VerifyReport = { workspaces: 0, rows: 0, broken: [] };
  for (const id of ids) {
    const rows = await db
      .select()
      .from(auditEvents)
      .where(eq(auditEvents.workspaceId, id))
      .orderBy(asc(auditEvents.seq));
    report.workspaces += 1;
    report.rows += rows.length;
    const link = verifyRows(rows);
    if (link) report.broken.push(link);
  }
  return report;
}
