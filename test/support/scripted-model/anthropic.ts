import type { ServerResponse } from 'node:http';
import {
  type Adapter,
  type AnswerContext,
  asArray,
  asRecord,
  joinText,
  renderToolCall,
  resultText,
  str,
} from './adapter.js';
import { SseWriter, pieces, sendJson } from './sse.js';
import type { ModelRequest } from './types.js';

/**
 * How the client asked for structured output. @ai-sdk/anthropic 3 sends
 * `output_config: { format: { type: 'json_schema', schema } }` for models with native
 * structured outputs (claude-sonnet-4-5 and newer) and, for older models, a last tool named
 * `json` with `tool_choice: { type: 'any' }` whose tool_use input is the answer.
 */
function structuredMode(body: Record<string, unknown>): 'native' | 'tool' | undefined {
  if (str(asRecord(asRecord(body.output_config).format).type) === 'json_schema') return 'native';
  const tools = asArray(body.tools);
  const last = asRecord(tools[tools.length - 1]);
  const choice = asRecord(body.tool_choice);
  if (last.name === 'json' && (choice.type === 'any' || (choice.type === 'tool' && choice.name === 'json')))
    return 'tool';
  return undefined;
}

function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  return joinText(asArray(content).map((b) => (asRecord(b).type === 'text' ? str(asRecord(b).text) : undefined)));
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown };

function blocksOf(ctx: AnswerContext): Block[] {
  const { content } = ctx;
  if (content.json) {
    if (structuredMode(asRecord(ctx.req.body)) === 'tool')
      return [{ type: 'tool_use', id: ctx.nextId('toolu_'), name: 'json', input: content.json.value }];
    return [{ type: 'text', text: JSON.stringify(content.json.value) }];
  }
  const blocks: Block[] = [];
  if (content.text !== '' || content.toolCalls.length === 0) blocks.push({ type: 'text', text: content.text });
  for (const call of content.toolCalls)
    blocks.push({ type: 'tool_use', id: ctx.nextId('toolu_'), name: call.name, input: call.args ?? {} });
  return blocks;
}

async function stream(
  res: ServerResponse,
  ctx: AnswerContext,
  id: string,
  blocks: Block[],
  stopReason: string,
): Promise<void> {
  const sse = new SseWriter(res);
  const send = (data: { type: string; [field: string]: unknown }) => sse.send(data, data.type);
  await send({
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: ctx.req.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: ctx.usage.input,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 1,
      },
    },
  });
  await send({ type: 'ping' });
  for (const [index, block] of blocks.entries()) {
    if (block.type === 'text') {
      await send({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const piece of pieces(block.text))
        await send({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
    } else {
      await send({
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      for (const piece of pieces(JSON.stringify(block.input))) {
        await send({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
      }
    }
    await send({ type: 'content_block_stop', index });
  }
  await send({
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: ctx.usage.output },
  });
  await send({ type: 'message_stop' });
  sse.end();
}

/** Anthropic messages: POST {base}/anthropic/v1/messages. */
export const anthropic: Adapter = {
  provider: 'anthropic',
  badKeyMessage: 'invalid x-api-key',

  keyOf: (req) =>
    (req.headers['x-api-key'] as string | undefined) ?? req.headers.authorization?.replace(/^Bearer /i, ''),

  errorBody(status, message) {
    return {
      type: 'error',
      error: { type: ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'), message },
    };
  },

  generationRoute: (route) => (route === 'v1/messages' ? {} : undefined),

  parse(body) {
    const mode = structuredMode(body);
    const system = typeof body.system === 'string' ? body.system : blockText(body.system);
    const messages: ModelRequest['messages'] = [];
    for (const raw of asArray(body.messages)) {
      const m = asRecord(raw);
      if (typeof m.content === 'string') {
        if (m.role === 'user' || m.role === 'assistant') messages.push({ role: m.role, text: m.content });
        continue;
      }
      if (m.role === 'assistant') {
        const parts = asArray(m.content).map((b) => {
          const block = asRecord(b);
          if (block.type === 'text') return str(block.text);
          if (block.type === 'tool_use') return renderToolCall(str(block.name) ?? '', block.input);
          return undefined;
        });
        messages.push({ role: 'assistant', text: joinText(parts) });
        continue;
      }
      if (m.role !== 'user') continue;
      // A user turn carries tool results as tool_result blocks: each becomes a 'tool' message.
      let pending: string[] = [];
      const flush = () => {
        if (pending.length > 0) messages.push({ role: 'user', text: joinText(pending) });
        pending = [];
      };
      for (const b of asArray(m.content)) {
        const block = asRecord(b);
        if (block.type === 'text') pending.push(str(block.text) ?? '');
        else if (block.type === 'tool_result') {
          flush();
          messages.push({
            role: 'tool',
            text:
              typeof block.content === 'string'
                ? block.content
                : blockText(block.content) || resultText(block.content ?? ''),
          });
        }
      }
      flush();
    }
    const tools = asArray(body.tools).flatMap((t) => {
      const name = str(asRecord(t).name);
      return name ? [name] : [];
    });
    if (mode === 'tool') tools.pop();
    return {
      model: str(body.model) ?? '',
      stream: body.stream === true,
      structured: mode !== undefined,
      tools,
      system,
      messages,
    };
  },

  async answer(res, ctx) {
    const id = ctx.nextId('msg_');
    const blocks = blocksOf(ctx);
    const stopReason = blocks.some((b) => b.type === 'tool_use')
      ? 'tool_use'
      : ctx.content.cutOff
        ? 'max_tokens'
        : 'end_turn';
    if (ctx.req.stream) return stream(res, ctx, id, blocks, stopReason);
    sendJson(res, 200, {
      id,
      type: 'message',
      role: 'assistant',
      model: ctx.req.model,
      content: blocks,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: {
        input_tokens: ctx.usage.input,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: ctx.usage.output,
      },
    });
  },
};
