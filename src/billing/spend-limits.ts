import { type SQL, and, eq, gte, isNotNull, lt, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import { creditLedger, modelSpend, workspaceMembers } from '../db/schema.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';

/**
 * Spend limits (docs/teams.md, "Spend limits"): per workspace and per member, a monthly cap on
 * metered model spend (USD) and on credits held, counted over the UTC calendar month. A cap of
 * null is no cap. "Used" is what the month's model calls cost (model_spend) and the credits its
 * tasks held and did not get back (holds not released).
 */

export type CapKind = 'usd' | 'credits';

/** Both caps of a workspace or of one member; null: no cap. */
export interface Caps {
  usd: number | null;
  credits: number | null;
}

export interface Used {
  usd: number;
  credits: number;
}

/** The shares of a cap at which the workspace is told (webhook event, panel notice), in percent. */
export const THRESHOLDS = [80, 100] as const;
export type Threshold = (typeof THRESHOLDS)[number];

/** The UTC calendar month holding `now`: its first instant, the next month's, and its key (`2026-11`). */
export function monthOf(now: Date): { start: Date; end: Date; key: string } {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { start, end, key: start.toISOString().slice(0, 7) };
}

/** Sums per account (null: the workspace's, every account's and none's together). */
async function usedBy(db: Db | Tx, workspaceId: string, now: Date, accountId?: string): Promise<Used> {
  const { start, end } = monthOf(now);
  const [usd] = await db
    .select({ sum: sql<string>`coalesce(sum(${modelSpend.usd}), 0)` })
    .from(modelSpend)
    .where(
      and(
        spentInMonth(workspaceId, start, end),
        accountId === undefined ? undefined : eq(modelSpend.accountId, accountId),
      ),
    );
  const [credits] = await db
    .select({ sum: sql<string>`coalesce(sum(${creditLedger.amount}), 0)` })
    .from(creditLedger)
    .where(
      and(
        heldInMonth(workspaceId, start, end),
        accountId === undefined ? undefined : eq(creditLedger.accountId, accountId),
      ),
    );
  return { usd: Number(usd!.sum), credits: Number(credits!.sum) };
}

/** The workspace's metered model spend of the month. */
function spentInMonth(workspaceId: string, start: Date, end: Date): SQL {
  return and(
    eq(modelSpend.workspaceId, workspaceId),
    gte(modelSpend.createdAt, start),
    lt(modelSpend.createdAt, end),
  ) as SQL;
}

/** The month's holds whose credit was not given back (a hold is released when its task fails or is cancelled). */
function heldInMonth(workspaceId: string, start: Date, end: Date): SQL {
  return and(
    eq(creditLedger.workspaceId, workspaceId),
    eq(creditLedger.kind, 'hold'),
    gte(creditLedger.createdAt, start),
    lt(creditLedger.createdAt, end),
    sql`not exists (select 1 from ${creditLedger} r where r.task_id = ${creditLedger.taskId} and r.kind = 'release')`,
  ) as SQL;
}

export const workspaceUsed = (db: Db | Tx, workspaceId: string, now: Date) => usedBy(db, workspaceId, now);
export const memberUsed = (db: Db | Tx, workspaceId: string, accountId: string, now: Date) =>
  usedBy(db, workspaceId, now, accountId);

/** Each account's use this month in the workspace (accounts with none are absent). */
export async function usedPerAccount(db: Db | Tx, workspaceId: string, now: Date): Promise<Map<string, Used>> {
  const { start, end } = monthOf(now);
  const usd = await db
    .select({ accountId: modelSpend.accountId, sum: sql<string>`sum(${modelSpend.usd})` })
    .from(modelSpend)
    .where(and(spentInMonth(workspaceId, start, end), isNotNull(modelSpend.accountId)))
    .groupBy(modelSpend.accountId);
  const credits = await db
    .select({ accountId: creditLedger.accountId, sum: sql<string>`sum(${creditLedger.amount})` })
    .from(creditLedger)
    .where(and(heldInMonth(workspaceId, start, end), isNotNull(creditLedger.accountId)))
    .groupBy(creditLedger.accountId);
  const out = new Map<string, Used>();
  const at = (id: string) => out.get(id) ?? out.set(id, { usd: 0, credits: 0 }).get(id)!;
  for (const r of usd) at(r.accountId!).usd = Number(r.sum);
  for (const r of credits) at(r.accountId!).credits = Number(r.sum);
  return out;
}

/** A member's own caps in the workspace (none when not a member: a deleted account's task). */
export async function memberCaps(db: Db | Tx, workspaceId: string, accountId: string): Promise<Caps> {
  const [row] = await db
    .select({ usd: workspaceMembers.monthlySpendCapUsd, credits: workspaceMembers.monthlyCreditCap })
    .from(workspaceMembers)
    .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.accountId, accountId)));
  return { usd: row?.usd ?? null, credits: row?.credits ?? null };
}

