/**
 * The billing plans' names, once. They live here, in the base layer, because the config sets each
 * plan's budget and cannot import the accounts domain; the plans' limits are in
 * src/billing/billing-plan.ts. The assignable ones are those an operator can put an account on;
 * demo accounts are made by POST /v1/demo/token.
 */
export const ASSIGNABLE_BILLING_PLANS = ['free', 'pro', 'scale'] as const;
export const BILLING_PLAN_NAMES = [...ASSIGNABLE_BILLING_PLANS, 'demo'] as const;
export type BillingPlanName = (typeof BILLING_PLAN_NAMES)[number];
