import { type APICallError, type ModelMessage, generateText, streamText } from 'ai';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ModelRequest, ScriptedModel } from '../support/scripted-model/server.js';
import { KEYS, PROVIDERS, clientFor, useScriptedModel } from './clients.js';

const CONVERSATION: ModelMessage[] = [
  { role: 'user', content: 'The tests in shop/tax.py fail.' },
  { role: 'assistant', content: 'Which test fails?' },
  { role: 'user', content: [{ type: 'text', text: 'test_tax, with a rounding error.' }] },
];

async function raw(url: string, init: RequestInit): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('what the scripted model double records and how it is scripted', () => {
  const scripted = useScriptedModel();
  let model: ScriptedModel;
  beforeEach(() => {
    model = scripted();
  });

  it.each(PROVIDERS)('normalises a %s request: key, system, messages, structured, stream', async (provider) => {
    model.enqueue({ text: 'Round half up.' });
    await generateText({
      model: clientFor(model, provider),
      system: 'You fix Python code.',
      messages: CONVERSATION,
      maxRetries: 0,
    });
    model.enqueue({ text: 'streamed' });
    await streamText({
      model: clientFor(model, provider),
      system: 'You fix Python code.',
      messages: CONVERSATION,
      maxRetries: 0,
    }).text;
    expect(model.calls).toHaveLength(2);
    for (const [i, call] of model.calls.entries()) {
      expect(call).toMatchObject<Partial<ModelRequest>>({
        provider,
        key: KEYS[provider],
        stream: i === 1,
        structured: false,
        tools: [],
        system: 'You fix Python code.',
        messages: [
          { role: 'user', text: 'The tests in shop/tax.py fail.' },
          { role: 'assistant', text: 'Which test fails?' },
          { role: 'user', text: 'test_tax, with a rounding error.' },
        ],
        method: 'POST',
      });
      expect(call.text).toBe(
        'You fix Python code.\nThe tests in shop/tax.py fail.\nWhich test fails?\ntest_tax, with a rounding error.',
      );
      expect(call.model).toBe(
        { openai: 'gpt-4.1', anthropic: 'claude-sonnet-4-5', google: 'gemini-2.5-pro' }[provider],
      );
      expect(call.body).toBeTypeOf('object');
    }
    expect(model.requests.map((r) => r.method)).toEqual(['POST', 'POST']);
    expect(model.requests[0]?.body).toBe(model.calls[0]?.body);
  });

  it('consults a queued responder with the request, falling through to respond() when it returns undefined', async () => {
    const client = clientFor(model, 'openai');
    const asked: string[] = [];
    model.enqueue(
      (req) => {
        asked.push(`queued:${req.messages[0]?.text}`);
        return undefined;
      },
      async (req) => ({ text: `echo ${req.messages[0]?.text}` }),
    );
    model.respond(() => ({ text: 'first fallback' }));
    model.respond((req) => {
      asked.push(`fallback:${req.messages[0]?.text}`);
      return req.text.includes('known') ? { text: 'fallback answer' } : undefined;
    });
    expect((await generateText({ model: client, prompt: 'known one', maxRetries: 0 })).text).toBe('fallback answer');
    expect((await generateText({ model: client, prompt: 'two', maxRetries: 0 })).text).toBe('echo two');
    expect((await generateText({ model: client, prompt: 'known three', maxRetries: 0 })).text).toBe('fallback answer');
    const err = (await generateText({ model: client, prompt: 'something else', maxRetries: 0 }).catch(
      (e: unknown) => e,
    )) as APICallError;
    expect(err.statusCode).toBe(500);
    expect(err.message).toContain('scripted-model: no reply scripted for this request');
    expect(asked).toEqual([
      'queued:known one',
      'fallback:known one',
      'fallback:known three',
      'fallback:something else',
    ]);
    model.respond(() => undefined);
  });

  it('accepts keys added later, and only those', async () => {
    const client = clientFor(model, 'anthropic', 'sk-ant-added-later');
    const before = (await generateText({ model: client, prompt: 'hi', maxRetries: 0 }).catch(
      (e: unknown) => e,
    )) as APICallError;
    expect(before.statusCode).toBe(401);
    expect(JSON.parse(before.responseBody ?? '')).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: 'invalid x-api-key' },
    });
    model.validKeys.add('sk-ant-added-later');
    model.enqueue({ text: 'welcome' });
    expect((await generateText({ model: client, prompt: 'hi', maxRetries: 0 })).text).toBe('welcome');
    model.validKeys.delete('sk-ant-added-later');
  });

  it('sends error bodies in each provider’s shape, or the body a test gives', async () => {
    const post = (url: string, headers: Record<string, string>, body: object) =>
      raw(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    model.enqueue(
      { status: 429, headers: { 'retry-after': '7' } },
      { status: 529 },
      { status: 503 },
      { status: 400, body: { error: { message: 'custom' } } },
    );
    const openai = await post(
      `${model.urls.openai}/chat/completions`,
      { authorization: `Bearer ${KEYS.openai}` },
      { model: 'gpt-4.1', messages: [] },
    );
    expect(openai.status).toBe(429);
    expect(openai.headers.get('retry-after')).toBe('7');
    expect(JSON.parse(openai.text)).toEqual({
      error: {
        message: 'scripted-model: rate limit exceeded',
        type: 'requests',
        param: null,
        code: 'rate_limit_exceeded',
      },
    });
    const anthropic = await post(
      `${model.urls.anthropic}/messages`,
      { 'x-api-key': KEYS.anthropic },
      { model: 'claude-sonnet-4-5', messages: [] },
    );
    expect(anthropic.status).toBe(529);
    expect(JSON.parse(anthropic.text)).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'scripted-model: overloaded' },
    });
    const google = await post(
      `${model.urls.google}/models/gemini-2.5-flash:generateContent`,
      { 'x-goog-api-key': KEYS.google },
      { contents: [] },
    );
    expect(google.status).toBe(503);
    expect(JSON.parse(google.text)).toEqual({
      error: { code: 503, message: 'scripted-model: service unavailable', status: 'UNAVAILABLE' },
    });
    const custom = await post(
      `${model.urls.google}/models/gemini-2.5-flash:generateContent?key=${KEYS.google}`,
      {},
      { contents: [] },
    );
    expect(custom.status).toBe(400);
    expect(JSON.parse(custom.text)).toEqual({ error: { message: 'custom' } });
    expect(model.calls.map((c) => [c.provider, c.model, c.key])).toEqual([
      ['openai', 'gpt-4.1', KEYS.openai],
      ['anthropic', 'claude-sonnet-4-5', KEYS.anthropic],
      ['google', 'gemini-2.5-flash', KEYS.google],
      ['google', 'gemini-2.5-flash', KEYS.google],
    ]);
    const badKey = await post(
      `${model.urls.google}/models/gemini-2.5-pro:generateContent`,
      { 'x-goog-api-key': 'nope' },
      { contents: [] },
    );
    expect(badKey.status).toBe(401);
    expect(JSON.parse(badKey.text).error.status).toBe('UNAUTHENTICATED');
  });

  it('bills only successful replies', async () => {
    const start = model.billed();
    model.enqueue({ status: 500, headers: { 'retry-after': '0' } }, { text: 'abcdefgh', usage: { input: 10 } });
    await generateText({ model: clientFor(model, 'google'), prompt: 'hi', maxRetries: 1 });
    expect(model.billed()).toEqual({ input: start.input + 10, output: start.output + 2 });
  });

  it('streams OpenAI chunks ending in [DONE], with a usage chunk only when asked', async () => {
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEYS.openai}` };
    const body = { model: 'gpt-4.1', stream: true, messages: [{ role: 'user', content: 'hi' }] };
    model.enqueue({ text: 'a reply long enough for two chunks' }, { text: 'again' });
    const without = await raw(`${model.urls.openai}/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    expect(without.headers.get('content-type')).toBe('text/event-stream');
    const events = without.text.trim().split('\n\n');
    expect(events[events.length - 1]).toBe('data: [DONE]');
    expect(without.text).not.toContain('"usage"');
    const withUsage = await raw(`${model.urls.openai}/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ ...body, stream_options: { include_usage: true } }),
    });
    const chunks = withUsage.text.trim().split('\n\n');
    expect(JSON.parse(chunks[chunks.length - 2]?.replace(/^data: /, '') ?? '')).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    });
  });

  it('streams Anthropic events in order', async () => {
    model.enqueue({ text: 'checking', toolCalls: [{ name: 'read', args: { path: 'a.py' } }] });
    const res = await raw(`${model.urls.anthropic}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEYS.anthropic },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        stream: true,
        tools: [{ name: 'read', input_schema: {} }],
        messages: [{ role: 'user', content: 'go' }],
      }),
    });
    const names = [...res.text.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);
    expect(names).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(res.text).toContain('"stop_reason":"tool_use"');
    expect(model.calls[0]).toMatchObject({ tools: ['read'], messages: [{ role: 'user', text: 'go' }] });
  });

  it('keeps unknown routes at 404 and records list-models requests', async () => {
    expect(
      (await raw(`${model.urls.openai}/nowhere/models`, { headers: { authorization: `Bearer ${KEYS.openai}` } }))
        .status,
    ).toBe(404);
    const list = await raw(`${model.urls.google}/models?pageSize=1000`, { headers: { 'x-goog-api-key': KEYS.google } });
    expect(JSON.parse(list.text).models).toHaveLength(4);
    expect(model.requests.map((r) => r.path)).toEqual([
      '/openai/v1/nowhere/models',
      '/google/v1beta/models?pageSize=1000',
    ]);
    expect(model.calls).toEqual([]);
  });
});
