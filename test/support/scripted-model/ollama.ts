import { type IncomingMessage, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SseWriter, sendJson } from './sse.js';

/**
 * An HTTP double of an Ollama server as it treats an OpenAI-compatible client: its own API
 * (/api/version, /api/show, /api/ps) beside /v1/chat/completions, which runs the model with the
 * context the server chose (a Modelfile's num_ctx, else OLLAMA_CONTEXT_LENGTH, else 4096),
 * ignores a `num_ctx` or `options` in the request, and drops messages from the start of a prompt
 * that does not fit, without an error. `seen` shows what the model was actually given.
 */
export interface OllamaDouble {
  /** Base URL of the OpenAI-compatible endpoint, as an operator would set it (…/v1). */
  url: string;
  /** Paths asked, in order. */
  paths: string[];
  /** What each chat request left the model, after the server's silent truncation. */
  seen: { system: string | undefined; kept: number; dropped: number }[];
  close(): Promise<void>;
}

export interface OllamaOptions {
  model: string;
  /** `PARAMETER num_ctx` in the model's Modelfile; /api/show lists it. */
  modelfileNumCtx?: number;
  /** OLLAMA_CONTEXT_LENGTH; invisible to clients except through /api/ps for a loaded model. */
  serverContext?: number;
  /** Whether the model is loaded, so /api/ps reports its context. */
  loaded?: boolean;
  /** The answer's text. */
  answer?: string;
}

type ChatMessage = { role: string; content: unknown };
const tokensOf = (m: ChatMessage) => Math.ceil(JSON.stringify(m.content).length / 4);

function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve(text ? (JSON.parse(text) as Record<string, unknown>) : {});
    });
    req.on('error', reject);
  });
}

/** The messages that fit the context, the latest kept: the start (the system prompt) goes first. */
function truncate(messages: ChatMessage[], context: number): ChatMessage[] {
  const kept = [...messages];
  let total = kept.reduce((n, m) => n + tokensOf(m), 0);
  while (kept.length > 1 && total > context) total -= tokensOf(kept.shift()!);
  return kept;
}

export async function startOllamaDouble(o: OllamaOptions): Promise<OllamaDouble> {
  const paths: string[] = [];
  const seen: OllamaDouble['seen'] = [];
  const context = o.modelfileNumCtx ?? o.serverContext ?? 4096;
  const server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    paths.push(`${req.method} ${path}`);
    const body = req.method === 'POST' ? await readJson(req) : {};
    if (path === '/api/version') return sendJson(res, 200, { version: '0.12.6' });
    if (path === '/api/show') {
      if (body.model !== o.model) return sendJson(res, 404, { error: `model '${String(body.model)}' not found` });
      const params = o.modelfileNumCtx ? `num_ctx                        ${o.modelfileNumCtx}\n` : '';
      return sendJson(res, 200, { parameters: `${params}stop                           "<|im_end|>"`, details: {} });
    }
    if (path === '/api/ps') {
      const models = o.loaded ? [{ name: o.model, model: o.model, context_length: context }] : [];
      return sendJson(res, 200, { models });
    }
    if (path === '/v1/chat/completions') return chat(body, res);
    sendJson(res, 404, { error: 'not found' });
  });

  async function chat(body: Record<string, unknown>, res: Parameters<typeof sendJson>[0]) {
    const messages = (body.messages ?? []) as ChatMessage[];
    const kept = truncate(messages, context);
    const system = kept.find((m) => m.role === 'system');
    seen.push({
      system: typeof system?.content === 'string' ? system.content : undefined,
      kept: kept.length,
      dropped: messages.length - kept.length,
    });
    const text = o.answer ?? 'ok';
    const base = { id: 'chatcmpl-1', created: 0, model: o.model };
    const usage = { prompt_tokens: kept.reduce((n, m) => n + tokensOf(m), 0), completion_tokens: 1 };
    if (!body.stream) {
      const choice = { index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' };
      return sendJson(res, 200, { ...base, object: 'chat.completion', choices: [choice], usage });
    }
    const sse = new SseWriter(res);
    const chunk = (delta: unknown, finish: string | null) => ({
      ...base,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    await sse.send(chunk({ role: 'assistant', content: text }, null));
    await sse.send({ ...chunk({}, 'stop'), usage });
    await sse.send('[DONE]');
    sse.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    paths,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
