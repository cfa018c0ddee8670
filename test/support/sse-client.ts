/**
 * A small Server-Sent Events client for tests: fetch over a real socket, and a parser that
 * follows the WHATWG event-stream rules (CR, LF or CRLF line ends, `:` comments, the
 * `event`, `data`, `id` and `retry` fields, one optional space after the colon).
 */

export interface SseEvent {
  kind: 'event';
  event: string;
  data: string;
  /** The last event id in force when this event was dispatched (as EventSource reports it). */
  lastEventId: string;
  /** Whether this event itself carried an `id:` field. */
  hasId: boolean;
}

export interface SseComment {
  kind: 'comment';
  text: string;
}

export type SseItem = SseEvent | SseComment;

/** Turns chunks of text into events and comments; keeps the state a stream needs between chunks. */
export class SseParser {
  lastEventId = '';
  retry: number | undefined;
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private sawId = false;

  constructor(private readonly emit: (item: SseItem) => void) {}

  push(text: string) {
    this.buffer += text;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (!m) break;
      // A CR at the very end may be the first half of a CRLF split across chunks.
      if (m[0] === '\r' && m.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      this.line(line);
    }
  }

  /** The stream ended: an event not terminated by a blank line is discarded, per the spec. */
  finish() {
    this.buffer = '';
    this.data = [];
    this.event = '';
  }

  private line(line: string) {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return this.emit({ kind: 'comment', text: line.slice(1).replace(/^ /, '') });
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) {
      this.lastEventId = value;
      this.sawId = true;
    } else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
  }

  private dispatch() {
    const sawId = this.sawId;
    this.sawId = false;
    if (this.data.length === 0) {
      this.event = '';
      return;
    }
    const item: SseEvent = {
      kind: 'event',
      event: this.event || 'message',
      data: this.data.join('\n'),
      lastEventId: this.lastEventId,
      hasId: sawId,
    };
    this.data = [];
    this.event = '';
    this.emit(item);
  }
}

export interface SseConnection {
  status: number;
  headers: Headers;
  /** Everything received so far, in order. */
  items: SseItem[];
  /** The events alone (no comments). */
  events(): SseEvent[];
  /** The last id seen, to reconnect with as Last-Event-ID. */
  lastEventId(): string;
  /**
   * Resolves with the first item (from index `from` on) matching `match`; rejects after timeoutMs or if the stream
   * closes first.
   */
  waitFor(match: (item: SseItem) => boolean, timeoutMs?: number, from?: number): Promise<SseItem>;
  /** Resolves with probe's first truthy answer, asked again whenever items arrive; rejects like waitFor. */
  until<T>(probe: () => T | undefined | false, timeoutMs?: number): Promise<T>;
  /** Resolves when the server has closed the stream. */
  closed: Promise<void>;
  isClosed(): boolean;
  /** Disconnects from our side. */
  close(): void;
}

export interface SseRequest {
  headers?: Record<string, string>;
}

/** Opens a stream; for a non-2xx answer, the status and the body (JSON) are returned instead. */
export async function openSse(
  url: string,
  req: SseRequest = {},
): Promise<SseConnection | { status: number; headers: Headers; body: unknown }> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...req.headers }, signal: abort.signal });
  if (!res.ok || !res.body) return { status: res.status, headers: res.headers, body: await res.json() };

  const items: SseItem[] = [];
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  const parser = new SseParser((item) => {
    items.push(item);
    notify();
  });
  let closed = false;
  const reader = res.body.getReader();
  const closedPromise = (async () => {
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.push(decoder.decode(value, { stream: true }));
      }
    } catch {
      // aborted by close(), or the connection dropped
    }
    parser.finish();
    closed = true;
    notify();
  })();

  const conn: SseConnection = {
    status: res.status,
    headers: res.headers,
    items,
    events: () => items.filter((i): i is SseEvent => i.kind === 'event'),
    lastEventId: () => parser.lastEventId,
    waitFor(match, timeoutMs = 10_000, from = 0) {
      let next = from;
      return conn.until(() => {
        // Each item is looked at once, however many arrive.
        for (; next < items.length; next++) if (match(items[next]!)) return items[next]!;
        return undefined;
      }, timeoutMs);
    },
    until(probe, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = probe();
          if (found !== undefined && found !== false) finish(() => resolve(found));
          else if (closed)
            finish(() => reject(new Error(`stream closed before the awaited item; got ${describe(items)}`)));
        };
        const timer = setTimeout(
          () => finish(() => reject(new Error(`timed out after ${timeoutMs} ms; got ${describe(items)}`))),
          timeoutMs,
        );
        const finish = (then: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          then();
        };
        waiters.add(check);
        check();
      });
    },
    closed: closedPromise,
    isClosed: () => closed,
    close: () => {
      // Cancelling the reader settles a pending read even when the body has just ended;
      // aborting the request then drops the connection.
      void reader.cancel().catch(() => {});
      abort.abort();
    },
  };
  return conn;
}

/** Narrows openSse's answer to an open stream, failing the test with the body otherwise. */
export function mustOpen(answer: Awaited<ReturnType<typeof openSse>>): SseConnection {
  if ('items' in answer) return answer;
  throw new Error(`expected an event stream, got HTTP ${answer.status}: ${JSON.stringify(answer.body)}`);
}

function describe(items: SseItem[]): string {
  return items
    .slice(-20)
    .map((i) => (i.kind === 'comment' ? `:${i.text}` : `${i.event}${i.hasId ? `#${i.lastEventId}` : ''}`))
    .join(' ');
}
