import { type TokenMemo, tokenize } from './tokenize.js';

export const K1 = 1.2;
export const B = 0.75;
/** A path token counts as this many content tokens: the path names what a file is about. */
export const PATH_WEIGHT = 3;
/**
 * A token of a name the file defines (class, function, method...) counts as this many more: a file is about what it
 * defines.
 */
export const SYMBOL_WEIGHT = 2;

export interface Bm25Doc {
  path: string;
  length: number;
  /** term → weighted frequency */
  tf: Record<string, number>;
}

export interface Bm25Index {
  docs: Bm25Doc[];
  df: Record<string, number>;
  avgLength: number;
}

/**
 * A count from one of the index's records. Own properties only: a record read back from the
 * cache's JSON has Object.prototype, where `constructor` or `toString` would otherwise answer.
 */
export const own = <T>(record: Record<string, T>, key: string): T | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined;

/** Tokens of a path: its directories, its file name and the name's parts, extension dropped. */
export function pathTokens(path: string): string[] {
  return tokenize(path.replace(/\.[A-Za-z0-9]+$/, '').replace(/[/.\\-]/g, ' '));
}

/** Documents of path, defined names and content, one term frequency each, the fields weighted (BM25F-like). */
export function buildBm25(files: { path: string; content: string; symbols?: string[] }[]): Bm25Index {
  const docs: Bm25Doc[] = [];
  const df: Record<string, number> = Object.create(null);
  let total = 0;
  const memo: TokenMemo = new Map();
  for (const { path, content, symbols } of files) {
    const tf: Record<string, number> = Object.create(null);
    let length = 0;
    for (const t of pathTokens(path)) {
      tf[t] = (tf[t] ?? 0) + PATH_WEIGHT;
      length += PATH_WEIGHT;
    }
    for (const t of tokenize((symbols ?? []).join(' '), memo)) {
      tf[t] = (tf[t] ?? 0) + SYMBOL_WEIGHT;
      length += SYMBOL_WEIGHT;
    }
    for (const t of tokenize(content, memo)) {
      tf[t] = (tf[t] ?? 0) + 1;
      length += 1;
    }
    for (const t of Object.keys(tf)) df[t] = (df[t] ?? 0) + 1;
    docs.push({ path, length, tf });
    total += length;
  }
  return { docs, df, avgLength: docs.length ? total / docs.length : 0 };
}

/**
 * BM25 score of every document for the query, by document index. A string query counts each
 * distinct term once; a map gives each term its weight (how much of the query it is).
 */
export function scoreBm25(
  index: Bm25Index,
  query: string | Map<string, number>,
): { scores: Float64Array; terms: string[] } {
  const weights = typeof query === 'string' ? new Map(tokenize(query).map((t) => [t, 1])) : query;
  const terms = [...weights.keys()];
  const n = index.docs.length;
  const scores = new Float64Array(n);
  const idf = new Map<string, number>();
  for (const [t, qw] of weights) {
    const df = own(index.df, t);
    if (df && qw > 0) idf.set(t, qw * Math.log(1 + (n - df + 0.5) / (df + 0.5)));
  }
  if (idf.size === 0) return { scores, terms };
  index.docs.forEach((doc, i) => {
    const norm = K1 * (1 - B + (B * doc.length) / (index.avgLength || 1));
    let s = 0;
    for (const [t, w] of idf) {
      const f = own(doc.tf, t);
      if (f) s += (w * f * (K1 + 1)) / (f + norm);
    }
    scores[i] = s;
  });
  return { scores, terms };
}

/** The query terms that contribute most to one document's score, for a reason line. */
export function topTerms(index: Bm25Index, docIndex: number, terms: string[], k = 4): string[] {
  const doc = index.docs[docIndex];
  if (!doc) return [];
  const n = index.docs.length;
  return terms
    .filter((t) => own(doc.tf, t))
    .map((t) => ({ t, w: Math.log(1 + (n - (own(index.df, t) ?? 0) + 0.5) / ((own(index.df, t) ?? 0) + 0.5)) }))
    .sort((a, b) => b.w - a.w)
    .slice(0, k)
    .map((x) => x.t);
}
