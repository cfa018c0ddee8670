import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { creditLedger, tasks, workspaces } from '../db/schema.js';
import { newId } from '../ids.js';

/**
 * Credits never vanish: every movement is a ledger row, and a workspace's balance always
 * equals grants - captures - open holds (a hold is open until captured or released).
 */
export async function grantCredits(tx: Db, workspaceId: string, amount: number, now: Date, note?: string) {
  if (amount === 0) return;
  await tx
    .update(workspaces)
    .set({ credits: sql`${workspaces.credits} + ${amount}` })
    .where(eq(workspaces.id, workspaceId));
  await tx.insert(creditLedger).values({ id: newId(), workspaceId, kind: 'grant', amount, note, createdAt: now });
}

/** Holds one credit for a task; `accountId` (the task's creator) is what a member's monthly credit cap counts. */
export async function holdCredit(
  tx: Db,
  workspaceId: string,
  taskId: string,
  now: Date,
  accountId: string | null = null,
) {
  await tx
    .update(workspaces)
    .set({ credits: sql`${workspaces.credits} - 1` })
    .where(eq(workspaces.id, workspaceId));
  await tx
    .insert(creditLedger)
    .values({ id: newId(), workspaceId, taskId, accountId, kind: 'hold', amount: 1, createdAt: now });
}

/**
 * Closes a task's open hold: captured when the task is done, released (given back) when it
 * failed or was cancelled. Guarded on tasks.credit_held so a hold is settled exactly once.
 */
export async function settleCredit(tx: Db, taskId: string, outcome: 'capture' | 'release', now: Date) {
  const settled = await tx
    .update(tasks)
    .set({ creditHeld: false })
    .where(and(eq(tasks.id, taskId), eq(tasks.creditHeld, true)))
    .returning({ workspaceId: tasks.workspaceId });
  const row = settled[0];
  if (!row) return false;
  if (outcome === 'release') {
    await tx
      .update(workspaces)
      .set({ credits: sql`${workspaces.credits} + 1` })
      .where(eq(workspaces.id, row.workspaceId));
  }
  await tx
    .insert(creditLedger)
    .values({ id: newId(), workspaceId: row.workspaceId, taskId, kind: outcome, amount: 1, createdAt: now });
  return true;
}

/** grants - captures - open holds, computed from the ledger alone. */
export async function ledgerBalance(db: Db, workspaceId: string): Promise<number> {
  const rows = await db
    .select({
      grants: sql<string>`coalesce(sum(${creditLedger.amount}) filter (where ${creditLedger.kind} = 'grant'), 0)`,
      holds: sql<string>`coalesce(sum(${creditLedger.amount}) filter (where ${creditLedger.kind} = 'hold'), 0)`,
      captures: sql<string>`coalesce(sum(${creditLedger.amount}) filter (where ${creditLedger.kind} = 'capture'), 0)`,
      releases: sql<string>`coalesce(sum(${creditLedger.amount}) filter (where ${creditLedger.kind} = 'release'), 0)`,
    })
    .from(creditLedger)
    .where(eq(creditLedger.workspaceId, workspaceId));
  const r = rows[0]!;
  const openHolds = Number(r.holds) - Number(r.captures) - Number(r.releases);
  return Number(r.grants) - Number(r.captures) - openHolds;
}
