import { and, count, eq, gte, inArray } from 'drizzle-orm';
import { holdCredit } from '../../billing/credits.js';
import { checkSpendCaps } from '../../billing/spend-limits.js';
import { type BillingPlan, type TaskMode, billingPlan, billingPlanNameOf } from '../../billing/billing-plan.js';
import type { BillingPlanName } from '../../config/billing-plans.js';
import type { Tx } from '../../db/client.js';
import { tasks } from '../../db/schema.js';
import { type Workspace, lockWorkspace } from '../../workspaces/workspaces.js';
import { AppError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Task } from '../task.js';
import { ACTIVE_STATUSES } from '../states.js';

/**
 * What a task is admitted as: `new` (POST /v1/tasks: the plan's mode, the monthly quota
 * applies), `continue` (a done preview promoted to a pull-request run: pr mode, no quota,
 * the preview was counted already; demo tokens are refused before this) or `follow_up` (a
 * review of emend's pull request asked on the code host: pr mode, since it pushes onto that pull
 * request's branch, and counted as a new task).
 */
export type AdmissionKind = 'new' | 'continue' | 'follow_up';

export interface Admitter {
  /** The workspace the task belongs to (its plan, credits and limits). */
  workspaceId: string;
  /** The account that asked (the task's created_by); null when none did (a code-host trigger's). */
  accountId: string | null;
  /** The token that asked; null for a task a code-host trigger started. */
  tokenId: string | null;
  isDemo: boolean;
}

export interface Admission {
  workspace: Workspace;
  /** The plan the task is admitted on: a demo token's own, else the workspace's. */
  billingPlanName: BillingPlanName;
  limits: BillingPlan;
  mode: TaskMode;
  byok: boolean;
  /** One credit is held from creation until the task ends (see endTask). */
  holdsCredit: boolean;
}

const NO_CREDITS: Record<AdmissionKind, string> = {
  new: 'no credits left for a pull-request run; add credits or enable BYOK',
  continue: 'continuing a preview costs one credit; add credits or enable BYOK',
  follow_up: 'a follow-up on a pull request costs one credit; add credits or enable BYOK',
};

export function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/**
 * The one check before a task is created, shared by create and continue: quota, credit, spend
 * limits, concurrency. Runs in the creating transaction with the workspace row locked (FOR UPDATE), so
 * the counts are exact under parallel requests and the hold that follows cannot overdraw.
 */
export async function admitTask(tx: Tx, who: Admitter, kind: AdmissionKind, now: Date): Promise<Admission> {
  const workspace = await lockWorkspace(tx, who.workspaceId);
  if (!workspace || workspace.deletedAt)
    throw new AppError('invalid_token', 'the workspace behind this token no longer exists');
  const billingPlanName = billingPlanNameOf(who.isDemo ? 'demo' : workspace.plan);
  const limits = billingPlan(billingPlanName);
  const byok = !who.isDemo && workspace.useByok;
  if (kind !== 'continue') await checkMonthlyQuota(tx, who, workspace, limits, now);
  const mode = kind === 'new' ? limits.mode : 'pr';
  const holdsCredit = mode === 'pr' && !byok;
  if (holdsCredit && workspace.credits < 1) throw new AppError('NO_CREDITS', NO_CREDITS[kind]);
  // The spend limits, on the same locked row: a cap reached is refused before the task exists.
  await checkSpendCaps(tx, workspace, who.accountId, { metered: !byok, holdsCredit }, now);
  const [active] = await tx
    .select({ n: count() })
    .from(tasks)
    .where(and(eq(tasks.workspaceId, workspace.id), inArray(tasks.status, [...ACTIVE_STATUSES])));
  if (active!.n >= limits.concurrent) {
    throw new AppError(
      'CONCURRENT_LIMIT',
      `at most ${limits.concurrent} active tasks at once on this plan; wait for one to finish`,
      5,
    );
  }
  return { workspace, billingPlanName, limits, mode, byok, holdsCredit };
}

/** Demo tokens count their tasks for life; workspaces count this month's, unless under BYOK. */
async function checkMonthlyQuota(tx: Tx, who: Admitter, workspace: Workspace, limits: BillingPlan, now: Date) {
  if (who.isDemo) {
    const [used] = await tx.select({ n: count() }).from(tasks).where(eq(tasks.tokenId, who.tokenId!));
    if (used!.n >= limits.monthly) {
      throw new AppError(
        'DEMO_LIMIT_REACHED',
        `a demo token runs at most ${limits.monthly} tasks; sign up for a full account`,
      );
    }
    return;
  }
  if (workspace.useByok) return;
  const [used] = await tx
    .select({ n: count() })
    .from(tasks)
    .where(and(eq(tasks.workspaceId, workspace.id), gte(tasks.createdAt, monthStart(now))));
  if (used!.n >= limits.monthly) {
    throw new AppError(
      'FREE_LIMIT_REACHED',
      `the ${workspace.plan} plan allows ${limits.monthly} tasks a month; upgrade or enable BYOK (POST /v1/me/byok)`,
    );
  }
}

/** The columns of a new task that the admission does not decide. */
export type NewTask = Omit<
  typeof tasks.$inferInsert,
  'id' | 'workspaceId' | 'createdBy' | 'tokenId' | 'mode' | 'status' | 'byok' | 'creditHeld' | 'createdAt'
>;

/** Inserts the admitted task as pending and holds its credit, in the admitting transaction. */
export async function insertAdmitted(
  tx: Tx,
  who: Admitter,
  admission: Admission,
  task: NewTask,
  now: Date,
): Promise<Task> {
  const id = newId();
  const [row] = await tx
    .insert(tasks)
    .values({
      ...task,
      id,
      workspaceId: admission.workspace.id,
      createdBy: who.accountId,
      tokenId: who.tokenId,
      mode: admission.mode,
      status: 'pending',
      byok: admission.byok,
      creditHeld: admission.holdsCredit,
      createdAt: now,
    })
    .returning();
  if (admission.holdsCredit) await holdCredit(tx, admission.workspace.id, id, now, who.accountId);
  return row!;
}
