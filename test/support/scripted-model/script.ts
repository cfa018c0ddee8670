import type { Content, ModelRequest, Reply, ReplyUsage, Responder } from './types.js';

export const NO_REPLY = 'scripted-model: no reply scripted for this request';

/** What the double answers a generation request with. */
export type Decision =
  | { kind: 'content'; content: Content; usage: ReplyUsage | undefined }
  | { kind: 'error'; status: number; body: unknown; headers: Record<string, string> }
  | { kind: 'stall' }
  | { kind: 'unscripted'; message: string };

/** The queue of scripted replies and the fallback responder. */
export class Script {
  private readonly queue: (Reply | Responder)[] = [];
  private fallback: Responder | undefined;

  enqueue(replies: (Reply | Responder)[]): void {
    this.queue.push(...replies);
  }

  respond(responder: Responder): void {
    this.fallback = responder;
  }

  async next(req: ModelRequest): Promise<Decision> {
    let reply: Reply | undefined;
    const head = this.queue.shift();
    if (typeof head === 'function') reply = await head(req);
    else reply = head;
    if (reply === undefined && this.fallback) reply = await this.fallback(req);
    if (reply === undefined) return { kind: 'unscripted', message: NO_REPLY };
    return decide(reply);
  }
}

function decide(reply: Reply): Decision {
  const r = reply as Partial<
    Record<'status' | 'body' | 'headers' | 'json' | 'toolCalls' | 'text' | 'usage' | 'stall' | 'cutOff', unknown>
  >;
  if (r.stall === true) return { kind: 'stall' };
  if (typeof r.status === 'number') {
    return {
      kind: 'error',
      status: r.status,
      body: r.body,
      headers: (r.headers as Record<string, string> | undefined) ?? {},
    };
  }
  const usage = r.usage as ReplyUsage | undefined;
  if ('json' in r) return { kind: 'content', content: { text: '', toolCalls: [], json: { value: r.json } }, usage };
  if (Array.isArray(r.toolCalls)) {
    return {
      kind: 'content',
      content: { text: typeof r.text === 'string' ? r.text : '', toolCalls: r.toolCalls as Content['toolCalls'] },
      usage,
    };
  }
  if (typeof r.text === 'string')
    return { kind: 'content', content: { text: r.text, toolCalls: [], cutOff: r.cutOff === true }, usage };
  return {
    kind: 'unscripted',
    message:
      `scripted-model: a scripted reply has none of text, json, toolCalls, status or ` +
      `stall: ${JSON.stringify(reply)}`,
  };
}
