import { describe, expect, it } from 'vitest';
import { BILLING_PLANS, agentLimits } from '../../src/billing/billing-plan.js';
import { chooseFixer } from '../../src/workspaces/fixer-choice.js';
import { BILLING_PLAN_NAMES } from '../../src/config/billing-plans.js';
import { AppError } from '../../src/errors.js';

// The plans' fixers and the order of precedence, without a server (the HTTP behaviour is
// test/http/fixer-choice.db.test.ts).

describe('the plans’ fixers', () => {
  it('every plan offers the pipeline (where a refused default falls back); pro and scale the agent, free and demo not', () => {
    for (const name of BILLING_PLAN_NAMES) expect(BILLING_PLANS[name].fixers, name).toContain('pipeline');
    expect(BILLING_PLAN_NAMES.filter((n) => BILLING_PLANS[n].fixers.includes('agent'))).toEqual(['pro', 'scale']);
  });

  it('the agent’s limits are the plan’s under the operator’s ceiling', () => {
    expect(agentLimits(BILLING_PLANS.scale, { agentTurns: 100, agentWallMs: 3_600_000 })).toEqual({
      turns: 80,
      wallMs: 2_400_000,
    });
    expect(agentLimits(BILLING_PLANS.scale, { agentTurns: 6, agentWallMs: 60_000 })).toEqual({
      turns: 6,
      wallMs: 60_000,
    });
  });
});

describe('chooseFixer', () => {
  const pro = { billingPlan: BILLING_PLANS.pro, billingPlanName: 'pro' as const };
  const free = { billingPlan: BILLING_PLANS.free, billingPlanName: 'free' as const };

  it('takes the task’s choice, else the account’s default, else the operator’s', () => {
    expect(chooseFixer({ ...pro, requested: 'pipeline', workspaceDefault: 'agent', operatorDefault: 'agent' })).toBe(
      'pipeline',
    );
    expect(chooseFixer({ ...pro, workspaceDefault: 'agent', operatorDefault: 'pipeline' })).toBe('agent');
    expect(chooseFixer({ ...pro, workspaceDefault: 'pipeline', operatorDefault: 'agent' })).toBe('pipeline');
    expect(chooseFixer({ ...pro, workspaceDefault: null, operatorDefault: 'agent' })).toBe('agent');
  });

  it('refuses an explicit choice the plan does not offer, naming it and the plan; a refused default falls back to pipeline', () => {
    expect(() =>
      chooseFixer({ ...free, requested: 'agent', workspaceDefault: null, operatorDefault: 'pipeline' }),
    ).toThrow(new AppError('bad_request', 'fixer: the free plan does not offer the agent fixer (it offers: pipeline)'));
    expect(chooseFixer({ ...free, workspaceDefault: 'agent', operatorDefault: 'agent' })).toBe('pipeline');
    expect(chooseFixer({ ...free, workspaceDefault: null, operatorDefault: 'agent' })).toBe('pipeline');
  });
});
