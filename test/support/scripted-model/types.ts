import type { IncomingMessage } from 'node:http';

export type Provider = 'openai' | 'anthropic' | 'google';

/** Token counts a reply reports; whichever is missing is estimated (see usage.ts). */
export interface ReplyUsage {
  input?: number;
  output?: number;
}

export interface ToolCallReply {
  name: string;
  args: unknown;
}

export type Reply =
  /**
   * Assistant text. `cutOff`: the answer stopped at the output limit (finish reason `length`;
   * Anthropic `max_tokens`, Google `MAX_TOKENS`), as a provider ends an answer it truncated.
   */
  | { text: string; usage?: ReplyUsage; cutOff?: boolean }
  /**
   * Structured output, rendered the way the provider returns it for the request: JSON text in
   * the message (OpenAI response_format, Anthropic output_config.format, Google
   * responseMimeType), or a tool_use of the forced `json` tool when that is how an Anthropic
   * client asked.
   */
  | { json: unknown; usage?: ReplyUsage }
  /** Tool calls, optionally with assistant text before them. */
  | { toolCalls: ToolCallReply[]; text?: string; usage?: ReplyUsage }
  /** An error reply: the status, the provider's error body (default: one in its shape) and headers. */
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /**
   * A provider that stops answering: a streamed request gets its 200 and event-stream headers,
   * then nothing; a plain request gets nothing at all. The connection stays open until the
   * client gives up (or the double closes). Nothing is billed.
   */
  | { stall: true };

/** A generation request (chat/messages/generateContent), normalised across the providers. */
export interface ModelRequest {
  provider: Provider;
  model: string;
  /** The API key the client sent. */
  key: string | undefined;
  stream: boolean;
  /** The client asked for structured (JSON schema / JSON) output. */
  structured: boolean;
  /** Names of the tools offered (Anthropic's forced `json` structured-output tool is not listed). */
  tools: string[];
  /** All system text joined with newlines. */
  system: string;
  /**
   * Messages in order; tool results become role 'tool' with the result as text, assistant tool calls render as
   * `name({"json":"args"})` lines.
   */
  messages: { role: 'user' | 'assistant' | 'tool'; text: string }[];
  /** System and all message text joined with newlines, handy for `toContain` assertions. */
  text: string;
  /** The raw parsed request body. */
  body: unknown;
  path: string;
  method: string;
  headers: IncomingMessage['headers'];
}

export type Responder = (req: ModelRequest) => Reply | undefined | Promise<Reply | undefined>;

export interface RecordedRequest {
  method: string;
  /** Path and query string, as received. */
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body, when the request had one. */
  body?: unknown;
}

export interface ScriptedModel {
  /** Base URLs as a client would configure them for each provider. */
  urls: { openai: string; anthropic: string; google: string };
  /** Every HTTP request, in order. */
  requests: RecordedRequest[];
  /** Every generation request (chat/messages/generateContent), in order, including rejected ones. */
  calls: ModelRequest[];
  /** Keys the double accepts; any other key is answered 401 like the real providers do. */
  validKeys: Set<string>;
  /** Queue replies consumed in order by generation requests (any provider). */
  enqueue(...replies: (Reply | Responder)[]): void;
  /** Fallback when the queue is empty or a queued responder returns undefined (last one set wins). */
  respond(responder: Responder): void;
  /**
   * Tokens the double billed in total: the usage of every successful reply delivered whole to a client still connected.
   */
  billed(): { input: number; output: number };
  /** Requests answered with a stall so far. */
  stalls(): number;
  close(): Promise<void>;
}

/** A successful reply, reduced to what every provider renders. */
export interface Content {
  text: string;
  toolCalls: ToolCallReply[];
  /** Present (the value) when the reply was `{ json }`. */
  json?: { value: unknown };
  /** The answer stopped at the output limit. */
  cutOff?: boolean;
}

export interface Usage {
  input: number;
  output: number;
}
