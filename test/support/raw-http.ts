import { Agent, request } from 'node:http';

export interface RawRequest {
  method: string;
  /** Sent exactly as given: no URL normalisation, so `..` and `%2e%2e` reach the server. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** On a connection of its own: the server closes a connection after refusing oversized headers. */
  fresh?: boolean;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** From the request being sent to the last byte of the answer. */
  ms: number;
}

/**
 * A client for a listening server over a real socket. fetch (WHATWG URL) resolves `..` and
 * `%2e%2e` before sending, so hostile paths need node:http, which sends the path as written.
 */
export function rawClient(
  baseUrl: string,
  options: { maxSockets?: number /** an unanswered request gives status 0 after this */; timeoutMs?: number } = {},
) {
  const { hostname, port } = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 8 });
  const send = (req: RawRequest): Promise<RawResponse> =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const body =
        req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
      const headers = { ...req.headers, ...(body !== undefined ? { 'content-length': String(body.length) } : {}) };
      const r = request(
        { hostname, port, method: req.method, path: req.path, headers, agent: req.fresh ? false : agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
              ms: performance.now() - started,
            }),
          );
          res.on('error', reject);
        },
      );
      r.setTimeout(options.timeoutMs ?? 30_000, () => {
        resolve({ status: 0, headers: {}, body: 'no answer in time', ms: performance.now() - started });
        r.destroy();
      });
      r.on('error', reject);
      r.end(body);
    });
  return { send, close: () => agent.destroy() };
}

/** Runs `work` over `items` with at most `limit` at a time. */
export async function inBatches<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  });
  await Promise.all(lanes);
  return results;
}
