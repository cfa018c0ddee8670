// Which of a file's definitions a request is about: definition names scored against the request's
// code-aware tokens, so an outline or a scripted reader can show the matching ones first.
import type { FileDefinition } from './rank.js';
import { splitIdentifier, tokenize } from './tokenize.js';

/**
 * How well one definition's name matches the request's tokens: the share of the name's parts the
 * request uses, plus 2 when the request names it whole (`_showfixtures_main`, `Session.send`).
 */
export function definitionScore(def: FileDefinition, want: ReadonlySet<string>): number {
  const [name] = def;
  const parts = splitIdentifier(name).filter((p) => p.length > 1);
  if (parts.length === 0) return 0;
  const shared = parts.filter((p) => want.has(p)).length / parts.length;
  const whole = want.has(name.toLowerCase().replace(/^[_$]+|[_$]+$/g, '')) ? 2 : 0;
  return shared + whole;
}

/**
 * The `n` definitions that best match the request, best first (ties: the earlier in the file); only
 * definitions sharing at least one token with it.
 */
export function matchingDefinitions(defs: FileDefinition[], request: string, n: number): FileDefinition[] {
  const want = new Set(tokenize(request));
  return defs
    .map((d, i) => ({ d, i, score: definitionScore(d, want) }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, n)
    .map((x) => x.d);
}
