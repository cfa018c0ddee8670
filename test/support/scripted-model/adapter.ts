import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Content, ModelRequest, Provider, Usage } from './types.js';

/** What a provider adapter reads out of a request body; server.ts adds key, path, headers and text. */
export type ParsedRequest = Pick<ModelRequest, 'model' | 'stream' | 'structured' | 'tools' | 'system' | 'messages'>;

export interface AnswerContext {
  req: ModelRequest;
  content: Content;
  usage: Usage;
  /** A fresh id with the given prefix, unique within this double. */
  nextId(prefix: string): string;
}

/** One provider's wire format. */
export interface Adapter {
  provider: Provider;
  /** The API key as this provider's clients send it. */
  keyOf(req: IncomingMessage, url: URL): string | undefined;
  /** The provider's error body for a status. */
  errorBody(status: number, message: string): unknown;
  /** The message the provider gives for a rejected key. */
  badKeyMessage: string;
  /**
   * Generation route: the model in the path (Google) and whether the route streams, or undefined when the route is not
   * one.
   */
  generationRoute(route: string, url: URL): { model?: string; stream?: boolean } | undefined;
  parse(body: Record<string, unknown>, route: { model?: string; stream?: boolean }): ParsedRequest;
  answer(res: ServerResponse, ctx: AnswerContext): Promise<void>;
}

// ---- helpers shared by the adapters -------------------------------------------------------

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** How an assistant tool call appears in ModelRequest.messages, identical for every provider. */
export function renderToolCall(name: string, args: unknown): string {
  return `${name}(${JSON.stringify(args ?? {})})`;
}

/** A tool result as text: strings as they are, anything else as JSON. */
export function resultText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** Parses JSON argument text, keeping it as a string when it is not JSON. */
export function parseArgs(text: unknown): unknown {
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function joinText(parts: (string | undefined)[]): string {
  return parts.filter((p): p is string => p !== undefined && p !== '').join('\n');
}
