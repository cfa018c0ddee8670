/**
 * The locator benchmark's sets (bench/locator.ts): which files of an instance are gold, which
 * files are tests, which files are the set's language, and the plain BM25 the locator is
 * measured beside. Definitions of the benchmark, written apart from src/locator so that a change
 * to the locator cannot move what it is measured against.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

export interface BenchInstance {
  instance_id: string;
  repo: string;
  base_commit: string;
  problem_statement: string;
  /** The files an answer should name: any of them in the top k counts. */
  gold: string[];
}

export type SetLanguage = 'python' | 'javascript';

export interface BenchSet {
  name: string;
  file: string;
  language: SetLanguage;
  instances: BenchInstance[];
}

/** The four sets of /work/shared/bench (its README), in the order they are measured. */
export const DEFAULT_SETS = ['swe-lite-dev', 'py-loc-dev3', 'js-swe-dev', 'js-mm-dev'];

const PYTHON = /\.py$/;
/** JavaScript and TypeScript, declaration files (`.d.ts`) included: what a JS/TS fix edits. */
const JAVASCRIPT = /\.(js|jsx|mjs|cjs|ts|tsx|mts|cts)$/;

export const isLanguageFile = (language: SetLanguage, path: string) =>
  (language === 'python' ? PYTHON : JAVASCRIPT).test(path);

/**
 * A test file, for both the gold files and the BM25 documents: a file under a directory named
 * `test`, `tests`, `testing`, `__tests__`, `__mocks__`, `__snapshots__`, `spec` or `specs`; a
 * Python `test_*.py`, `*_test.py` or `conftest.py`; a JS/TS `*.test.*` or `*.spec.*`.
 */
export function isTestFile(path: string): boolean {
  if (/(^|\/)(tests?|testing|__tests__|__mocks__|__snapshots__|specs?)\//.test(path)) return true;
  const name = basename(path);
  return /^test_.*\.py$|_test\.py$|^conftest\.py$/.test(name) || /\.(test|spec)\.[cm]?[jt]sx?$/.test(name);
}

/** The files a unified diff changes (its `b/` side; a deleted file's `a/` path), in order. */
export function changedFiles(patch: string): string[] {
  const out: string[] = [];
  for (const m of patch.matchAll(/^diff --git a\/(\S+) b\/(\S+)$/gm)) {
    const b = m[2]!;
    if (!out.includes(b)) out.push(b);
  }
  return out;
}

/**
 * The gold files of an instance without a `gold_files` field: the files its accepted patch
 * changes that are source files of the set's language and not tests (README, changelog,
 * `.gitignore`, lock files and other configuration the same patch touches are not gold: plain
 * BM25 does not rank them either). Files the patch creates stay gold (they cannot be ranked; an
 * instance whose only gold files are new counts as a miss for both rankings).
 */
export function goldFromPatch(patch: string, language: SetLanguage): string[] {
  return changedFiles(patch).filter((p) => isLanguageFile(language, p) && !isTestFile(p));
}

interface RawInstance {
  instance_id: string;
  repo: string;
  base_commit: string;
  problem_statement: string;
  gold_files?: string[];
  patch?: string;
}

/** A set by name (a file `<name>.jsonl` in dir) or a path; its language is that of most of its gold files or patch. */
export function loadSet(nameOrPath: string, dir: string): BenchSet {
  const file = nameOrPath.endsWith('.jsonl') ? nameOrPath : `${dir}/${nameOrPath}.jsonl`;
  const raw = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as RawInstance);
  const mentioned = raw.flatMap((r) => r.gold_files ?? changedFiles(r.patch ?? ''));
  const py = mentioned.filter((p) => PYTHON.test(p)).length;
  const js = mentioned.filter((p) => JAVASCRIPT.test(p)).length;
  const language: SetLanguage = js > py ? 'javascript' : 'python';
  return {
    name: basename(file, '.jsonl'),
    file,
    language,
    instances: raw.map((r) => ({
      instance_id: r.instance_id,
      repo: r.repo,
      base_commit: r.base_commit,
      problem_statement: r.problem_statement,
      gold: r.gold_files ?? goldFromPatch(r.patch ?? '', language),
    })),
  };
}

// Plain BM25, as the README defines its reference: k1 1.2, b 0.75, the problem statement as the
// query, one document per non-test file of the set's language, its path and content. Tokens are
// runs of letters, digits and `_`, lower-cased: no identifier splitting, no stop words, no
// weights, nothing of the locator's.
const K1 = 1.2;
const B = 0.75;
const plainTokens = (text: string) => text.toLowerCase().match(/[a-z0-9_]+/g) ?? [];

/** The documents' paths ranked by plain BM25 for the query, best first (ties by path); files scoring 0 left out. */
export function plainBm25(docs: { path: string; content: string }[], query: string): string[] {
  const tfs = docs.map((d) => {
    const tf = new Map<string, number>();
    for (const t of plainTokens(`${d.path}\n${d.content}`)) tf.set(t, (tf.get(t) ?? 0) + 1);
    return tf;
  });
  const lengths = tfs.map((tf) => [...tf.values()].reduce((a, b) => a + b, 0));
  const avg = lengths.reduce((a, b) => a + b, 0) / (docs.length || 1);
  const df = new Map<string, number>();
  for (const tf of tfs) for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  const terms = [...new Set(plainTokens(query))].filter((t) => df.has(t));
  const n = docs.length;
  const idf = new Map(terms.map((t) => [t, Math.log(1 + (n - df.get(t)! + 0.5) / (df.get(t)! + 0.5))]));
  return docs
    .map((d, i) => {
      const norm = K1 * (1 - B + (B * lengths[i]!) / (avg || 1));
      let s = 0;
      for (const t of terms) {
        const f = tfs[i]!.get(t);
        if (f) s += (idf.get(t)! * f * (K1 + 1)) / (f + norm);
      }
      return { path: d.path, s };
    })
    .filter((x) => x.s > 0)
    .sort((a, b) => b.s - a.s || a.path.localeCompare(b.path))
    .map((x) => x.path);
}

/** The 0-based rank of the best-ranked gold file, Infinity when none is ranked. */
export function goldRank(ranked: readonly string[], gold: readonly string[]): number {
  const ranks = gold.map((g) => ranked.indexOf(g)).filter((r) => r >= 0);
  return ranks.length ? Math.min(...ranks) : Number.POSITIVE_INFINITY;
}
