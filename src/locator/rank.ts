import { type Bm25Index, own, scoreBm25, topTerms } from './bm25.js';

export interface LocatorIndex {
  version: number;
  bm25: Bm25Index;
  /** symbol name → paths of the files that define it */
  symbols: Record<string, string[]>;
}

export interface RankedFile {
  path: string;
  score: number;
  reasons: string[];
}

// Weights on top of the BM25 score, which is scaled so the best file scores 1.
const STACK_FRAME = 3;
const PATH_MENTION = 2;
const SYMBOL_MENTION = 1;
const SYMBOL_CAP = 1.5;
const STEM_MENTION = 0.3;
const TEST_DEMOTION = 0.3;
const DOC_DEMOTION = 0.5;

const TEST_PATH = [
  /(^|\/)(tests?|__tests__|spec|specs|testing)\//,
  /(^|\/)test_[^/]*\.py$/,
  /_tests?\.(py|go|rs)$/,
  /\.(test|spec)\.[cm]?[jt]sx?$/,
  /(^|\/)conftest\.py$/,
  /Tests?\.(java|kt|cs)$/,
];
export const isTestPath = (path: string) => TEST_PATH.some((re) => re.test(path));
const isDocPath = (path: string) => /\.(md|rst|txt|adoc)$/i.test(path) || /(^|\/)(docs?|changelog)\//i.test(path);

/** Whether the prompt is about tests (then test files are not demoted). */
export const promptAboutTests = (prompt: string) => /\b(tests?|testing|test[ _-]?(case|suite)s?|unit[ -]?tests?|spec files?)\b/i.test(prompt);

const SOURCE_EXT = 'py|pyi|js|jsx|mjs|cjs|ts|tsx|mts|cts|go|rs|java|kt|scala|c|h|cc|cpp|hpp|cs|rb|php|swift|sh|lua';

export interface StackFrame {
  file: string;
  line: number;
}

