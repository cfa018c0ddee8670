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
  plan: Pick<BillingPlan, 'fixers'>,
  planName: BillingPlanName,
): FixerKind {
  if (!plan.fixers.includes(fixer))
    throw new AppError(
      'bad_request',
      `${field}: the ${planName} plan does not offer the ${fixer} fixer (it offers: ${plan.fixers.join(', ')})`,
    );
  return fixer;
}

export interface FixerChoice {
  /** The task's own `fixer`, if it named one: refused (400) when the plan does not offer it. */
  requested?: FixerKind;
  /** The account's saved default (null: none). */
  accountDefault: FixerKind | null;
  /** The operator's (EMEND_FIXER). */
  operatorDefault: FixerKind;
  plan: Pick<BillingPlan, 'fixers'>;
  planName: BillingPlanName;
}

/**
 * Which fixer a new fix task runs, decided once when it is created (docs/agent.md, "Choosing the
 * fixer"): the task's choice, else the account's default, else the operator's. An explicit
 * choice the plan refuses is an error; a default it refuses (the operator's, or the account's
 * saved before a downgrade) falls back to the pipeline, which every plan offers.
 */
export function chooseFixer(c: FixerChoice): FixerKind {
  if (c.requested !== undefined) return checkFixerAllowed('fixer', c.requested, c.plan, c.planName);
  const fallback = c.accountDefault ?? c.operatorDefault;
  return c.plan.fixers.includes(fallback) ? fallback : FALLBACK;
}
