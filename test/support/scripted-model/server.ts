import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Adapter } from './adapter.js';
import { anthropic } from './anthropic.js';
import { google } from './google.js';
import { openai } from './openai.js';
import { Script } from './script.js';
import { sendJson } from './sse.js';
import type { ModelRequest, Provider, RecordedRequest, ScriptedModel } from './types.js';
import { usageFor } from './usage.js';

export type {
  ModelRequest,
  Provider,
  RecordedRequest,
  Reply,
  ReplyUsage,
  Responder,
  ScriptedModel,
  ToolCallReply,
} from './types.js';
export { estimateTokens } from './usage.js';

const ADAPTERS: Record<Provider, Adapter> = { openai, anthropic, google };

const MODELS = {
  openai: {
    object: 'list',
    data: ['gpt-4.1', 'gpt-4.1-mini', 'o4-mini'].map((id) => ({ id, object: 'model', owned_by: 'openai' })),
  },
  anthropic: {
    data: ['claude-sonnet-4-5', 'claude-haiku-4-5'].map((id) => ({ id, type: 'model', display_name: id })),
    has_more: false,
  },
  google: {
    models: ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite', 'text-embedding-004'].map((n) => ({
      name: `models/${n}`,
    })),
  },
};

const DEFAULT_MESSAGES: Record<number, string> = {
  400: 'bad request',
  401: 'unauthorized',
  403: 'permission denied',
  404: 'not found',
  408: 'request timed out',
  429: 'rate limit exceeded',
  500: 'internal server error',
  502: 'bad gateway',
  503: 'service unavailable',
  529: 'overloaded',
};

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const gone = (res: ServerResponse) => res.destroyed || !res.socket || res.socket.destroyed;

/** Resolves when the response's connection closes (at once if it already has). */
function closed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    if (gone(res)) return resolve();
    res.once('close', () => resolve());
  });
}

/** Whether the whole reply was handed to a connection that was still open. */
function delivered(res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    if (res.writableFinished) return resolve(true);
    if (gone(res)) return resolve(false);
    res.once('finish', () => resolve(true));
    res.once('close', () => resolve(res.writableFinished));
  });
}

/**
 * An HTTP double for the three model providers' wire formats, on a real loopback port:
 * list-models, OpenAI chat completions, Anthropic messages and Google generateContent,
 * streaming and not, answering with the replies a test scripts. See README.md.
 */
export async function startScriptedModel(options: { validKeys?: string[] } = {}): Promise<ScriptedModel> {
  const requests: RecordedRequest[] = [];
  const calls: ModelRequest[] = [];
  const validKeys = new Set(options.validKeys ?? []);
  const script = new Script();
  const total = { input: 0, output: 0 };
  let seq = 0;
  let stalls = 0;
  const nextId = (prefix: string) => `${prefix}scripted${++seq}`;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname + url.search,
      headers: req.headers,
    };
    requests.push(recorded);
    const raw = await readBody(req);
    const [, prefix, ...rest] = url.pathname.split('/');
    const provider = ({ openai: 'openai', anthropic: 'anthropic', google: 'google' } as const)[prefix ?? ''];
    const route = rest.join('/');
    const adapter = provider ? ADAPTERS[provider] : undefined;
    const generation = adapter && req.method === 'POST' ? adapter.generationRoute(route, url) : undefined;
    const listing = ['v1/models', 'v1beta/models'].includes(route);
    if (!provider || !adapter || (!generation && !listing)) {
      sendJson(res, 404, { error: { message: `no route ${url.pathname}` } });
      return;
    }
    const key = adapter.keyOf(req, url);
    const keyOk = key !== undefined && validKeys.has(key);
    if (!generation) {
      if (!keyOk) sendJson(res, 401, adapter.errorBody(401, adapter.badKeyMessage));
      else sendJson(res, 200, MODELS[provider]);
      return;
    }

    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(raw);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      body = parsed as Record<string, unknown>;
    } catch {
      sendJson(res, 400, adapter.errorBody(400, 'scripted-model: the request body is not a JSON object'));
      return;
    }
    recorded.body = body;
    const parsed = adapter.parse(body, generation);
    const text = [parsed.system, ...parsed.messages.map((m) => m.text)].filter((t) => t !== '').join('\n');
    const call: ModelRequest = {
      provider,
      ...parsed,
      key,
      text,
      body,
      path: recorded.path,
      method: recorded.method,
      headers: req.headers,
    };
    calls.push(call);
    if (!keyOk) {
      sendJson(res, 401, adapter.errorBody(401, adapter.badKeyMessage));
      return;
    }

    const decision = await script.next(call);
    if (decision.kind === 'unscripted') {
      sendJson(res, 500, adapter.errorBody(500, decision.message));
      return;
    }
    if (decision.kind === 'error') {
      const { status, headers } = decision;
      const errorBody =
        decision.body === undefined
          ? adapter.errorBody(status, `scripted-model: ${DEFAULT_MESSAGES[status] ?? `HTTP ${status}`}`)
          : decision.body;
      if (typeof errorBody === 'string') {
        res.writeHead(status, { 'content-type': 'text/plain', ...headers });
        res.end(errorBody);
      } else sendJson(res, status, errorBody, headers);
      return;
    }
    if (decision.kind === 'stall') {
      stalls += 1;
      if (call.stream) {
        res.writeHead(200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
          connection: 'keep-alive',
        });
        res.flushHeaders();
      }
      await closed(res);
      return;
    }
    // A client that gave up (a timeout, a kill) before the reply was written gets nothing and is billed nothing.
    if (gone(res)) return;
    const usage = usageFor(call, decision.content, decision.usage);
    await adapter.answer(res, { req: call, content: decision.content, usage, nextId });
    if (await delivered(res)) {
      total.input += usage.input;
      total.output += usage.output;
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy(err as Error);
      else sendJson(res, 500, { error: { message: `scripted-model: ${(err as Error).message}` } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    urls: { openai: `${base}/openai/v1`, anthropic: `${base}/anthropic/v1`, google: `${base}/google/v1beta` },
    requests,
    calls,
    validKeys,
    enqueue: (...replies) => script.enqueue(replies),
    respond: (responder) => script.respond(responder),
    billed: () => ({ ...total }),
    stalls: () => stalls,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
