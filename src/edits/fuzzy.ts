/**
 * Fuzzy location of a SEARCH text: every window of the file whose line count is within a little
 * of the SEARCH's is scored by aligning lines (so a dropped or added line costs only that line),
 * each pair scored by character similarity. Lines are compared trimmed: indentation drift is the
 * whitespace strategy's business and must not make a window look worse here.
 */

export interface Window {
  /** Lines [start, end) of the file, 0-based. */
  start: number;
  end: number;
  /** 0..1; 1 is identical up to indentation. */
  score: number;
}

export interface FuzzyResult {
  /** The best window anywhere. */
  best?: Window;
  /** The best window that does not overlap `best`: the competitor that makes a match ambiguous. */
  second?: Window;
  /** Set when the file is too large to score; nothing else is then. */
  skipped?: string;
}

/** Line pairs scored at most; beyond it the answer should quote exactly rather than cost seconds. */
const MAX_PAIRS = 4_000_000;
/** Long lines are compared by their first characters: enough to tell them apart, bounded cost. */
const MAX_LINE = 240;
/** Separate places re-scored precisely after the cheap pass. */
const CANDIDATES = 6;

type Sim = (i: number, j: number) => number;

/**
 * Two passes, because character edit distance over every line pair of a large file costs
 * seconds: a cheap pass (bigram overlap per line pair) ranks every window, then the few best
 * separate places, and their neighbours, are scored by edit distance, which decides.
 */
export function fuzzyFind(file: string[], search: string[]): FuzzyResult {
  const a = search.map((s) => s.trim().slice(0, MAX_LINE));
  const b = file.map((s) => s.trim().slice(0, MAX_LINE));
  const n = a.length;
  const total = b.length;
  if (n === 0 || total === 0) return {};
  if (n * total > MAX_PAIRS) {
    return { skipped: `the file (${total} lines) is too large to search fuzzily for ${n} lines` };
  }
  // A line's weight is its length (+1 so blank lines count a little): long lines decide the match.
  const wa = a.map((s) => s.length + 1);
  const sumA = wa.reduce((x, y) => x + y, 0);
  const wb = b.map((s) => s.length + 1);
  const prefixB = [0];
  for (const w of wb) prefixB.push(prefixB[prefixB.length - 1]! + w);
  const slack = Math.max(1, Math.floor(n / 8));
  const prev = new Float64Array(n + slack + 2);
  const cur = new Float64Array(n + slack + 2);

  const memoised = (f: (x: string, y: string) => number): Sim => {
    const memo = new Float32Array(n * total).fill(-1);
    return (i, j) => {
      const at = i * total + j;
      if (memo[at]! < 0) memo[at] = f(a[i]!, b[j]!);
      return memo[at]!;
    };
  };

  /** The best window starting at line s, over the sizes near the SEARCH's. */
  const bestAt = (s: number, sim: Sim): Window | undefined => {
    const widest = Math.min(n + slack, total - s);
    const narrowest = Math.max(1, n - slack);
    if (widest < narrowest) return undefined;
    // Classic alignment: rows are SEARCH lines, columns window lines; a matched pair earns its
    // similarity times both weights, so a perfect window earns exactly sumA + its own weight.
    // Row n, column m is then window size m's score: one pass serves every size. Pairs far off
    // the diagonal cannot belong to a good alignment of near-equal lengths and are not scored.
    const band = slack + 1;
    prev.fill(0);
    for (let i = 1; i <= n; i++) {
      cur[0] = 0;
      for (let j = 1; j <= widest; j++) {
        let v = Math.max(prev[j]!, cur[j - 1]!);
        if (j - i <= band && i - j <= band) {
          const diag = prev[j - 1]! + sim(i - 1, s + j - 1) * (wa[i - 1]! + wb[s + j - 1]!);
          if (diag > v) v = diag;
        }
        cur[j] = v;
      }
      prev.set(cur.subarray(0, widest + 1));
    }
    let best: Window | undefined;
    for (let m = narrowest; m <= widest; m++) {
      const score = prev[m]! / (sumA + prefixB[s + m]! - prefixB[s]!);
      // Ties go to the size closest to the SEARCH's own.
      if (
        !best ||
        score > best.score + 1e-9 ||
        (Math.abs(score - best.score) <= 1e-9 && Math.abs(m - n) < Math.abs(best.end - best.start - n))
      ) {
        best = { start: s, end: s + m, score };
      }
    }
    return best;
  };

  const grams = new Map<string, Int32Array>();
  const gramsOf = (x: string): Int32Array => {
    let g = grams.get(x);
    if (!g) {
      g = bigrams(x);
      grams.set(x, g);
    }
    return g;
  };
  const rough = memoised((x, y) => (x === y ? 1 : dice(gramsOf(x), gramsOf(y))));
  const ranked: Window[] = [];
  for (let s = 0; s < total; s++) {
    const w = bestAt(s, rough);
    if (w) ranked.push(w);
  }
  ranked.sort((x, y) => y.score - x.score || x.start - y.start);
  const places: Window[] = [];
  for (const w of ranked) {
    if (places.length >= CANDIDATES) break;
    if (places.every((p) => w.end <= p.start || w.start >= p.end)) places.push(w);
  }

  const precise = memoised(similarity);
  const scored = new Map<number, Window>();
  for (const p of places) {
    for (let s = Math.max(0, p.start - slack); s <= Math.min(total - 1, p.start + slack); s++) {
      if (scored.has(s)) continue;
      const w = bestAt(s, precise);
      if (w) scored.set(s, w);
    }
  }
  let best: Window | undefined;
  for (const w of scored.values())
    if (!best || w.score > best.score || (w.score === best.score && w.start < best.start)) best = w;
  if (!best) return {};
  let second: Window | undefined;
  for (const w of scored.values()) {
    if (w.end <= best.start || w.start >= best.end) {
      if (!second || w.score > second.score) second = w;
    }
  }
  return { best, second };
}

