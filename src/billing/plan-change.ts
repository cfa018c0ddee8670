import { eq } from 'drizzle-orm';
import { grantCredits } from './credits.js';
import { isBillingPlanName } from './billing-plan.js';
import type { Tx } from '../db/client.js';
import { workspaces } from '../db/schema.js';
import { AppError } from '../errors.js';

/** The operator's change of a workspace's plan and credit balance (the difference is a ledger grant). */
export interface PlanChange {
  plan?: string;
  credits?: number;
}

export function checkPlanChange(change: PlanChange) {
  if (change.plan !== undefined && !isBillingPlanName(change.plan))
    throw new AppError('bad_request', `plan: unknown plan "${change.plan}"`);
  if (change.credits !== undefined && (!Number.isInteger(change.credits) || change.credits < 0))
    throw new AppError('bad_request', 'credits: must be a non-negative integer');
}

/** A workspace's row: billing sits below workspaces/, so it names the table, not that room's type. */
type WorkspaceRow = typeof workspaces.$inferSelect;

/** Applies a checked change to the locked workspace row `current`, in the caller's transaction. */
export async function applyPlanChange(
  tx: Tx,
  current: Pick<WorkspaceRow, 'id' | 'credits'>,
  change: PlanChange,
  now: Date,
): Promise<WorkspaceRow> {
  if (change.plan !== undefined)
    await tx.update(workspaces).set({ plan: change.plan }).where(eq(workspaces.id, current.id));
  if (change.credits !== undefined)
    await grantCredits(tx, current.id, change.credits - current.credits, now, 'set by admin');
  const [fresh] = await tx.select().from(workspaces).where(eq(workspaces.id, current.id));
  return fresh!;
}
