import { eq } from 'drizzle-orm';
import {
  type CapKind,
  type Caps,
  THRESHOLDS,
  type Threshold,
  type Used,
  memberCaps,
  memberUsed,
  monthOf,
  recordModelSpend,
  spendCapReached,
  workspaceUsed,
} from '../billing/spend-limits.js';
import type { Tx } from '../db/client.js';
import { spendNotices, workspaces } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { announceDeliveries, recordEvent } from '../webhooks/deliveries.js';

type NoticeDeps = Pick<Deps, 'db' | 'clock' | 'queue' | 'log'>;

/** The thresholds `used` has reached of `cap` (a cap of 0 is reached at once). */
export const thresholdsReached = (cap: number, used: number): Threshold[] =>
  THRESHOLDS.filter((t) => used >= (cap * t) / 100);

/**
 * Records the spend-limit thresholds (80 %, 100 %) the workspace and `accountId` have reached this
 * month and not yet been told of: one spend_notices row each (its key makes it once a month), and
 * with it a `spend.threshold` webhook event in the same transaction. Run after each thing that
 * spends: a task holding a credit, a model call billed. Idempotent, so racing callers send each once.
 */
export async function noticeSpend(deps: NoticeDeps, workspaceId: string, accountId: string | null): Promise<void> {
  const now = deps.clock.now();
  const month = monthOf(now).key;
  const deliveries = await deps.db.transaction(async (tx) => {
    const [ws] = await tx
      .select({ usd: workspaces.monthlySpendCapUsd, credits: workspaces.monthlyCreditCap })
      .from(workspaces)
      .where(eq(workspaces.id, workspaceId));
    if (!ws) return [];
    const out: string[] = [];
    const told = async (subject: string, caps: Caps, used: Used) => {
      for (const cap of ['usd', 'credits'] as const satisfies CapKind[]) {
        const limit = caps[cap];
        if (limit === null) continue;
        for (const threshold of thresholdsReached(limit, used[cap]))
          out.push(
            ...(await tellOnce(tx, { workspaceId, month, subject, cap, threshold, limit, used: used[cap] }, now)),
          );
      }
    };
    if (ws.usd !== null || ws.credits !== null) await told('workspace', ws, await workspaceUsed(tx, workspaceId, now));
    if (accountId !== null) {
      const mine = await memberCaps(tx, workspaceId, accountId);
      if (mine.usd !== null || mine.credits !== null)
        await told(accountId, mine, await memberUsed(tx, workspaceId, accountId, now));
    }
    return out;
  });
  await announceDeliveries(deps, deliveries);
}

interface Notice {
  workspaceId: string;
  month: string;
  subject: string;
  cap: CapKind;
  threshold: Threshold;
  limit: number;
  used: number;
}

async function tellOnce(tx: Tx, n: Notice, now: Date): Promise<string[]> {
  const inserted = await tx
    .insert(spendNotices)
    .values({
      workspaceId: n.workspaceId,
      month: n.month,
      subject: n.subject,
      cap: n.cap,
      threshold: n.threshold,
      createdAt: now,
    })
    .onConflictDoNothing()
    .returning({ month: spendNotices.month });
  if (inserted.length === 0) return [];
  return recordEvent(tx, now, n.workspaceId, 'spend.threshold', {
    workspace_id: n.workspaceId,
    month: n.month,
    scope: n.subject === 'workspace' ? 'workspace' : 'member',
    account_id: n.subject === 'workspace' ? null : n.subject,
    cap: n.cap === 'usd' ? 'monthly_spend_cap_usd' : 'monthly_credit_cap',
    limit: n.limit,
    used: n.cap === 'usd' ? Math.round(n.used * 1e6) / 1e6 : n.used,
    share: n.limit > 0 ? Math.round((n.used / n.limit) * 1000) / 1000 : 1,
    threshold: n.threshold,
  });
}

/**
 * One billed model call of a running managed task: recorded where the caps count it, the
 * thresholds told, and the reached cap's sentence returned when the task must stop (undefined to go on).
 */
export async function modelCallBilled(
  deps: NoticeDeps,
  task: { id: string; workspaceId: string; createdBy: string | null },
  usd: number,
): Promise<string | undefined> {
  const now = deps.clock.now();
  await recordModelSpend(
    deps.db,
    { workspaceId: task.workspaceId, accountId: task.createdBy, taskId: task.id, usd },
    now,
  );
  const [ws] = await deps.db
    .select({ id: workspaces.id, monthlySpendCapUsd: workspaces.monthlySpendCapUsd })
    .from(workspaces)
    .where(eq(workspaces.id, task.workspaceId));
  if (!ws) return undefined;
  if (usd > 0) await noticeSpend(deps, task.workspaceId, task.createdBy);
  return spendCapReached(deps.db, ws, task.createdBy, now);
}
