import type { BillingPlanName } from '../config/billing-plans.js';
import type { FixerKind } from '../config/config.js';
import { AppError } from '../errors.js';
import type { BillingPlan } from '../billing/billing-plan.js';

/** Every plan has it: where a default the plan refuses falls back to. */
const FALLBACK: FixerKind = 'pipeline';

/** The plan's refusal of an explicit choice: 400 naming the field, the fixer and the plan. */
export function checkFixerAllowed(
  field: string,
  fixer: FixerKind,
  billingPlan: Pick<BillingPlan, 'fixers'>,
  billingPlanName: BillingPlanName,
): FixerKind {
  if (!billingPlan.fixers.includes(fixer))
    throw new AppError(
      'bad_request',
      `${field}: the ${billingPlanName} plan does not offer the ${fixer} fixer (it offers: ${billingPlan.fixers.join(', ')})`,
    );
  return fixer;
}

export interface FixerChoice {
  /** The task's own `fixer`, if it named one: refused (400) when the plan does not offer it. */
  requested?: FixerKind;
  /** The workspace's saved default (null: none). */
  workspaceDefault: FixerKind | null;
  /** The operator's (EMEND_FIXER). */
  operatorDefault: FixerKind;
  billingPlan: Pick<BillingPlan, 'fixers'>;
  billingPlanName: BillingPlanName;
}

/**
 * Which fixer a new fix task runs, decided once when it is created (docs/agent.md, "Choosing the
 * fixer"): the task's choice, else the account's default, else the operator's. An explicit
 * choice the plan refuses is an error; a default it refuses (the operator's, or the account's
 * saved before a downgrade) falls back to the pipeline, which every plan offers.
 */
export function chooseFixer(c: FixerChoice): FixerKind {
  if (c.requested !== undefined) return checkFixerAllowed('fixer', c.requested, c.billingPlan, c.billingPlanName);
  const fallback = c.workspaceDefault ?? c.operatorDefault;
  return c.billingPlan.fixers.includes(fallback) ? fallback : FALLBACK;
}
