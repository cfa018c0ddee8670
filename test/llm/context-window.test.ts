import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/error.js';
import { loadConfig } from '../../src/config/config.js';
import { ModelClient } from '../../src/llm/client.js';
import { ContextWindowExceeded, contextWindowOf } from '../../src/llm/context-window.js';
import type { ModelChoice } from '../../src/llm/model-choice.js';
import { languageModel } from '../../src/llm/providers.js';
import { UsageMeter } from '../../src/llm/usage.js';
import { type ScriptedModel, startScriptedModel } from '../support/scripted-model/server.js';

const KEY = 'sk-window-0123456789';
let model: ScriptedModel;
beforeAll(async () => {
  model = await startScriptedModel({ validKeys: [KEY] });
});
afterAll(async () => {
  await model.close();
});

const bad = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
};

describe('EMEND_MODEL_CONTEXT_<STEP>', () => {
  it('sets a step’s window, and a value out of bounds or not an integer stops the start-up naming it', () => {
    const config = loadConfig({ EMEND_MODEL_CONTEXT_FIXER: '32768', EMEND_MODEL_CONTEXT_LOCATOR: ' 8192 ' });
    expect(config.llm.contextWindows).toEqual({ fixer: 32_768, locator: 8_192 });
    expect(loadConfig({}).llm.contextWindows).toEqual({});
    expect(bad({ EMEND_MODEL_CONTEXT_PLANNER: '32k' }).message).toBe(
      'EMEND_MODEL_CONTEXT_PLANNER: expected an integer, got "32k"',
    );
    expect(bad({ EMEND_MODEL_CONTEXT_INSPECTOR: '512' }).message).toBe(
      'EMEND_MODEL_CONTEXT_INSPECTOR: must be between 1024 and 10000000, got 512',
    );
  });
});

describe('the window a model is given', () => {
  const official = 'https://api.openai.com/v1';
  it('is the stated one, else the known model’s, else the provider’s at its own address, else small', () => {
    const at = (model: string, baseUrl: string, provider: ModelChoice['provider'] = 'openai') =>
      contextWindowOf({ provider, model, baseUrl });
    const stated = { tokens: 65_536, source: 'key' as const };
    expect(contextWindowOf({ provider: 'openai', model: 'gpt-4o', baseUrl: official, contextWindow: stated })).toBe(
      stated,
    );
    expect(at('gpt-4o-2024-08-06', official)).toEqual({ tokens: 128_000, source: 'known model' });
    expect(at('claude-sonnet-4-5-20250929', 'https://api.anthropic.com/v1', 'anthropic').tokens).toBe(200_000);
    expect(at('models/gemini-2.5-pro', 'https://gateway.example/v1beta', 'google').tokens).toBe(1_048_576);
    expect(at('o1-preview', `${official}/`)).toEqual({ tokens: 128_000, source: 'provider default' });
    expect(at('llama3.1:8b', 'http://localhost:11434/v1')).toEqual({ tokens: 8_192, source: 'unknown model' });
  });
});

function client(contextWindow: number) {
  const meter = new UsageMeter();
  const choice: ModelChoice = {
    provider: 'openai',
    model: 'qwen2.5-coder:14b',
    apiKey: KEY,
    baseUrl: model.urls.openai,
    source: 'byok',
    endpoint: 'operator',
    contextWindow: { tokens: contextWindow, source: 'key' },
  };
  const c = new ModelClient({
    choice,
    step: 'fixer',
    model: languageModel(choice, fetch),
    config: { timeoutMs: 5_000, maxRetries: 3, retryBaseMs: 10, prices: {} },
    meter,
    temperature: 0,
    budget: { tokens: 1_000_000, usd: 100, spentTokens: 0, spentUsd: 0 },
    signal: new AbortController().signal,
    log: () => {},
  });
  return { c, meter };
}

describe('a prompt that cannot fit the window', () => {
  // 40,000 characters: about 11,000 tokens by the service's (high) estimate.
  const ask = { system: 'You fix code.', messages: [{ role: 'user' as const, content: 'x'.repeat(40_000) }] };

  it('fails before any request, unbilled and not retried, naming the numbers and the settings', async () => {
    const { c, meter } = client(8_192);
    expect(c.contextWindow).toBe(8_192);
    const before = model.requests.length;
    const err = await c.text({ ...ask, maxOutputTokens: 2_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextWindowExceeded);
    expect((err as Error).message).toMatch(
      /^the fixer prompt does not fit qwen2\.5-coder:14b's context window: prompt ≈ 11,\d{3} tokens \+ output 2,000 > window 8,192 \(key\); not sent, never truncated\. .*EMEND_MODEL_CONTEXT_FIXER or the key's context_window$/,
    );
    expect(model.requests.length).toBe(before);
    expect(meter).toMatchObject({ tokens: 0, calls: 0, costUsd: 0 });
  });

  it('counts the output limit: a prompt that fits alone but not with its answer fails too', async () => {
    const { c } = client(12_500);
    const err = await c.text({ ...ask, maxOutputTokens: 2_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextWindowExceeded);
    expect((err as Error).message).toContain('+ output 2,000 > window 12,500');
  });

  it('sends a prompt that fits, whole', async () => {
    const { c } = client(16_384);
    model.enqueue({ text: 'done' });
    const before = model.calls.length;
    const { text } = await c.text({ ...ask, maxOutputTokens: 2_000 });
    expect(text).toBe('done');
    expect(model.calls.length).toBe(before + 1);
    expect(JSON.stringify(model.calls.at(-1)!.messages)).toContain('x'.repeat(40_000));
  });
});
