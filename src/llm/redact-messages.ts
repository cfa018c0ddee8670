import type { ModelMessage } from 'ai';

/**
 * Fields of a message or a part that say what it is rather than carry text: never rewritten, so a
 * secret that happens to equal a role or a part's type cannot break the request's shape. Binary
 * content (`image`, `data`) is left as it is.
 */
const STRUCTURE = new Set([
  'role',
  'type',
  'toolCallId',
  'toolName',
  'mediaType',
  'providerOptions',
  'providerExecuted',
  'image',
  'data',
]);
/** Fields holding a value the model or a tool made (a call's arguments, a result's value): every string in them is text. */
const PAYLOAD = new Set(['input', 'value']);

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;

function walk(v: unknown, redact: (text: string) => string, payload: boolean): unknown {
  if (typeof v === 'string') return redact(v);
  if (Array.isArray(v)) return v.map((x) => walk(x, redact, payload));
  if (!isPlainObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v))
    out[k] = !payload && STRUCTURE.has(k) ? x : walk(x, redact, payload || PAYLOAD.has(k));
  return out;
}

/**
 * The messages with `redact` applied to every text they carry: string contents, text and reasoning
 * parts, tool calls' arguments, tool results' values, file names — any field but those naming the
 * structure, so a part type the SDK adds later is covered too. A copy: the caller's are unchanged.
 */
export function redactMessages(messages: ModelMessage[], redact: (text: string) => string): ModelMessage[] {
  // The walk keeps every object's shape and rewrites only strings, so the copy is a ModelMessage[] again.
  return walk(messages, redact, false) as ModelMessage[];
}
