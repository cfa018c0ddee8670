import { APICallError } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ConfigError } from '../../src/config/error.js';
import { loadConfig } from '../../src/config/config.js';
import { FALLBACK_PRICE, costUsd, priceOf } from '../../src/llm/pricing.js';
import { backoffMs, isTransient, retryAfterMs } from '../../src/llm/retry.js';
import { BudgetExceeded, UsageMeter, outputAllowance } from '../../src/llm/usage.js';
import { truncateDiff } from '../../src/steps/fix/diff-summary.js';

const apiError = (statusCode: number, headers: Record<string, string> = {}) =>
  new APICallError({
    message: 'x',
    url: 'http://p/v1',
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
    isRetryable: statusCode >= 500 || statusCode === 429,
  });

describe('model layer: prices, budget, retries, configuration', () => {
  it(
    'prices dated and prefixed model ids by their longest table entry; unknown models at the fallback, ' +
      'overridable',
    () => {
      expect(priceOf('claude-sonnet-4-5-20250929')).toMatchObject({
        input: 3,
        output: 15,
        matched: 'claude-sonnet-4-5',
      });
      expect(priceOf('models/gemini-2.5-flash-lite')).toMatchObject({ matched: 'gemini-2.5-flash-lite' });
      expect(priceOf('gpt-4.1-mini')).toMatchObject({ input: 0.4, matched: 'gpt-4.1-mini' });
      expect(priceOf('llama3.1:8b')).toMatchObject({
        input: FALLBACK_PRICE[0],
        output: FALLBACK_PRICE[1],
        matched: null,
      });
      expect(priceOf('llama3.1:8b', { 'llama3.1': [0, 0] })).toMatchObject({
        input: 0,
        output: 0,
        matched: 'llama3.1',
      });
      expect(costUsd(priceOf('gpt-4.1'), 1_000_000, 500_000)).toBeCloseTo(2 + 4, 9);
    },
  );

  it('allows only the output the budget covers, and refuses a call the budget cannot take', () => {
    const price = priceOf('gpt-4.1');
    const meter = new UsageMeter();
    const budget = { tokens: 10_000, usd: 100, spentTokens: 4_000, spentUsd: 0 };
    expect(outputAllowance(budget, meter, price, 1_000, 8_000)).toBe(5_000);
    meter.add(4_800, 0.01);
    expect(() => outputAllowance(budget, meter, price, 1_000, 8_000)).toThrow(BudgetExceeded);
    // the dollar limit binds too: $0.01 left at $8/M output covers 1,250 tokens minus the input's cost
    const usd = { tokens: 1_000_000, usd: 0.02, spentTokens: 0, spentUsd: 0.01 };
    expect(outputAllowance(usd, new UsageMeter(), price, 1_000, 8_000)).toBe(1_000);
    expect(() => outputAllowance({ ...usd, spentUsd: 0.0199 }, new UsageMeter(), price, 1_000, 8_000)).toThrow(
      /\$0\.02/,
    );
  });

  it('retries 429, 5xx and dropped connections, not 400 or 401; honours retry-after', () => {
    expect(isTransient(apiError(429))).toBe(true);
    expect(isTransient(apiError(503))).toBe(true);
    expect(isTransient(apiError(400))).toBe(false);
    expect(isTransient(apiError(401))).toBe(false);
    expect(isTransient(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } }))).toBe(true);
    expect(retryAfterMs(apiError(429, { 'retry-after': '7' }), 0)).toBe(7_000);
    expect(retryAfterMs(apiError(429, { 'Retry-After-Ms': '250' }), 0)).toBe(250);
    const now = Date.parse('2026-11-22T12:00:00Z');
    expect(retryAfterMs(apiError(429, { 'retry-after': 'Sun, 22 Nov 2026 12:00:05 GMT' }), now)).toBe(5_000);
    expect(backoffMs(apiError(429, { 'retry-after': '3600' }), 0, 1_000)).toBe(60_000);
    const b = backoffMs(apiError(500), 2, 1_000);
    expect(b).toBeGreaterThanOrEqual(2_000);
    expect(b).toBeLessThanOrEqual(4_000);
  });

  it('reads per-step models, budgets and prices from the environment, naming the variable on a bad value', () => {
    const c = loadConfig({
      EMEND_MODEL_FIXER: 'anthropic:claude-opus-4-1',
      EMEND_MODEL_PLANNER: 'gpt-5',
      EMEND_TASK_BUDGET_USD_PRO: '2.5',
      EMEND_MODEL_PRICES: '{"llama3.1": [0, 0]}',
    });
    expect(c.llm.models).toEqual({
      fixer: { provider: 'anthropic', model: 'claude-opus-4-1' },
      planner: { provider: undefined, model: 'gpt-5' },
    });
    expect(c.llm.taskBudgets.pro).toEqual({ tokens: 1_000_000, usd: 2.5 });
    expect(c.llm.prices).toEqual({ 'llama3.1': [0, 0] });
    const bad = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (err) {
        return err as ConfigError;
      }
      throw new Error('expected a ConfigError');
    };
    expect(bad({ EMEND_MODEL_FIXER: 'openai:' }).variable).toBe('EMEND_MODEL_FIXER');
    expect(bad({ EMEND_MODEL_LOCATOR: 'gpt 4' }).variable).toBe('EMEND_MODEL_LOCATOR');
    // a colon after something that is not a provider is part of the name (Ollama's llama3.1:8b)
    expect(loadConfig({ EMEND_MODEL_FIXER: 'llama3.1:8b' }).llm.models.fixer).toEqual({
      provider: undefined,
      model: 'llama3.1:8b',
    });
    expect(bad({ EMEND_LLM_PROVIDER: 'cohere' }).variable).toBe('EMEND_LLM_PROVIDER');
    expect(bad({ EMEND_MODEL_PRICES: '{"x": [1]}' }).variable).toBe('EMEND_MODEL_PRICES');
    expect(bad({ EMEND_TASK_BUDGET_TOKENS_FREE: 'lots' }).variable).toBe('EMEND_TASK_BUDGET_TOKENS_FREE');
  });

  it('cuts diff_summary to 4 KB on a line boundary with a marker', () => {
    const line = (i: number) => `+line ${String(i).padStart(4, '0')} ${'x'.repeat(40)}\n`;
    const diff = Array.from({ length: 200 }, (_, i) => line(i)).join('');
    const cut = truncateDiff(diff);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(4096);
    const [body, marker] = [cut.slice(0, cut.lastIndexOf('... diff')), cut.slice(cut.lastIndexOf('... diff'))];
    expect(diff.startsWith(body)).toBe(true);
    expect(body.endsWith('\n')).toBe(true);
    expect(marker).toMatch(
      new RegExp(
        `^\\.\\.\\. diff truncated: ${Buffer.byteLength(body)} of ${Buffer.byteLength(diff)} bytes shown \\.\\.\\.\\n$`,
      ),
    );
    expect(truncateDiff('small\n')).toBe('small\n');
  });
});
