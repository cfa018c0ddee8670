import type { PlanName } from '../config.js';
import type { StepName } from '../step-contract/names.js';

export type TaskMode = 'preview' | 'pr';

export interface PlanLimits {
  /** Tasks per calendar month (UTC); for demo, tasks per token in all. */
  monthly: number;
  concurrent: number;
  maxFiles: number;
  maxRetries: number;
  mode: TaskMode;
}

export const PLANS: Record<PlanName, PlanLimits> = {
  free: { monthly: 10, concurrent: 1, maxFiles: 5, maxRetries: 1, mode: 'preview' },
  pro: { monthly: 200, concurrent: 3, maxFiles: 20, maxRetries: 2, mode: 'pr' },
  scale: { monthly: 2000, concurrent: 5, maxFiles: 50, maxRetries: 2, mode: 'pr' },
  demo: { monthly: 2, concurrent: 1, maxFiles: 5, maxRetries: 0, mode: 'preview' },
};

/** The steps a demo token's tasks run; the rest are skipped. */
export const DEMO_STAGES: StepName[] = ['planner', 'locator', 'inspector'];
export const DEMO_TOKEN_DAYS = 30;

export function planLimits(plan: string): PlanLimits {
  return PLANS[(plan in PLANS ? plan : 'free') as PlanName];
}

export function isPlanName(value: string): value is PlanName {
  return value in PLANS;
}
