import { afterEach, describe, expect, it } from 'vitest';
import { ModelClient } from '../../src/llm/client.js';
import { ContextWindowExceeded } from '../../src/llm/context-window.js';
import type { ModelChoice } from '../../src/llm/model-choice.js';
import { manualClock } from '../../src/clock.js';
import { OllamaContextUnconfirmed, cachedOllamaContext, withOllamaContext } from '../../src/llm/ollama.js';
import { languageModel } from '../../src/llm/providers.js';
import { UsageMeter } from '../../src/llm/usage.js';
import { type OllamaDouble, type OllamaOptions, startOllamaDouble } from '../support/scripted-model/ollama.js';
import { startScriptedModel } from '../support/scripted-model/server.js';

const MODEL = 'qwen2.5-coder:14b';
const SYSTEM = 'You fix code. Answer with SEARCH/REPLACE blocks only.';
// About 6,900 tokens by the double's count (and ~7,600 by the service's high estimate).
const ask = (chars: number) => ({
  system: SYSTEM,
  messages: [{ role: 'user' as const, content: 'y'.repeat(chars) }],
  maxOutputTokens: 2_000,
});

const open: OllamaDouble[] = [];
afterEach(async () => {
  for (const d of open.splice(0)) await d.close();
});
async function ollama(o: Partial<OllamaOptions> = {}) {
  const d = await startOllamaDouble({ model: MODEL, ...o });
  open.push(d);
  return d;
}
const choiceAt = (baseUrl: string, contextWindow?: ModelChoice['contextWindow']): ModelChoice => ({
  provider: 'openai',
  model: MODEL,
  apiKey: 'ollama-key-unused',
  baseUrl,
  source: 'byok',
  endpoint: 'account',
  ...(contextWindow ? { contextWindow } : {}),
});
const signal = new AbortController().signal;

function client(choice: ModelChoice) {
  return new ModelClient({
    choice,
    step: 'fixer',
    temperature: 0,
    model: languageModel(choice, fetch),
    config: { timeoutMs: 5_000, maxRetries: 0, retryBaseMs: 10, prices: {} },
    meter: new UsageMeter(),
    budget: { tokens: 1_000_000, usd: 100, spentTokens: 0, spentUsd: 0 },
    signal,
    log: () => {},
  });
}

