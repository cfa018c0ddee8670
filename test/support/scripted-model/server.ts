import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
}

export interface ScriptedModel {
  /** Base URLs as a client would configure them for each provider. */
  urls: { openai: string; anthropic: string; google: string };
  requests: RecordedRequest[];
  /** Keys the double accepts; any other key is answered 401 like the real providers do. */
  validKeys: Set<string>;
  close(): Promise<void>;
}

const MODELS = {
  openai: { object: 'list', data: ['gpt-4.1', 'gpt-4.1-mini', 'o4-mini'].map((id) => ({ id, object: 'model', owned_by: 'openai' })) },
  anthropic: { data: ['claude-sonnet-4-5', 'claude-haiku-4-5'].map((id) => ({ id, type: 'model', display_name: id })), has_more: false },
  google: { models: ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite', 'text-embedding-004'].map((n) => ({ name: `models/${n}` })) },
};

function keyOf(provider: keyof typeof MODELS, req: IncomingMessage): string | undefined {
  if (provider === 'openai') return req.headers.authorization?.replace(/^Bearer /, '');
  if (provider === 'anthropic') return req.headers['x-api-key'] as string | undefined;
  return req.headers['x-goog-api-key'] as string | undefined;
}

/**
 * An HTTP double for the three model providers' wire formats, on a real loopback port.
 * This first cut answers list-models (OpenAI /v1/models, Anthropic /v1/models, Google
 * /v1beta/models) and records every request; chat, messages and generateContent come with
 * the model-layer work.
 */
export async function startScriptedModel(options: { validKeys?: string[] } = {}): Promise<ScriptedModel> {
  const requests: RecordedRequest[] = [];
  const validKeys = new Set(options.validKeys ?? []);
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({ method: req.method ?? 'GET', path: url.pathname + url.search, headers: req.headers });
    const [, prefix, ...rest] = url.pathname.split('/');
    const provider = ({ openai: 'openai', anthropic: 'anthropic', google: 'google' } as const)[prefix ?? ''];
    const route = rest.join('/');
    res.setHeader('content-type', 'application/json');
    if (!provider || !['v1/models', 'v1beta/models'].includes(route)) {
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { message: `no route ${url.pathname}` } }));
      return;
    }
    const key = keyOf(provider, req);
    if (!key || !validKeys.has(key)) {
      res.statusCode = 401;
      res.end(JSON.stringify({ error: { message: 'invalid api key' } }));
      return;
    }
    res.end(JSON.stringify(MODELS[provider]));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    urls: { openai: `${base}/openai/v1`, anthropic: `${base}/anthropic/v1`, google: `${base}/google/v1beta` },
    requests,
    validKeys,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
