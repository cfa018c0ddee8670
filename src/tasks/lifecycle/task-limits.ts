import { eq } from 'drizzle-orm';
import { type BillingPlan, billingPlan, isBillingPlanName } from '../../billing/billing-plan.js';
import type { BillingPlanName } from '../../config/billing-plans.js';
import { apiTokens, workspaces } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import type { Task } from '../task.js';

export interface TaskLimits {
  /** The task came with a demo token: demo limits, and the steps after the demo steps skipped. */
  demo: boolean;
  limits: BillingPlan;
  /** The billing plan whose per-task model budget the run has. */
  billingPlan: BillingPlanName;
}

const knownBillingPlan = (name: string | undefined) => (name && isBillingPlanName(name) ? name : 'free');

/** The limits of the task's plan, and its model budget: a demo token's own, else the workspace's plan. */
export async function taskLimits(deps: Pick<Deps, 'db'>, task: Task): Promise<TaskLimits> {
  const [workspace] = await deps.db.select().from(workspaces).where(eq(workspaces.id, task.workspaceId));
  const demo = task.tokenId
    ? (await deps.db.select({ kind: apiTokens.kind }).from(apiTokens).where(eq(apiTokens.id, task.tokenId)))[0]
        ?.kind === 'demo'
    : false;
  return {
    demo,
    limits: billingPlan(demo ? 'demo' : (workspace?.plan ?? 'free')),
    billingPlan: demo ? 'demo' : knownBillingPlan(workspace?.plan),
  };
}
