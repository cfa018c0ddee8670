import type { ServerResponse } from 'node:http';

/** Splits text into pieces of about `size` characters (whole code points) so a stream has several chunks. */
export function pieces(text: string, size = 20): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/** Writes server-sent events, yielding to the event loop between them so each goes out on its own. */
export class SseWriter {
  constructor(private readonly res: ServerResponse) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
  }

  async send(data: unknown, event?: string): Promise<void> {
    if (this.res.destroyed || this.res.writableEnded) return;
    const line = typeof data === 'string' ? data : JSON.stringify(data);
    this.res.write(`${event ? `event: ${event}\n` : ''}data: ${line}\n\n`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
