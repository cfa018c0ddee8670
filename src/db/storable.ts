/**
 * Values the database can hold. PostgreSQL's text and jsonb refuse U+0000 (NUL), and jsonb
 * refuses an unpaired UTF-16 surrogate. HTTP input holding either is refused at the boundary
 * (src/http/storable-text.ts); what the service writes from elsewhere — a model's answer (a
 * BYOK endpoint may send anything), a repository's text quoted in a step's output, a tool's
 * error message — is made storable here instead, so a stray byte can neither fail the step
 * that met it nor make its log row vanish. Each such character becomes U+FFFD, the
 * replacement character, which is what a reader would see for it anyway.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the very character this finds.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export const REPLACEMENT = '\ufffd';

export function storableText(text: string): string {
  return text.replace(UNSTORABLE, REPLACEMENT);
}

// In JSON text (as JSON.stringify writes it) a NUL is the escape \u0000 and a lone surrogate
// the escape \udXXX (paired ones are written as themselves); an escape preceded by an even
// run of backslashes is a real one, not the text "\u0000" in the value.
const ESCAPED = /(?<=(?:^|[^\\])(?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/gi;

/**
 * A copy of a JSON-bound value with every string (values and object keys) made storable.
 * A value with nothing to replace comes back as it is.
 */
export function storableJson<T>(value: T): T {
  const json = JSON.stringify(value);
  if (json === undefined) return value;
  const fixed = json.replace(ESCAPED, '\\ufffd');
  return fixed === json ? value : (JSON.parse(fixed) as T);
}
