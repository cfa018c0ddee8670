import { afterEach, describe, expect, it } from 'vitest';
import { CALC_REPO, scriptCalcRun, stepOf } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, type Provider, runFixTask, startModelService } from '../support/model-service.js';
import type { ModelRequest } from '../support/scripted-model/server.js';

let svc: ModelService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

/** The temperature as each provider's wire format carries it. */
function temperatureOf(call: ModelRequest): unknown {
  const body = call.body as { temperature?: unknown; generationConfig?: { temperature?: unknown } };
  return call.provider === 'google' ? body.generationConfig?.temperature : body.temperature;
}

/** Runs a fix task on `provider` and returns the temperature each step's calls were sent with. */
async function temperatures(provider: Provider, env: Record<string, string>) {
  svc = await startModelService(env, provider);
  const { h, model } = svc;
  h.github.createRepo('acme', 'calc', { files: CALC_REPO });
  scriptCalcRun(model);
  const { auth } = await newAccount(h, { plan: 'free' });
  await runFixTask(h, auth, `${h.github.webUrl}/acme/calc`, 'done');
  expect(model.calls.every((c) => c.provider === provider)).toBe(true);
  const sent: Record<string, unknown[]> = {};
  for (const call of model.calls) {
    const step = stepOf(call) ?? 'unknown';
    sent[step] = [...(sent[step] ?? []), temperatureOf(call)];
  }
  return sent;
}

describe('every step calls its model at temperature 0 unless the operator sets another', { timeout: 120_000 }, () => {
  it('openai: 0 for every step by default', async () => {
    expect(await temperatures('openai', {})).toEqual({ planner: [0], locator: [0], inspector: [0], fixer: [0] });
  });

  it('anthropic: EMEND_MODEL_TEMPERATURE_FIXER sets the fixer alone', async () => {
    expect(await temperatures('anthropic', { EMEND_MODEL_TEMPERATURE_FIXER: '0.4' })).toEqual({
      planner: [0],
      locator: [0],
      inspector: [0],
      fixer: [0.4],
    });
  });

  it('google: EMEND_MODEL_TEMPERATURE sets every step, a per-step value wins over it', async () => {
    const env = { EMEND_MODEL_TEMPERATURE: '0.7', EMEND_MODEL_TEMPERATURE_PLANNER: '0.2' };
    expect(await temperatures('google', env)).toEqual({
      planner: [0.2],
      locator: [0.7],
      inspector: [0.7],
      fixer: [0.7],
    });
  });
});
