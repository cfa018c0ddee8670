import type { BillingPlanName } from '../config/billing-plans.js';
import { DEMO_STEPS } from '../step-contract/names.js';

export type TaskMode = 'preview' | 'pr';

/**
 * An account's billing plan: what it may run (quota, concurrency, files, retries, mode). Not the
 * planner's plan, which is the `planner` step's output (src/step-contract).
 */
export interface BillingPlan {
  /** Tasks per calendar month (UTC); for demo, tasks per token in all. */
  monthly: number;
  concurrent: number;
  maxFiles: number;
  maxRetries: number;
  mode: TaskMode;
}

export const BILLING_PLANS: Record<BillingPlanName, BillingPlan> = {
  free: { monthly: 10, concurrent: 1, maxFiles: 5, maxRetries: 1, mode: 'preview' },
  pro: { monthly: 200, concurrent: 3, maxFiles: 20, maxRetries: 2, mode: 'pr' },
  scale: { monthly: 2000, concurrent: 5, maxFiles: 50, maxRetries: 2, mode: 'pr' },
  demo: { monthly: 2, concurrent: 1, maxFiles: 5, maxRetries: 0, mode: 'preview' },
};

/** The steps a demo token's tasks run; the rest are skipped. */
export const DEMO_STAGES = DEMO_STEPS;
export const DEMO_TOKEN_DAYS = 30;

/** The billing plan of that name; an unknown name reads as free. */
export function billingPlan(name: string): BillingPlan {
  return BILLING_PLANS[(name in BILLING_PLANS ? name : 'free') as BillingPlanName];
}

export function isBillingPlanName(value: string): value is BillingPlanName {
  return value in BILLING_PLANS;
}
