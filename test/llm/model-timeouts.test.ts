import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ModelCallFailed, ModelClient } from '../../src/llm/client.js';
import { languageModel } from '../../src/llm/providers.js';
import { UsageMeter } from '../../src/llm/usage.js';
import { type Provider, type ScriptedModel, startScriptedModel } from '../support/scripted-model/server.js';

// The worker runs with --expose-gc (vitest.config.ts execArgv). Without it this file cannot show
// anything, so it fails rather than pass quietly.
const gc = (globalThis as { gc?: () => void }).gc;

const KEY = 'sk-timeouts-0123456789';
const MODELS: Record<Provider, string> = {
  openai: 'gpt-4.1',
  anthropic: 'claude-sonnet-4-5',
  google: 'gemini-2.5-pro',
};
const ask = { system: 'You answer briefly.', messages: [{ role: 'user' as const, content: 'What is 2 + 2?' }] };
const Answer = z.object({ answer: z.number() });

let model: ScriptedModel;
beforeAll(async () => {
  model = await startScriptedModel({ validKeys: [KEY] });
});
afterAll(async () => {
  await model.close();
});

function client(provider: Provider, opts: { timeoutMs: number; maxRetries: number }) {
  const meter = new UsageMeter();
  const logs: { message: string; data?: Record<string, unknown> }[] = [];
  const choice = {
    provider,
    model: MODELS[provider],
    apiKey: KEY,
    baseUrl: model.urls[provider],
    source: 'managed' as const,
    endpoint: 'operator' as const,
  };
  const c = new ModelClient({
    choice,
    step: 'fixer',
    model: languageModel(choice, fetch),
    config: { timeoutMs: opts.timeoutMs, maxRetries: opts.maxRetries, retryBaseMs: 10, prices: {} },
    meter,
    temperature: 0,
    budget: { tokens: 1_000_000, usd: 100, spentTokens: 0, spentUsd: 0 },
    signal: new AbortController().signal,
    log: (message, data) => logs.push({ message, data }),
  });
  return { c, meter, logs };
}

/** Runs `work` while forcing full garbage collections every 25 ms, as a busy service would see. */
async function collectingGarbage<T>(work: () => Promise<T>): Promise<T> {
  const timer = setInterval(() => gc!(), 25);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

const billedTotal = () => model.billed().input + model.billed().output;

describe('model calls time out even when garbage is collected during the wait', { timeout: 30_000 }, () => {
  let stallsBefore = 0;
  let billedBefore = 0;
  beforeEach(() => {
    expect(gc, 'the test worker must run with --expose-gc').toBeTypeOf('function');
    stallsBefore = model.stalls();
    billedBefore = billedTotal();
  });

  it.each(['openai', 'anthropic', 'google'] as const)(
    'a stalled stream (%s: headers sent, then nothing) times out, is retried, and only the answer is billed',
    async (provider) => {
      const { c, meter, logs } = client(provider, { timeoutMs: 1_500, maxRetries: 2 });
      const callsBefore = model.calls.length;
      model.enqueue({ stall: true }, { text: 'Four.' });
      const { text } = await collectingGarbage(() => c.text(ask));
      expect(text).toBe('Four.');
      expect(model.stalls() - stallsBefore).toBe(1);
      expect(model.calls.slice(callsBefore).map((r) => r.stream)).toEqual([true, true]);
      expect(logs).toEqual([
        {
          message: 'model call failed; retrying',
          data: expect.objectContaining({
            problem: `${provider} ${MODELS[provider]} did not answer in time`,
            retry: 1,
          }),
        },
      ]);
      // one billed answer, exactly what the provider reported for it; the stall cost nothing
      expect(meter.calls).toBe(1);
      expect(meter.tokens).toBe(billedTotal() - billedBefore);
    },
  );

  it('a stalled plain call (nothing at all comes back) times out, is retried, and only the answer is billed', async () => {
    const { c, meter, logs } = client('openai', { timeoutMs: 1_500, maxRetries: 2 });
    model.enqueue({ stall: true }, { json: { answer: 4 } });
    const value = await collectingGarbage(() => c.object({ ...ask, schema: Answer, name: 'answer' }));
    expect(value).toEqual({ answer: 4 });
    expect(model.stalls() - stallsBefore).toBe(1);
    expect(logs.map((l) => l.data?.problem)).toEqual(['openai gpt-4.1 did not answer in time']);
    expect(meter.calls).toBe(1);
    expect(meter.tokens).toBe(billedTotal() - billedBefore);
  });

  it('a call that stalls on every try fails the step saying so, and bills nothing', async () => {
    const { c, meter } = client('anthropic', { timeoutMs: 1_000, maxRetries: 1 });
    model.enqueue({ stall: true }, { stall: true });
    const failure = await collectingGarbage(() =>
      c.text(ask).then(
        () => undefined,
        (err: unknown) => err,
      ),
    );
    expect(failure).toBeInstanceOf(ModelCallFailed);
    expect((failure as Error).message).toBe('anthropic claude-sonnet-4-5 did not answer in time (after 2 tries)');
    expect(model.stalls() - stallsBefore).toBe(2);
    expect(meter.calls).toBe(0);
    expect(meter.tokens).toBe(0);
    expect(billedTotal()).toBe(billedBefore);
  });
});
