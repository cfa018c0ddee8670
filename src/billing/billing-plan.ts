import type { BillingPlanName } from '../config/billing-plans.js';
import type { Config, FixerKind } from '../config/config.js';
import { DEMO_STEPS } from '../step-contract/names.js';

export type TaskMode = 'preview' | 'pr';

/**
 * An account's billing plan: what it may run (quota, concurrency, files, retries, mode, fixers and
 * the agent's limits). Not the planner's plan, which is the `planner` step's output (src/step-contract).
 */
export interface BillingPlan {
  /** Tasks per calendar month (UTC); for demo, tasks per token in all. */
  monthly: number;
  concurrent: number;
  maxFiles: number;
  maxRetries: number;
  mode: TaskMode;
  /** The fixers a task may choose, or an account make its default (docs/agent.md); every plan has `pipeline`. */
  fixers: readonly FixerKind[];
  /**
   * The agent fixer's model turns and wall time on this plan; the operator's EMEND_AGENT_TURNS and
   * EMEND_AGENT_WALL_S cap them (agentLimits). A plan without the agent still has them: they bound
   * an agent task admitted on another plan that runs after its account moved here, and
   * `emend eval --fixer agent` on this plan.
   */
  agentTurns: number;
  agentWallMs: number;
  /**
   * The fixer attempts a fix task may ask for (docs/agent.md, "Attempts"): each a fixer run in its
   * own tree, validated, the best kept. They run within the plan's `concurrent`.
   */
  maxAttempts: number;
}

const BOTH: readonly FixerKind[] = ['pipeline', 'agent'];
const PIPELINE: readonly FixerKind[] = ['pipeline'];

export const BILLING_PLANS: Record<BillingPlanName, BillingPlan> = {
  free: {
    monthly: 10,
    concurrent: 1,
    maxFiles: 5,
    maxRetries: 1,
    mode: 'preview',
    fixers: PIPELINE,
    agentTurns: 20,
    agentWallMs: 600_000,
    maxAttempts: 1,
  },
  pro: {
    monthly: 200,
    concurrent: 3,
    maxFiles: 20,
    maxRetries: 2,
    mode: 'pr',
    fixers: BOTH,
    agentTurns: 40,
    agentWallMs: 1_200_000,
    maxAttempts: 3,
  },
  scale: {
    monthly: 2000,
    concurrent: 5,
    maxFiles: 50,
    maxRetries: 2,
    mode: 'pr',
    fixers: BOTH,
    agentTurns: 80,
    agentWallMs: 2_400_000,
    maxAttempts: 5,
  },
  demo: {
    monthly: 2,
    concurrent: 1,
    maxFiles: 5,
    maxRetries: 0,
    mode: 'preview',
    fixers: PIPELINE,
    agentTurns: 10,
    agentWallMs: 300_000,
    maxAttempts: 1,
  },
};

/**
 * The agent fixer's limits for a task on this plan: the plan's, capped by the operator's
 * (EMEND_AGENT_TURNS, EMEND_AGENT_WALL_S), whichever is lower.
 */
export function agentLimits(
  plan: Pick<BillingPlan, 'agentTurns' | 'agentWallMs'>,
  operator: Pick<Config['fixer'], 'agentTurns' | 'agentWallMs'>,
): { turns: number; wallMs: number } {
  return {
    turns: Math.min(plan.agentTurns, operator.agentTurns),
    wallMs: Math.min(plan.agentWallMs, operator.agentWallMs),
  };
}

/** The steps a demo token's tasks run; the rest are skipped. */
export const DEMO_STAGES = DEMO_STEPS;
export const DEMO_TOKEN_DAYS = 30;

/** The billing plan of that name; an unknown name reads as free. */
export function billingPlan(name: string): BillingPlan {
  return BILLING_PLANS[billingPlanNameOf(name)];
}

/** A stored plan name as a plan name; an unknown one reads as free, as billingPlan reads it. */
export function billingPlanNameOf(name: string): BillingPlanName {
  return isBillingPlanName(name) ? name : 'free';
}

export function isBillingPlanName(value: string): value is BillingPlanName {
  return value in BILLING_PLANS;
}
