/**
 * An HTTP proxy in front of a real server that breaks connections on purpose, the way a flaky
 * network or a load balancer does: it can cut a task stream after a number of `log` events
 * (in the middle of the next event, so a half-received event must be dropped by the client), or
 * let a request reach the server and then close the connection before the answer gets back.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CutPlan {
  /** For the n-th stream connection (0-based), the log events to pass before cutting; absent: never cut. */
  streamCuts?: number[];
  /** Text sent before each stream's first byte from the server (e.g. a `retry:` field). */
  streamPrefix?: string;
  /** Whether to swallow this request's answer (it reaches the server; the client sees the connection close). */
  loseAnswer?: (req: IncomingMessage) => boolean;
}

export interface CuttingProxy {
  url: string;
  /** Stream connections opened, and the Last-Event-ID each sent. */
  streams: (string | undefined)[];
  /** Requests whose answer was lost, as `METHOD path`. */
  lost: string[];
  /** Every request passed on: method, path and Idempotency-Key. */
  seen: { method: string; url: string; key?: string }[];
  close(): Promise<void>;
}

const isStream = (req: IncomingMessage) => /\/logs\/stream(\?|$)/.test(req.url ?? '');

function forward(upstream: URL, req: IncomingMessage, onResponse: (res: IncomingMessage) => void) {
  const out = request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
    onResponse,
  );
  req.pipe(out);
  return out;
}

/** Passes whole events one by one; after `cutAfter` log events, half of the next one, then closes. */
function relayStream(
  res: ServerResponse,
  up: IncomingMessage,
  { cutAfter, prefix }: { cutAfter?: number; prefix?: string },
  cut: () => void,
) {
  res.writeHead(up.statusCode ?? 502, up.headers);
  if (prefix && up.statusCode === 200) res.write(prefix);
  let buffer = '';
  let logs = 0;
  up.setEncoding('utf8');
  up.on('data', (chunk: string) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end + 2);
      buffer = buffer.slice(end + 2);
      if (cutAfter !== undefined && logs >= cutAfter) {
        // Closed once what came before is on the wire: destroying at once would discard it.
        res.write(block.slice(0, Math.floor(block.length / 2)), cut);
        return up.removeAllListeners('data');
      }
      res.write(block);
      if (/^event: log$/m.test(block)) logs++;
    }
  });
  up.on('end', () => res.end());
}

export async function startCuttingProxy(upstreamUrl: string, plan: CutPlan): Promise<CuttingProxy> {
  const upstream = new URL(upstreamUrl);
  const streams: (string | undefined)[] = [];
  const lost: string[] = [];
  const seen: CuttingProxy['seen'] = [];
  const server: Server = createServer((req, res) => {
    const stream = isStream(req);
    const key = req.headers['idempotency-key'];
    seen.push({ method: req.method ?? '', url: req.url ?? '', key: typeof key === 'string' ? key : undefined });
    const cutAfter = stream ? plan.streamCuts?.[streams.length] : undefined;
    if (stream) streams.push(req.headers['last-event-id'] as string | undefined);
    const lose = !stream && (plan.loseAnswer?.(req) ?? false);
    const out = forward(upstream, req, (up) => {
      const cut = () => {
        out.destroy();
        req.socket.destroy();
      };
      if (stream) return relayStream(res, up, { cutAfter, prefix: plan.streamPrefix }, cut);
      if (lose) {
        lost.push(`${req.method} ${req.url}`);
        // The server has answered; read it all, then close without passing a byte on.
        up.resume();
        return up.on('end', () => req.socket.destroy());
      }
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on('error', () => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    streams,
    lost,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
