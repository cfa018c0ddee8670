/**
 * Text the database can hold. PostgreSQL's text and jsonb refuse U+0000 (NUL), and UTF-8 has
 * no encoding for an unpaired UTF-16 surrogate (a lone \ud800 in JSON): the driver turns it
 * into U+FFFD in text columns, and jsonb refuses the escape outright. Such input is refused
 * at the HTTP boundary, naming the field, instead of failing deep in a query as a 500 or
 * being stored as something the caller did not send.
 */

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export interface UnstorableText {
  /** JSON-pointer-like path of the offending value ('' for the value itself). */
  path: string;
  message: string;
}

function problemOf(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  if (LONE_SURROGATE.test(text)) return 'must be valid Unicode text (it holds an unpaired surrogate such as \\ud800)';
  return undefined;
}

/**
 * The first string (value or object key) in `data` that cannot be stored, or undefined.
 * Iterative, so a 10,000-deep document cannot overflow the stack.
 */
export function findUnstorableText(data: unknown): UnstorableText | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value: data, path: '' }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      const message = problemOf(value);
      if (message) return { path, message };
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${path}/${i}` });
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        const keyProblem = problemOf(key);
        if (keyProblem)
          return { path: `${path}/${key.replace(/[^\x20-\x7e]/g, '?')}`, message: `field name ${keyProblem}` };
        stack.push({ value: child, path: `${path}/${key}` });
      }
    }
  }
  return undefined;
}
