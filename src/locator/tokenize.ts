// Code-aware tokens for the locator: identifiers are kept whole and also split at camelCase,
// PascalCase, snake_case and digit boundaries; everything is lower-cased; a few stop words go.

const STOP_WORDS = new Set(
  (
    'a an and are as at be but by do does for from has have if in into is it its not of on or that the then this ' +
    'to was were when which will with i we you he she they there their what how can should would could self def ' +
    'return import none true false var let const new'
  ).split(' '),
);

const IDENTIFIER = /[A-Za-z_$][A-Za-z0-9_$]*|[0-9]+/g;

/** The parts of one identifier: `parseHTTPResponse2_v` → parse, http, response, 2, v. */
export function splitIdentifier(word: string): string[] {
  return word
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/([A-Za-z])([0-9])/g, '$1 $2')
    .replace(/([0-9])([A-Za-z])/g, '$1 $2')
    .split(/[_$\s]+/)
    .filter(Boolean)
    .map((p) => p.toLowerCase());
}

/** One identifier's tokens: the whole (lower-cased, outer `_`/`$` trimmed) and its parts, stop words and one-letter parts dropped. */
function wordTokens(word: string): readonly string[] {
  const whole = word.toLowerCase().replace(/^[_$]+|[_$]+$/g, '');
  // Most words of code and prose are one lower-case part: no splitting to do.
  const parts = /^[a-z]+$/.test(word) ? [word] : splitIdentifier(word);
  const out: string[] = [];
  if (whole && !STOP_WORDS.has(whole) && (whole.length > 1 || /\d/.test(whole))) out.push(whole);
  if (parts.length > 1) for (const p of parts) if (p !== whole && p.length > 1 && !STOP_WORDS.has(p)) out.push(p);
  return out;
}

/**
 * Remembered tokens per identifier, for one pass over many texts: a repository repeats the same
 * few thousand identifiers in every file, and splitting each occurrence again was an eighth of the
 * time to index one (bench:locator, cold).
 */
export type TokenMemo = Map<string, readonly string[]>;

/** Tokens of a text: whole identifiers (lower-cased) plus their parts, stop words and one-letter parts dropped. */
export function tokenize(text: string, memo?: TokenMemo): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(IDENTIFIER)) {
    const word = match[0];
    if (word.length > 64) continue;
    let tokens = memo?.get(word);
    if (!tokens) {
      tokens = wordTokens(word);
      memo?.set(word, tokens);
    }
    for (const t of tokens) out.push(t);
  }
  return out;
}
