import type { ServerResponse } from 'node:http';

/** Response headers of a Server-Sent Events stream; proxies must neither cache nor buffer it. */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

/** A comment line: clients ignore it, proxies and load balancers see traffic on an idle stream. */
export const SSE_HEARTBEAT = ': ping\n\n';

/**
 * How long a client waits before it reconnects to a stream the server ended because it is
 * stopping: a `retry:` field (milliseconds) that EventSource adopts; it then reconnects, to
 * another node behind the load balancer, with Last-Event-ID.
 */
export const SSE_RECONNECT_MS = 1_000;

/** A `retry:` field alone: sets the client's reconnection delay, dispatches no event. */
export function sseRetry(ms: number): string {
  return `retry: ${ms}\n\n`;
}

/**
 * One event in the wire format: optional `id:`, `event:`, and the data as one line of JSON
 * (JSON.stringify escapes line breaks inside strings, so the data never spans lines).
 */
export function sseEvent(event: string, data: unknown, id?: number | string): string {
  const idLine = id === undefined ? '' : `id: ${id}\n`;
  return `${idLine}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** True while the response can still be written to (the client has not gone, we have not ended it). */
export function writable(res: ServerResponse): boolean {
  return !res.destroyed && !res.writableEnded;
}

/**
 * Resolves once the response's buffer has drained, or it closed: a slow client holds the
 * writer back instead of letting the buffer grow without bound.
 */
export function drained(res: ServerResponse): Promise<void> {
  if (!res.writableNeedDrain || !writable(res)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
