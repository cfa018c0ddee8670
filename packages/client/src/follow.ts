/**
 * followTask: a task's Server-Sent Events (GET /v1/tasks/{id}/logs/stream) as an async
 * iterator of typed events, to the `end` event. When the connection drops it reconnects with
 * Last-Event-ID (the id of the last `log` received), so no log is lost or repeated; the wait
 * starts at the server's `retry:` (1 s until it sends one) and doubles per failure in a row.
 * Uses fetch and ReadableStream only, so it runs on Node 20 and in browsers.
 */
import { type EventSourceMessage, createParser } from 'eventsource-parser';
import { type EmendError, NetworkError, errorFromResponse, networkError } from './errors.js';
import type { Sleep } from './retry.js';
import type { TaskLogEvent, TaskStateEvent, TerminalStatus } from './types.js';

export type TaskEvent =
  | { type: 'connected'; data: { task_id: string } }
  | { type: 'state'; data: TaskStateEvent }
  | { type: 'log'; id: number; data: TaskLogEvent }
  | { type: 'end'; data: { status: TerminalStatus } };

export interface FollowOptions {
  /** Stops following: the iterator rejects with the signal's reason and the connection closes. */
  signal?: AbortSignal;
  /** Resume after this log id (a `log` event's `id`), e.g. one saved by an earlier run. */
  lastEventId?: number;
  /** Failed connections in a row before giving up with the last error (default 5). */
  maxReconnects?: number;
}

export interface StreamContext {
  baseUrl: string;
  fetch: (input: Request, init?: RequestInit) => Promise<Response>;
  headers: Record<string, string>;
  sleep: Sleep;
}

const DEFAULT_RETRY_MS = 1_000;
const MAX_DELAY_MS = 30_000;

/** A failed connection attempt that is worth another: the error, and how long the server asked to wait. */
interface Dropped {
  error: EmendError;
  waitMs?: number;
}

/** Opens the stream; throws for an answer that another attempt would not change (401, 404...). */
async function connect(
  ctx: StreamContext,
  id: string,
  lastEventId: number | undefined,
  signal: AbortSignal | undefined,
): Promise<Response | Dropped> {
  const headers: Record<string, string> = { ...ctx.headers, accept: 'text/event-stream' };
  if (lastEventId !== undefined) headers['last-event-id'] = String(lastEventId);
  const url = `${ctx.baseUrl}/v1/tasks/${encodeURIComponent(id)}/logs/stream`;
  let response: Response;
  try {
    response = await ctx.fetch(new Request(url, { headers, signal }));
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    return { error: networkError(err) as EmendError };
  }
  if (response.ok && response.body) return response;
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  const error = errorFromResponse(response, body);
  if (response.status !== 429 && response.status < 500) throw error;
  return { error, waitMs: error.retryAfter === undefined ? undefined : error.retryAfter * 1000 };
}

/** The messages of one connection, until its body ends; a broken connection rejects. */
async function* messages(body: ReadableStream<Uint8Array>, onRetry: (ms: number) => void) {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (m) => queue.push(m), onRetry });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
      while (queue.length > 0) yield queue.shift()!;
    }
  } finally {
    // The consumer stopped early (or the stream ended): close the connection.
    reader.cancel().catch(() => {});
  }
}

/** The typed event of a message; undefined for an event this client does not know (a newer server's). */
function eventOf(m: EventSourceMessage): TaskEvent | undefined {
  const data: unknown = JSON.parse(m.data);
  switch (m.event) {
    case 'connected':
      return { type: 'connected', data: data as { task_id: string } };
    case 'state':
      return { type: 'state', data: data as TaskStateEvent };
    case 'log':
      return { type: 'log', id: Number(m.id), data: data as TaskLogEvent };
    case 'end':
      return { type: 'end', data: data as { status: TerminalStatus } };
    default:
      return undefined;
  }
}

/**
 * The task's events as one uninterrupted stream: `connected` once, each `log` once and in
 * order, a `state` whenever the task's state changed, and `end` last. Reconnections are
 * invisible except for the time they take; after `maxReconnects` failed attempts in a row it
 * throws the last error (a NetworkError, or the server's EmendError).
 */
export async function* followTask(
  ctx: StreamContext,
  id: string,
  options: FollowOptions = {},
): AsyncGenerator<TaskEvent, void, undefined> {
  const { signal, maxReconnects = 5 } = options;
  let lastEventId = options.lastEventId;
  let retryMs = DEFAULT_RETRY_MS;
  let failures = 0;
  let connected = false;
  let lastState: string | undefined;
  for (;;) {
    const opened = await connect(ctx, id, lastEventId, signal);
    let dropped: Dropped = { error: streamEnded() };
    if (opened instanceof Response) {
      try {
        for await (const message of messages(opened.body!, (ms) => (retryMs = ms))) {
          const event = eventOf(message);
          if (event === undefined) continue;
          failures = 0;
          if (event.type === 'log') lastEventId = event.id;
          if (event.type === 'connected' && connected) continue;
          if (event.type === 'state' && JSON.stringify(event.data) === lastState) continue;
          if (event.type === 'connected') connected = true;
          if (event.type === 'state') lastState = JSON.stringify(event.data);
          yield event;
          if (event.type === 'end') return;
        }
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        dropped = { error: networkError(err) as EmendError };
      }
    } else dropped = opened;
    if (++failures > maxReconnects) throw dropped.error;
    const backoff = Math.min(retryMs * 2 ** (failures - 1), MAX_DELAY_MS);
    await ctx.sleep(Math.max(backoff, dropped.waitMs ?? 0), signal);
  }
}

const streamEnded = () =>
  new NetworkError({ status: 0, code: 'network', message: 'the task stream closed before its end event' });
