import { afterEach, describe, expect, it } from 'vitest';
import { CALC_INSIGHTS, CALC_PLAN, CALC_REPO, GOOD_FIX, stepOf } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../support/model-service.js';

let svc: ModelService | undefined;

afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

// A model's answer is not HTTP input: a BYOK endpoint (or a model quoting a binary file) may
// send NUL or an unpaired surrogate, which PostgreSQL's jsonb and text refuse. The task must
// go on, with the characters shown as U+FFFD, instead of failing on its own log write.
describe('model answers the database cannot hold as sent', { timeout: 150_000 }, () => {
  it('a plan and insights holding NUL and lone surrogates are stored with U+FFFD, and the run finishes', async () => {
    svc = await startModelService({}, 'openai');
    const { h, model } = svc;
    h.github.createRepo('acme', 'calc', { files: CALC_REPO });
    model.respond((req) => {
      switch (stepOf(req)) {
        case 'planner':
          return {
            json: { ...CALC_PLAN, summary: `${CALC_PLAN.summary}\u0000 (nul)`, risks: ['lone \ud800 surrogate'] },
          };
        case 'locator':
          return { json: { ranking: [{ path: 'calc/ops.py', reason: 'defines add()\u0000' }] } };
        case 'inspector':
          return { json: { ...CALC_INSIGHTS, summary: `${CALC_INSIGHTS.summary} \u0000` } };
        case 'fixer':
          return { text: GOOD_FIX };
        default:
          return undefined;
      }
    });
    const { auth } = await newAccount(h, { plan: 'free' });
    const { task, logs, byStep } = await runFixTask(h, auth, `${h.github.webUrl}/acme/calc`, 'done');
    expect(logs.map((l) => `${l.step}:${l.status}`)).toEqual([
      'planner:done',
      'locator:done',
      'inspector:done',
      'fixer:done',
      'validator:done',
      'pr:skipped',
    ]);
    const plan = byStep('planner')[0]!.output;
    expect(plan.summary).toBe(`${CALC_PLAN.summary}\ufffd (nul)`);
    expect(plan.risks).toEqual(['lone \ufffd surrogate']);
    expect(byStep('inspector')[0]!.output.summary).toBe(`${CALC_INSIGHTS.summary} \ufffd`);
    expect(task.error ?? null).toBeNull();
  });
});