/** File/line pairs of stack-trace frames: Python, Node/JS, and the `file.ext:LINE` form of Go, Rust, compilers. */
export function stackFrames(prompt: string): StackFrame[] {
  const frames: StackFrame[] = [];
  for (const m of prompt.matchAll(/File "([^"\n]+)", line (\d+)/g)) frames.push({ file: m[1]!, line: Number(m[2]) });
  const colon = new RegExp(`((?:[A-Za-z]:)?[\\w.@~+/\\\\-]*[\\w-]\\.(?:${SOURCE_EXT})):(\\d+)(?::\\d+)?`, 'g');
  for (const m of prompt.matchAll(colon)) frames.push({ file: m[1]!.replace(/^file:\/\//, ''), line: Number(m[2]) });
  return frames;
}

/** The candidate file a mentioned path refers to: the longest candidate path that is a suffix of it at a `/` boundary, or the reverse. */
function resolveMention(mention: string, byBase: Map<string, string[]>): string[] {
  const clean = mention.replace(/\\/g, '/').replace(/^\.?\//, '');
  const base = clean.slice(clean.lastIndexOf('/') + 1);
  const candidates = byBase.get(base) ?? [];
  const suffix = (long: string, short: string) => long === short || long.endsWith(`/${short}`);
  const hits = candidates.filter((p) => suffix(clean, p) || suffix(p, clean));
  if (hits.length <= 1) return hits;
  // A bare file name that several files share: keep the ones with the longest common tail.
  const tail = (p: string) => {
    const a = p.split('/').reverse();
    const b = clean.split('/').reverse();
    let n = 0;
    while (n < a.length && n < b.length && a[n] === b[n]) n++;
    return n;
  };
  const best = Math.max(...hits.map(tail));
  return hits.filter((p) => tail(p) === best);
}

/** Identifiers in the prompt with whether they look like code (snake_case, camelCase, in backticks, called, dotted). */
function promptIdentifiers(prompt: string): Map<string, boolean> {
  const ids = new Map<string, boolean>();
  const codeSpans = new Set<string>();
  for (const m of prompt.matchAll(/`([^`\n]+)`/g)) for (const w of m[1]!.match(/[A-Za-z_]\w*/g) ?? []) codeSpans.add(w);
  for (const m of prompt.matchAll(/(?<![\w.])((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)(\s*\()?/g)) {
    const parts = m[1]!.split('.');
    for (const w of parts) {
      if (w.length < 3) continue;
      const codeLike = /_/.test(w.slice(1)) || /[a-z][A-Z]/.test(w) || /^[A-Z][a-z]+[A-Z]/.test(w) || codeSpans.has(w) || parts.length > 1 || (m[2] !== undefined && w === parts.at(-1));
      ids.set(w, (ids.get(w) ?? false) || codeLike);
    }
  }
  return ids;
}

/** Ranks the indexed files for the prompt: BM25, then boosts for what the prompt names, then the test-file demotion. */
export function rank(index: LocatorIndex, prompt: string, top: number): RankedFile[] {
  const docs = index.bm25.docs;
  const { scores, terms } = scoreBm25(index.bm25, prompt);
  const maxBm25 = Math.max(0, ...scores);
  const byPath = new Map<string, number>();
  const byBase = new Map<string, string[]>();
  docs.forEach((d, i) => {
    byPath.set(d.path, i);
    const base = d.path.slice(d.path.lastIndexOf('/') + 1);
    byBase.set(base, [...(byBase.get(base) ?? []), d.path]);
  });

  const base = Array.from(scores, (s) => (maxBm25 > 0 ? s / maxBm25 : 0));
  const strong = new Float64Array(docs.length); // explicit references: not demoted
  const weak = new Float64Array(docs.length);
  const reasons: string[][] = docs.map(() => []);

  // Stack-trace frames.
  const framed = new Map<number, number[]>();
  for (const f of stackFrames(prompt)) {
    for (const p of resolveMention(f.file, byBase)) {
      const i = byPath.get(p)!;
      framed.set(i, [...(framed.get(i) ?? []), f.line]);
    }
  }
  for (const [i, lines] of framed) {
    strong[i]! += STACK_FRAME;
    reasons[i]!.push(`in a stack trace of the prompt (line${lines.length > 1 ? 's' : ''} ${[...new Set(lines)].join(', ')})`);
  }

  // Paths and dotted module names named in the prompt.
  const mentioned = new Set<number>();
  for (const m of prompt.matchAll(/[\w.@~+/\\-]*[\w-]\.[A-Za-z][A-Za-z0-9]{0,5}\b/g)) {
    const raw = m[0];
    const options = [raw];
    // `requests.models` or `_pytest.python.Function`: a module path, as a file or a package.
    if (/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$/.test(raw)) {
      const parts = raw.split('.');
      for (let n = parts.length; n >= 2; n--) {
        const mod = parts.slice(0, n).join('/');
        options.push(`${mod}.py`, `${mod}/__init__.py`);
      }
    }
    for (const option of options) {
      const hits = resolveMention(option, byBase);
      if (hits.length === 0 || hits.length > 3) continue;
      for (const p of hits) {
        const i = byPath.get(p)!;
        if (framed.has(i) || mentioned.has(i)) continue;
        mentioned.add(i);
        strong[i]! += PATH_MENTION;
        reasons[i]!.push(`named in the prompt as "${raw}"`);
      }
      break;
    }
  }

  // Symbols named in the prompt, from the definition index; a name defined in many files counts less.
  const symbolBoost = new Float64Array(docs.length);
  const symbolNames: string[][] = docs.map(() => []);
  for (const [name, codeLike] of promptIdentifiers(prompt)) {
    const defs = own(index.symbols, name);
    if (!defs || defs.length > 20) continue;
    const w = (codeLike ? SYMBOL_MENTION : SYMBOL_MENTION / 4) / Math.sqrt(defs.length);
    for (const p of defs) {
      const i = byPath.get(p);
      if (i === undefined) continue;
      symbolBoost[i]! += w;
      symbolNames[i]!.push(name);
    }
  }
  symbolBoost.forEach((b, i) => {
    if (b <= 0) return;
    weak[i]! += Math.min(SYMBOL_CAP, b);
    reasons[i]!.push(`defines ${symbolNames[i]!.slice(0, 5).join(', ')}${symbolNames[i]!.length > 5 ? ', …' : ''}, named in the prompt`);
  });

  // A file whose name (without extension) is a word of the prompt.
  const words = new Set(prompt.toLowerCase().match(/[a-z_][a-z0-9_]*/g) ?? []);
  docs.forEach((d, i) => {
    if (mentioned.has(i) || framed.has(i)) return;
    const stem = d.path.slice(d.path.lastIndexOf('/') + 1).replace(/\.[^.]+$/, '').toLowerCase();
    if (stem.length >= 4 && stem !== '__init__' && words.has(stem)) {
      weak[i]! += STEM_MENTION;
      reasons[i]!.push(`file name "${stem}" appears in the prompt`);
    }
  });

  const aboutTests = promptAboutTests(prompt);
  const results: RankedFile[] = docs.map((d, i) => {
    let soft = base[i]! + weak[i]!;
    if (base[i]! > 0) reasons[i]!.unshift(`BM25 ${scores[i]!.toFixed(2)} (${topTerms(index.bm25, i, terms).join(', ')})`);
    if (!aboutTests && isTestPath(d.path)) {
      soft *= TEST_DEMOTION;
      reasons[i]!.push('test file, demoted: the prompt is not about tests');
    } else if (isDocPath(d.path)) {
      soft *= DOC_DEMOTION;
      reasons[i]!.push('documentation, demoted');
    }
    return { path: d.path, score: Math.round((soft + strong[i]!) * 1000) / 1000, reasons: reasons[i]! };
  });
  return results
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || a.path.localeCompare(b.path))
    .slice(0, top);
}
