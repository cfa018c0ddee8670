import type { BillingPlanName } from '../config/billing-plans.js';
import { AppError } from '../errors.js';
import { BILLING_PLANS, type BillingPlan } from './billing-plan.js';

/** The most attempts any plan allows: the bound of the request schemas (a plan's own is checked apart). */
export const MAX_ATTEMPTS = Math.max(...Object.values(BILLING_PLANS).map((p) => p.maxAttempts));

const attemptsWord = (n: number) => `${n} attempt${n === 1 ? '' : 's'}`;

/**
 * The plan's refusal of an explicit number of attempts (a task's, or a repository's default as it
 * is saved): 400 naming the field, the plan and its limit.
 */
export function checkAttemptsAllowed(
  field: string,
  attempts: number,
  billingPlan: Pick<BillingPlan, 'maxAttempts'>,
  billingPlanName: BillingPlanName,
): number {
  if (!Number.isInteger(attempts) || attempts < 1)
    throw new AppError('bad_request', `${field}: must be an integer of at least 1 (asked for ${attempts})`);
  if (attempts > billingPlan.maxAttempts)
    throw new AppError(
      'bad_request',
      `${field}: the ${billingPlanName} plan allows at most ${attemptsWord(billingPlan.maxAttempts)} per task ` +
        `(asked for ${attempts})`,
    );
  return attempts;
}

export interface AttemptsChoice {
  /** The task's own `attempts`, if it named some: refused (400) above the plan's limit. */
  requested?: number;
  /** The repository's default (its settings; null: none). */
  repoDefault: number | null;
  billingPlan: Pick<BillingPlan, 'maxAttempts'>;
  billingPlanName: BillingPlanName;
}

/**
 * How many fixer attempts a new fix task runs, decided once when it is created (docs/agent.md,
 * "Attempts"): the task's own number, else the repository's default, else 1. An explicit number
 * above the plan's limit is an error; a default above it (saved before the plan was lowered) is
 * held to the limit.
 */
export function chooseAttempts(c: AttemptsChoice): number {
  if (c.requested !== undefined) return checkAttemptsAllowed('attempts', c.requested, c.billingPlan, c.billingPlanName);
  return Math.max(1, Math.min(c.repoDefault ?? 1, c.billingPlan.maxAttempts));
}
