import { APICallError, Output, generateText, stepCountIs, streamText, tool } from 'ai';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ScriptedModel, estimateTokens } from '../support/scripted-model/server.js';
import { KEYS, PROVIDERS, clientFor, useScriptedModel } from './clients.js';

const LONG = 'The quick brown fox jumps over the lazy dog, then naps in the afternoon sun for a while.';

describe('the scripted model double, driven by the production AI SDK clients', () => {
  const scripted = useScriptedModel();
  let model: ScriptedModel;
  beforeEach(() => {
    model = scripted();
  });

  describe.each(PROVIDERS)('%s', (provider) => {
    it('answers generateText with the scripted text and the usage it billed', async () => {
      const before = model.billed();
      model.enqueue({ text: LONG });
      const result = await generateText({
        model: clientFor(model, provider),
        system: 'Be brief.',
        prompt: 'Tell me about foxes.',
        maxRetries: 0,
      });
      expect(result.text).toBe(LONG);
      expect(result.finishReason).toBe('stop');
      const after = model.billed();
      expect(result.usage.inputTokens).toBe(after.input - before.input);
      expect(result.usage.outputTokens).toBe(after.output - before.output);
      // the estimate: a quarter of the characters, rounded up
      expect(result.usage.inputTokens).toBe(estimateTokens('Be brief.\nTell me about foxes.'));
      expect(result.usage.outputTokens).toBe(estimateTokens(LONG));
      expect(model.calls).toHaveLength(1);
      expect(model.calls[0]).toMatchObject({
        provider,
        key: KEYS[provider],
        stream: false,
        structured: false,
        tools: [],
      });
    });

    it('reports the usage a reply gives', async () => {
      model.enqueue({ text: 'ok', usage: { input: 1234, output: 56 } });
      const result = await generateText({ model: clientFor(model, provider), prompt: 'hi', maxRetries: 0 });
      expect(result.usage.inputTokens).toBe(1234);
      expect(result.usage.outputTokens).toBe(56);
    });

    it('streams the text in several chunks, with usage', async () => {
      const before = model.billed();
      model.enqueue({ text: LONG });
      const result = streamText({ model: clientFor(model, provider), prompt: 'Tell me about foxes.', maxRetries: 0 });
      const deltas: string[] = [];
      for await (const delta of result.textStream) deltas.push(delta);
      expect(deltas.join('')).toBe(LONG);
      expect(deltas.length).toBeGreaterThanOrEqual(4);
      const usage = await result.usage;
      const after = model.billed();
      expect(usage.inputTokens).toBe(after.input - before.input);
      expect(usage.outputTokens).toBe(after.output - before.output);
      expect(await result.finishReason).toBe('stop');
      expect(model.calls[0]).toMatchObject({ provider, stream: true, structured: false });
    });

    it('answers structured output requests with the scripted JSON', async () => {
      const schema = z.object({ title: z.string(), steps: z.array(z.string()), risky: z.boolean() });
      const value = { title: 'Fix the tax rounding', steps: ['find the bug', 'round half up'], risky: false };
      model.enqueue({ json: value });
      const result = await generateText({
        model: clientFor(model, provider),
        prompt: 'Plan the fix.',
        output: Output.object({ schema }),
        maxRetries: 0,
      });
      expect(result.output).toEqual(value);
      expect(result.usage.outputTokens).toBe(estimateTokens(JSON.stringify(value)));
      expect(model.calls[0]).toMatchObject({ provider, structured: true, stream: false, tools: [] });
    });

    it('streams structured output', async () => {
      const schema = z.object({ answer: z.string(), confidence: z.number() });
      const value = { answer: 'the tax module rounds down where it should round half up', confidence: 0.75 };
      model.enqueue({ json: value });
      const result = streamText({
        model: clientFor(model, provider),
        prompt: 'Why?',
        output: Output.object({ schema }),
        maxRetries: 0,
      });
      expect(await result.output).toEqual(value);
      expect(model.calls[0]).toMatchObject({ structured: true, stream: true });
    });

    it('makes a tool call and takes the tool result in a second turn', async () => {
      const seen: unknown[] = [];
      const weather = tool({
        description: 'The weather in a city',
        inputSchema: z.object({ city: z.string(), unit: z.enum(['C', 'F']) }),
        execute: async (input) => {
          seen.push(input);
          return { city: input.city, temperature: 21 };
        },
      });
      model.enqueue({ toolCalls: [{ name: 'weather', args: { city: 'Lisbon', unit: 'C' } }] }, (req) => {
        const last = req.messages[req.messages.length - 1];
        return {
          text:
            `It is ${last?.role === 'tool' && last.text.includes('"temperature":21') ? '21' : '??'} degrees in ` +
            `Lisbon.`,
        };
      });
      const result = await generateText({
        model: clientFor(model, provider),
        system: 'Use tools.',
        prompt: 'Weather in Lisbon?',
        tools: { weather },
        stopWhen: stepCountIs(3),
        maxRetries: 0,
      });
      expect(seen).toEqual([{ city: 'Lisbon', unit: 'C' }]);
      expect(result.steps).toHaveLength(2);
      expect(result.steps[0]?.finishReason).toBe('tool-calls');
      expect(result.steps[0]?.toolCalls.map((c) => [c.toolName, c.input])).toEqual([
        ['weather', { city: 'Lisbon', unit: 'C' }],
      ]);
      expect(result.text).toBe('It is 21 degrees in Lisbon.');
      expect(model.calls).toHaveLength(2);
      expect(model.calls[0]?.tools).toEqual(['weather']);
      expect(model.calls[1]?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
      expect(model.calls[1]?.messages[1]?.text).toBe('weather({"city":"Lisbon","unit":"C"})');
      expect(model.calls[1]?.messages[2]?.text).toBe('{"city":"Lisbon","temperature":21}');
      const billed = model.billed();
      expect(result.totalUsage.inputTokens).toBeGreaterThan(0);
      expect(billed.input).toBeGreaterThanOrEqual(result.totalUsage.inputTokens ?? 0);
    });

    it('streams tool calls with text before them', async () => {
      const lookup = tool({ inputSchema: z.object({ path: z.string(), lines: z.array(z.number()) }) });
      model.enqueue({
        text: 'Let me look at both files first.',
        toolCalls: [
          { name: 'lookup', args: { path: 'src/tax/rounding.ts', lines: [1, 2, 3] } },
          { name: 'lookup', args: { path: 'src/tax/rates.ts', lines: [10] } },
        ],
      });
      const result = streamText({
        model: clientFor(model, provider),
        prompt: 'Read the files.',
        tools: { lookup },
        maxRetries: 0,
      });
      const calls = await result.toolCalls;
      expect(calls.map((c) => c.input)).toEqual([
        { path: 'src/tax/rounding.ts', lines: [1, 2, 3] },
        { path: 'src/tax/rates.ts', lines: [10] },
      ]);
      expect(await result.text).toBe('Let me look at both files first.');
      expect(await result.finishReason).toBe('tool-calls');
    });

    it('rejects a key it does not know with 401 in the provider’s error shape', async () => {
      const err = await generateText({
        model: clientFor(model, provider, 'sk-not-a-known-key'),
        prompt: 'hi',
        maxRetries: 0,
      }).catch((e: unknown) => e);
      expect(APICallError.isInstance(err)).toBe(true);
      const apiError = err as APICallError;
      expect(apiError.statusCode).toBe(401);
      expect(apiError.isRetryable).toBe(false);
      expect(apiError.message.length).toBeGreaterThan(0);
      expect(apiError.responseBody).not.toContain('sk-not-a-known-key');
      expect(model.calls[0]?.key).toBe('sk-not-a-known-key');
    });

    it('retries a 429 and then succeeds', async () => {
      model.enqueue({ status: 429, headers: { 'retry-after': '0' } }, { text: 'second time lucky' });
      const result = await generateText({ model: clientFor(model, provider), prompt: 'hi', maxRetries: 1 });
      expect(result.text).toBe('second time lucky');
      expect(model.calls).toHaveLength(2);
    });

    it('gives up on a 429 when retries run out, with the status and headers it sent', async () => {
      model.enqueue({ status: 429, headers: { 'retry-after': '0' } });
      const err = (await generateText({ model: clientFor(model, provider), prompt: 'hi', maxRetries: 0 }).catch(
        (e: unknown) => e,
      )) as APICallError;
      expect(APICallError.isInstance(err)).toBe(true);
      expect(err.statusCode).toBe(429);
      expect(err.isRetryable).toBe(true);
      expect(err.responseHeaders?.['retry-after']).toBe('0');
      expect(err.message).toContain('rate limit');
    });

    it('fails loudly when nothing is scripted', async () => {
      const err = (await generateText({ model: clientFor(model, provider), prompt: 'hi', maxRetries: 0 }).catch(
        (e: unknown) => e,
      )) as APICallError;
      expect(APICallError.isInstance(err)).toBe(true);
      expect(err.statusCode).toBe(500);
      expect(err.message).toContain('scripted-model: no reply scripted for this request');
    });
  });

  it('answers Anthropic structured output through the forced json tool for models without native structured output', async () => {
    model.enqueue({ json: { verdict: 'approve' } });
    const result = await generateText({
      model: clientFor(model, 'anthropic', KEYS.anthropic, 'claude-sonnet-4-0'),
      prompt: 'Review.',
      output: Output.object({ schema: z.object({ verdict: z.string() }) }),
      maxRetries: 0,
    });
    expect(result.output).toEqual({ verdict: 'approve' });
    expect(model.calls[0]).toMatchObject({ structured: true, tools: [] });
    const body = model.calls[0]?.body as { tools: { name: string }[]; tool_choice: { type: string } };
    expect(body.tools.map((t) => t.name)).toEqual(['json']);
    expect(body.tool_choice.type).toBe('any');
    // and streaming through the same tool
    model.enqueue({ json: { verdict: 'reject', reasons: ['breaks the build'] } });
    const streamed = streamText({
      model: clientFor(model, 'anthropic', KEYS.anthropic, 'claude-sonnet-4-0'),
      prompt: 'Review again.',
      output: Output.object({ schema: z.object({ verdict: z.string(), reasons: z.array(z.string()) }) }),
      maxRetries: 0,
    });
    expect(await streamed.output).toEqual({ verdict: 'reject', reasons: ['breaks the build'] });
  });
});
