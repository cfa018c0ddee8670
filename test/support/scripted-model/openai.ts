import type { ServerResponse } from 'node:http';
import {
  type Adapter,
  type AnswerContext,
  asArray,
  asRecord,
  joinText,
  parseArgs,
  renderToolCall,
  str,
} from './adapter.js';
import { SseWriter, pieces, sendJson } from './sse.js';
import type { ModelRequest } from './types.js';

/** Text of an OpenAI message content: a string or an array of parts (text parts kept). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return joinText(asArray(content).map((p) => (asRecord(p).type === 'text' ? str(asRecord(p).text) : undefined)));
}

const ERROR_KINDS: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory' },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
  500: { type: 'server_error', code: null },
  503: { type: 'server_error', code: null },
};

function chunkBase(ctx: AnswerContext, id: string, created: number) {
  return { id, object: 'chat.completion.chunk', created, model: ctx.req.model, system_fingerprint: 'fp_scripted' };
}

async function stream(
  res: ServerResponse,
  ctx: AnswerContext,
  id: string,
  created: number,
  finish: string,
  usage: object,
): Promise<void> {
  const sse = new SseWriter(res);
  const base = chunkBase(ctx, id, created);
  const choice = (delta: object, finish_reason: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason }],
  });
  await sse.send(choice({ role: 'assistant' }));
  const text = ctx.content.json ? JSON.stringify(ctx.content.json.value) : ctx.content.text;
  for (const piece of pieces(text)) await sse.send(choice({ content: piece }));
  for (const [index, call] of ctx.content.toolCalls.entries()) {
    const callId = ctx.nextId('call_');
    await sse.send(
      choice({ tool_calls: [{ index, id: callId, type: 'function', function: { name: call.name, arguments: '' } }] }),
    );
    for (const piece of pieces(JSON.stringify(call.args ?? {}))) {
      await sse.send(choice({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  }
  await sse.send(choice({}, finish));
  if (asRecord(asRecord(ctx.req.body).stream_options).include_usage === true)
    await sse.send({ ...base, choices: [], usage });
  await sse.send('[DONE]');
  sse.end();
}

/** OpenAI chat completions: POST {base}/openai/v1/chat/completions. */
export const openai: Adapter = {
  provider: 'openai',
  badKeyMessage:
    'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',

  keyOf: (req) => req.headers.authorization?.replace(/^Bearer /i, ''),

  errorBody(status, message) {
    const kind = ERROR_KINDS[status] ?? { type: status >= 500 ? 'server_error' : 'invalid_request_error', code: null };
    return { error: { message, type: kind.type, param: null, code: kind.code } };
  },

  generationRoute: (route) => (route === 'v1/chat/completions' ? {} : undefined),

  parse(body) {
    const system: string[] = [];
    const messages: ModelRequest['messages'] = [];
    for (const raw of asArray(body.messages)) {
      const m = asRecord(raw);
      const text = contentText(m.content);
      switch (m.role) {
        case 'system':
        case 'developer':
          system.push(text);
          break;
        case 'user':
          messages.push({ role: 'user', text });
          break;
        case 'assistant': {
          const calls = asArray(m.tool_calls).map((c) => {
            const fn = asRecord(asRecord(c).function);
            return renderToolCall(str(fn.name) ?? '', parseArgs(fn.arguments));
          });
          messages.push({ role: 'assistant', text: joinText([text, ...calls]) });
          break;
        }
        case 'tool':
          messages.push({ role: 'tool', text });
          break;
      }
    }
    const format = str(asRecord(body.response_format).type);
    return {
      model: str(body.model) ?? '',
      stream: body.stream === true,
      structured: format === 'json_schema' || format === 'json_object',
      tools: asArray(body.tools).flatMap((t) => {
        const name = str(asRecord(asRecord(t).function).name) ?? str(asRecord(t).name);
        return name ? [name] : [];
      }),
      system: joinText(system),
      messages,
    };
  },

  async answer(res, ctx) {
    const id = ctx.nextId('chatcmpl-');
    const created = Math.floor(Date.now() / 1000);
    const finish = ctx.content.toolCalls.length > 0 ? 'tool_calls' : ctx.content.cutOff ? 'length' : 'stop';
    const usage = {
      prompt_tokens: ctx.usage.input,
      completion_tokens: ctx.usage.output,
      total_tokens: ctx.usage.input + ctx.usage.output,
    };
    if (ctx.req.stream) return stream(res, ctx, id, created, finish, usage);
    const content = ctx.content.json ? JSON.stringify(ctx.content.json.value) : ctx.content.text;
    const toolCalls = ctx.content.toolCalls.map((call) => ({
      id: ctx.nextId('call_'),
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
    }));
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model: ctx.req.model,
      system_fingerprint: 'fp_scripted',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: content === '' && toolCalls.length > 0 ? null : content,
            refusal: null,
            ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
          },
          logprobs: null,
          finish_reason: finish,
        },
      ],
      usage,
    });
  },
};
