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

const STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

function partsText(parts: unknown): string {
  return joinText(asArray(parts).map((p) => str(asRecord(p).text)));
}

type Part = { text: string } | { functionCall: { name: string; args: unknown } };

function partsOf(ctx: AnswerContext): Part[] {
  const { content } = ctx;
  if (content.json) return [{ text: JSON.stringify(content.json.value) }];
  const parts: Part[] = [];
  if (content.text !== '' || content.toolCalls.length === 0) parts.push({ text: content.text });
  for (const call of content.toolCalls) parts.push({ functionCall: { name: call.name, args: call.args ?? {} } });
  return parts;
}

function usageMetadata(ctx: AnswerContext) {
  return {
    promptTokenCount: ctx.usage.input,
    candidatesTokenCount: ctx.usage.output,
    totalTokenCount: ctx.usage.input + ctx.usage.output,
  };
}

const finishOf = (ctx: AnswerContext): string => (ctx.content.cutOff ? 'MAX_TOKENS' : 'STOP');

async function stream(res: ServerResponse, ctx: AnswerContext, responseId: string, sse: boolean): Promise<void> {
  // Text streams in pieces; a function call arrives whole in one chunk, as Gemini sends it.
  const chunks: Part[][] = partsOf(ctx).flatMap((part): Part[][] =>
    'text' in part ? pieces(part.text).map((text) => [{ text }]) : [[part]],
  );
  if (chunks.length === 0) chunks.push([{ text: '' }]);
  const bodies = chunks.map((parts, i) => {
    const last = i === chunks.length - 1;
    return {
      candidates: [{ content: { role: 'model', parts }, index: 0, ...(last && { finishReason: finishOf(ctx) }) }],
      ...(last && { usageMetadata: usageMetadata(ctx) }),
      modelVersion: ctx.req.model,
      responseId,
    };
  });
  if (!sse) {
    // Without alt=sse the API streams one JSON array.
    sendJson(res, 200, bodies);
    return;
  }
  const writer = new SseWriter(res);
  for (const body of bodies) await writer.send(body);
  writer.end();
}

/**
 * Google generateContent: POST {base}/google/v1beta/models/{model}:generateContent and :streamGenerateContent?alt=sse.
 */
export const google: Adapter = {
  provider: 'google',
  badKeyMessage: 'API key not valid. Please pass a valid API key.',

  keyOf: (req, url) =>
    (req.headers['x-goog-api-key'] as string | undefined) ?? url.searchParams.get('key') ?? undefined,

  errorBody(status, message) {
    return {
      error: {
        code: status,
        message,
        status: STATUSES[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION'),
      },
    };
  },

  generationRoute(route) {
    const match = /^v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(route);
    if (!match) return undefined;
    return { model: decodeURIComponent(match[1] ?? ''), stream: match[2] === 'streamGenerateContent' };
  },

  parse(body, route) {
    const messages: ModelRequest['messages'] = [];
    for (const raw of asArray(body.contents)) {
      const c = asRecord(raw);
      if (c.role === 'model') {
        const parts = asArray(c.parts).map((p) => {
          const part = asRecord(p);
          if (typeof part.text === 'string' && part.thought !== true) return part.text;
          const call = asRecord(part.functionCall);
          if (part.functionCall) return renderToolCall(str(call.name) ?? '', call.args);
          return undefined;
        });
        messages.push({ role: 'assistant', text: joinText(parts) });
        continue;
      }
      // A user turn: text parts, and function responses that become 'tool' messages.
      let pending: string[] = [];
      const flush = () => {
        if (pending.length > 0) messages.push({ role: 'user', text: joinText(pending) });
        pending = [];
      };
      for (const p of asArray(c.parts)) {
        const part = asRecord(p);
        if (typeof part.text === 'string') pending.push(part.text);
        else if (part.functionResponse) {
          flush();
          const response = asRecord(asRecord(part.functionResponse).response);
          messages.push({ role: 'tool', text: resultText('content' in response ? response.content : response) });
        }
      }
      flush();
    }
    const config = asRecord(body.generationConfig);
    return {
      model: route.model ?? '',
      stream: route.stream === true,
      structured: config.responseMimeType === 'application/json',
      tools: asArray(body.tools).flatMap((t) =>
        asArray(asRecord(t).functionDeclarations).flatMap((f) => str(asRecord(f).name) ?? []),
      ),
      system: partsText(asRecord(body.systemInstruction).parts),
      messages,
    };
  },

  async answer(res, ctx) {
    const responseId = ctx.nextId('resp_');
    if (ctx.req.stream)
      return stream(res, ctx, responseId, new URL(ctx.req.path, 'http://x').searchParams.get('alt') === 'sse');
    sendJson(res, 200, {
      candidates: [{ content: { role: 'model', parts: partsOf(ctx) }, finishReason: finishOf(ctx), index: 0 }],
      usageMetadata: usageMetadata(ctx),
      modelVersion: ctx.req.model,
      responseId,
    });
  },
};