export const usd = (n: number) => `$${n.toFixed(2)}`;

/** Whose cap a sentence names: the workspace's, the caller's own, or the running task's creator's. */
export type Whose = 'workspace' | 'yours' | 'creator';
const WHOSE: Record<Whose, string> = {
  workspace: "this workspace's",
  yours: 'your',
  creator: "the task creator's",
};

/** The sentence that names a reached cap, for a 402 and for a task stopped by it. */
export function capSentence(whose: Whose, cap: CapKind, limit: number, used: number): string {
  if (cap === 'usd')
    return `${WHOSE[whose]} monthly model spend cap of ${usd(limit)} is reached (${usd(used)} used this month)`;
  return `${WHOSE[whose]} monthly credit cap of ${limit} is reached (${used} used this month)`;
}

/** What admission checks: the task would be metered (not BYOK) and/or hold a credit. */
export interface SpendNeed {
  metered: boolean;
  holdsCredit: boolean;
}

/** The first cap the subject has reached for what the task needs; undefined when none is. */
function reached(whose: Whose, caps: Caps, used: Used, need: SpendNeed): string | undefined {
  if (need.metered && caps.usd !== null && used.usd >= caps.usd) return capSentence(whose, 'usd', caps.usd, used.usd);
  if (need.holdsCredit && caps.credits !== null && used.credits + 1 > caps.credits)
    return capSentence(whose, 'credits', caps.credits, used.credits);
  return undefined;
}

/**
 * Refuses a new task at a cap, 402 `NO_CREDITS` with the sentence naming it (the contract's code
 * for a run the workspace cannot pay for). Called in admission's transaction with the workspace
 * row locked FOR UPDATE, before the credit is held: parallel creations take turns, so none passes a cap.
 */
export async function checkSpendCaps(
  tx: Tx,
  workspace: { id: string; monthlySpendCapUsd: number | null; monthlyCreditCap: number | null },
  accountId: string | null,
  need: SpendNeed,
  now: Date,
): Promise<void> {
  if (!need.metered && !need.holdsCredit) return;
  const wsCaps = { usd: workspace.monthlySpendCapUsd, credits: workspace.monthlyCreditCap };
  if (wsCaps.usd !== null || wsCaps.credits !== null) {
    const why = reached('workspace', wsCaps, await workspaceUsed(tx, workspace.id, now), need);
    if (why) throw new AppError('NO_CREDITS', `${why}; the workspace's owner can raise it`);
  }
  if (accountId === null) return;
  const mine = await memberCaps(tx, workspace.id, accountId);
  if (mine.usd === null && mine.credits === null) return;
  const why = reached('yours', mine, await memberUsed(tx, workspace.id, accountId, now), need);
  if (why) throw new AppError('NO_CREDITS', `${why} in this workspace; its owner can raise it`);
}

/**
 * The USD cap a running task has reached, as a sentence, or undefined. Only model spend stops a
 * running task: its credit was held when it was admitted.
 */
export async function spendCapReached(
  db: Db | Tx,
  workspace: { id: string; monthlySpendCapUsd: number | null },
  accountId: string | null,
  now: Date,
): Promise<string | undefined> {
  if (workspace.monthlySpendCapUsd !== null) {
    const used = await workspaceUsed(db, workspace.id, now);
    if (used.usd >= workspace.monthlySpendCapUsd)
      return capSentence('workspace', 'usd', workspace.monthlySpendCapUsd, used.usd);
  }
  if (accountId === null) return undefined;
  const mine = await memberCaps(db, workspace.id, accountId);
  if (mine.usd === null) return undefined;
  const used = await memberUsed(db, workspace.id, accountId, now);
  return used.usd >= mine.usd ? capSentence('creator', 'usd', mine.usd, used.usd) : undefined;
}

/** Records one billed model call of a managed task: what the spend caps count. */
export async function recordModelSpend(
  db: Db | Tx,
  spend: { workspaceId: string; accountId: string | null; taskId: string; usd: number },
  now: Date,
): Promise<void> {
  if (!(spend.usd > 0)) return;
  await db.insert(modelSpend).values({ id: newId(), ...spend, createdAt: now });
}