/** A line's character bigrams, sorted, for a multiset intersection by merging. */
function bigrams(x: string): Int32Array {
  const g = new Int32Array(Math.max(0, x.length - 1));
  for (let i = 0; i + 1 < x.length; i++) g[i] = (x.charCodeAt(i) << 16) | x.charCodeAt(i + 1);
  return g.sort();
}

/** Dice coefficient of two bigram multisets: cheap, and close enough to rank windows. */
function dice(x: Int32Array, y: Int32Array): number {
  if (x.length === 0 || y.length === 0) return 0;
  let i = 0;
  let j = 0;
  let common = 0;
  while (i < x.length && j < y.length) {
    if (x[i] === y[j]) {
      common++;
      i++;
      j++;
    } else if (x[i]! < y[j]!) i++;
    else j++;
  }
  return (2 * common) / (x.length + y.length);
}

/** 1 - edit distance / longer length: 1 for equal lines, near 0 for unrelated ones. */
export function similarity(x: string, y: string): number {
  if (x === y) return 1;
  if (x.length === 0 || y.length === 0) return 0;
  const longer = Math.max(x.length, y.length);
  // The length difference alone bounds the distance from below; far-apart lengths need no DP.
  if (Math.min(x.length, y.length) / longer < 0.5) return 0;
  let row = new Int32Array(y.length + 1);
  let next = new Int32Array(y.length + 1);
  for (let j = 0; j <= y.length; j++) row[j] = j;
  for (let i = 1; i <= x.length; i++) {
    next[0] = i;
    const cx = x.charCodeAt(i - 1);
    for (let j = 1; j <= y.length; j++) {
      let v = row[j - 1]! + (cx === y.charCodeAt(j - 1) ? 0 : 1);
      const up = row[j]! + 1;
      const left = next[j - 1]! + 1;
      if (up < v) v = up;
      if (left < v) v = left;
      next[j] = v;
    }
    const t = row;
    row = next;
    next = t;
  }
  return 1 - row[y.length]! / longer;
}