describe('the Ollama double', () => {
  it('drops the start of a prompt past its context, system prompt first, without an error, num_ctx or not', async () => {
    const d = await ollama();
    const r = await fetch(`${d.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        num_ctx: 32_768,
        options: { num_ctx: 32_768 },
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: 'y'.repeat(25_000) },
        ],
      }),
    });
    expect(r.status).toBe(200);
    expect(d.seen).toEqual([{ system: undefined, kept: 1, dropped: 1 }]);
  });
});

describe('an Ollama base URL', () => {
  it('is refused before any chat request when the server’s context for the model cannot be confirmed', async () => {
    const d = await ollama({ serverContext: 32_768 });
    const stated = { tokens: 32_768, source: 'key' as const };
    // A window the key's owner states is not a confirmation: the server may not give it.
    const err = await withOllamaContext(choiceAt(d.url, stated), fetch, signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OllamaContextUnconfirmed);
    expect((err as Error).message).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/v1 is an Ollama server \(0\.12\.6\); its OpenAI-compatible endpoint ignores .* \(PARAMETER num_ctx 32768, then ollama create\).* OLLAMA_CONTEXT_LENGTH .*\/api\/ps reports it$/,
    );
    expect(d.paths).toEqual(['GET /api/version', 'POST /api/show', 'GET /api/ps']);
  });

  it('gets the Modelfile’s num_ctx as its window (the smaller one when the key states more)', async () => {
    const d = await ollama({ modelfileNumCtx: 16_384 });
    const found = await withOllamaContext(choiceAt(d.url), fetch, signal);
    expect(found.contextWindow).toEqual({ tokens: 16_384, source: 'ollama server' });
    const more = await withOllamaContext(choiceAt(d.url, { tokens: 65_536, source: 'key' }), fetch, signal);
    expect(more.contextWindow).toEqual({ tokens: 16_384, source: 'ollama server' });
    const less = await withOllamaContext(choiceAt(d.url, { tokens: 8_192, source: 'configuration' }), fetch, signal);
    expect(less.contextWindow).toEqual({ tokens: 8_192, source: 'configuration' });
  });

  it('gets a loaded model’s context from /api/ps (OLLAMA_CONTEXT_LENGTH)', async () => {
    const d = await ollama({ serverContext: 24_576, loaded: true });
    expect((await withOllamaContext(choiceAt(d.url), fetch, signal)).contextWindow).toEqual({
      tokens: 24_576,
      source: 'ollama server',
    });
  });

  it('then sends a prompt that fits whole, and fails one that does not before the server can cut it', async () => {
    const d = await ollama({ modelfileNumCtx: 16_384 });
    const c = client(await withOllamaContext(choiceAt(d.url), fetch, signal));
    expect(c.contextWindow).toBe(16_384);
    expect((await c.text(ask(40_000))).text).toBe('ok');
    expect(d.seen).toEqual([{ system: SYSTEM, kept: 2, dropped: 0 }]);

    const err = await c.text(ask(60_000)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextWindowExceeded);
    expect((err as Error).message).toContain('> window 16,384 (ollama server); not sent, never truncated. The Ollama');
    expect(d.seen).toHaveLength(1);
  });

  it('is told apart from other OpenAI-compatible servers, which are left as they are', async () => {
    const other = await startScriptedModel({ validKeys: ['k'] });
    try {
      const choice = choiceAt(other.urls.openai);
      expect(await withOllamaContext(choice, fetch, signal)).toBe(choice);
      expect(other.requests.map((r) => r.path)).toEqual(['/openai/api/version']);
    } finally {
      await other.close();
    }
  });
});

describe('the Ollama probe the service uses', () => {
  it('asks a server once per model for a few minutes, again after that, and the same for a non-Ollama server', async () => {
    const clock = manualClock();
    const probeOf = cachedOllamaContext(clock, 60_000);
    const d = await ollama({ modelfileNumCtx: 16_384 });
    const first = await Promise.all([probeOf(choiceAt(d.url), fetch, signal), probeOf(choiceAt(d.url), fetch, signal)]);
    expect(first.map((c) => c.contextWindow?.tokens)).toEqual([16_384, 16_384]);
    clock.advance(59_000);
    const stated = await probeOf(choiceAt(d.url, { tokens: 8_192, source: 'key' }), fetch, signal);
    expect(stated.contextWindow).toEqual({ tokens: 8_192, source: 'key' });
    expect(d.paths).toEqual(['GET /api/version', 'POST /api/show']);
    clock.advance(1_000);
    await probeOf(choiceAt(d.url), fetch, signal);
    expect(d.paths).toEqual(['GET /api/version', 'POST /api/show', 'GET /api/version', 'POST /api/show']);

    const other = await startScriptedModel({ validKeys: ['k'] });
    try {
      const choice = choiceAt(other.urls.openai);
      expect(await probeOf(choice, fetch, signal)).toBe(choice);
      expect(await probeOf(choice, fetch, signal)).toBe(choice);
      expect(other.requests.map((r) => r.path)).toEqual(['/openai/api/version']);
    } finally {
      await other.close();
    }
  });

  it('does not keep a refusal: the operator may be fixing the Modelfile', async () => {
    const probeOf = cachedOllamaContext(manualClock());
    const d = await ollama({ serverContext: 32_768 });
    for (let n = 0; n < 2; n++)
      await expect(probeOf(choiceAt(d.url), fetch, signal)).rejects.toBeInstanceOf(OllamaContextUnconfirmed);
    expect(d.paths.filter((p) => p === 'GET /api/version')).toHaveLength(2);
  });
});
