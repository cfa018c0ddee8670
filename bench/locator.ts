/**
 * The deterministic locator on the locator benchmark (npm run bench:locator), beside plain BM25 on
 * the same instances, on the three sets of /work/shared/bench (see its README):
 * swe-lite-dev.jsonl (41 Python), py-loc-dev3.jsonl (45 Python) and js-swe-dev.jsonl (75
 * JavaScript). Gold files: an instance's `gold_files`, else the non-test files of the set's
 * language its accepted patch changes (bench/locator-sets.ts says which files are tests and which
 * are the language's). For each instance the repository at base_commit is checked out from its
 * mirror under /work/.mirror/<owner>+<name>/ (brought by the search tools' `fetch`; nothing
 * fetched is committed) into a temp dir, by a shared clone, so the mirror itself is never
 * written to. Then locate() twice: cold (empty cache: the index is built and saved) and warm (the
 * cached index of that commit); and plain BM25 over the checkout's non-test files of the set's
 * language. Prints, per set, Acc@1/5/10 (an instance counts when any gold file is in the top k)
 * of both and the median time per instance, cold and warm; at the end one table of all sets.
 *
 *   BENCH_SETS   comma-separated set names or .jsonl paths (default: the three, one after another)
 *   BENCH_DATA   one .jsonl path instead (as before)
 *   BENCH_DIR    where the sets are (/work/shared/bench); BENCH_MIRRORS (/work/.mirror)
 *   BENCH_CACHE_DIR  a lasting index cache (repeated runs rank only; the cold time is then not cold)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { mirrorGitDir as mirrorOf } from '../src/eval/checkout.js';
import { locate } from '../src/locator/index.js';
import {
  type BenchSet,
  DEFAULT_SETS,
  goldRank,
  isLanguageFile,
  isTestFile,
  loadSet,
  plainBm25,
} from './locator-sets.js';
import { loadAverage, log, median, pressure } from './stats.js';

const DIR = process.env.BENCH_DIR ?? '/work/shared/bench';
const MIRRORS = process.env.BENCH_MIRRORS ?? '/work/.mirror';
const SETS = process.env.BENCH_DATA ? [process.env.BENCH_DATA] : (process.env.BENCH_SETS?.split(',') ?? DEFAULT_SETS);
const CACHE = process.env.BENCH_CACHE_DIR;
const KS = [1, 5, 10] as const;
/** Ranks shown per instance go this deep (Acc@k counts the top 10 only). */
const DEPTH = 50;

/** The mirror's git directory, looked up as `emend eval --mirrors` does. */
const mirrorGitDir = (repo: string) => mirrorOf(MIRRORS, repo);

interface SetResult {
  name: string;
  measured: number;
  total: number;
  locator: Record<(typeof KS)[number], number>;
  bm25: Record<(typeof KS)[number], number>;
  cold: number;
  warm: number;
}

const git = (args: string[]) =>
  execFileSync('git', args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 256 * 2 ** 20 });

/** Plain BM25's documents: the checkout's tracked non-test files of the set's language. */
function languageDocs(dir: string, set: BenchSet) {
  return git(['-C', dir, 'ls-files', '-z'])
    .split('\0')
    .filter((p) => p && isLanguageFile(set.language, p) && !isTestFile(p))
    .map((path) => {
      try {
        return { path, content: readFileSync(join(dir, path), 'utf8') };
      } catch {
        return undefined; // a submodule or a link to a directory
      }
    })
    .filter((d) => d !== undefined);
}

const at = (r: number) => (Number.isFinite(r) ? `#${r + 1}` : `>${DEPTH}`);

async function measure(set: BenchSet): Promise<SetResult | undefined> {
  const repos = [...new Set(set.instances.map((i) => i.repo))];
  const missing = repos.filter((r) => !mirrorGitDir(r));
  log('');
  log(`== ${set.name} (${set.file}; ${set.language}) ==`);
  if (missing.length === repos.length) {
    log(
      `NOTICE: no repository mirrors under ${MIRRORS}: the set needs them fetched first (the search ` +
        `tools' fetch, github:<owner>/<name>, for ${repos.join(', ')}). Nothing measured.`,
    );
    return undefined;
  }
  if (missing.length) log(`NOTICE: mirrors missing for ${missing.join(', ')}: their instances are skipped`);
  const runnable = set.instances.filter((i) => !missing.includes(i.repo));
  log(`instances: ${runnable.length} of ${set.instances.length} on ${repos.length - missing.length} repositories`);

  const locatorHits = { 1: 0, 5: 0, 10: 0 };
  const bm25Hits = { 1: 0, 5: 0, 10: 0 };
  const cold: number[] = [];
  const warm: number[] = [];
  for (const inst of runnable) {
    const work = mkdtempSync(join(os.tmpdir(), 'emend-bench-locator-'));
    try {
      const dir = join(work, 'repo');
      git(['clone', '-q', '--shared', '--no-checkout', mirrorGitDir(inst.repo)!, dir]);
      git(['-C', dir, 'checkout', '-q', '--detach', inst.base_commit]);
      const cacheDir = CACHE ?? join(work, 'cache');
      const first = await locate(dir, inst.problem_statement, { top: DEPTH, cacheDir });
      const second = await locate(dir, inst.problem_statement, { top: DEPTH, cacheDir });
      if (!CACHE && (first.timings.cache !== 'miss' || second.timings.cache !== 'hit'))
        log(`  note: ${inst.instance_id}: cache ${first.timings.cache}/${second.timings.cache}`);
      cold.push(first.timings.total_ms);
      warm.push(second.timings.total_ms);
      const docs = languageDocs(dir, set);
      const rank = goldRank(
        first.files.map((f) => f.path),
        inst.gold,
      );
      const bm25Rank = goldRank(plainBm25(docs, inst.problem_statement).slice(0, DEPTH), inst.gold);
      for (const k of KS) {
        if (rank < k) locatorHits[k]++;
        if (bm25Rank < k) bm25Hits[k]++;
      }
      log(
        `  ${inst.instance_id.padEnd(40)} gold at ${at(rank).padEnd(4)} (BM25 ${at(bm25Rank).padEnd(4)}) ` +
          `cold ${first.timings.total_ms.toFixed(0)} ms, warm ${second.timings.total_ms.toFixed(0)} ms, ` +
          `${first.timings.files} files, ${docs.length} ${set.language} documents`,
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  const pct = (n: number) => `${((100 * n) / runnable.length).toFixed(1)}%`;
  const acc = (h: Record<number, number>) => `Acc@1 ${pct(h[1]!)}, Acc@5 ${pct(h[5]!)}, Acc@10 ${pct(h[10]!)}`;
  log(`${set.name}: locator (deterministic): ${acc(locatorHits)}  (${runnable.length} instances)`);
  log(`${set.name}: plain BM25 (same instances, non-test ${set.language} files): ${acc(bm25Hits)}`);
  log(
    `${set.name}: median time per instance: cold ${median(cold).toFixed(0)} ms (index built), ` +
      `warm ${median(warm).toFixed(0)} ms (cached index)${CACHE ? ' [BENCH_CACHE_DIR: both from a lasting cache]' : ''}`,
  );
  return {
    name: set.name,
    measured: runnable.length,
    total: set.instances.length,
    locator: locatorHits,
    bm25: bm25Hits,
    cold: median(cold),
    warm: median(warm),
  };
}

async function main(): Promise<number> {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  log(
    `machine: ${cpu} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
      `Node ${process.version}, ${os.platform()} ${os.release()}; load ${loadAverage()}${pressure()}`,
  );
  const results: SetResult[] = [];
  for (const name of SETS) {
    const r = await measure(loadSet(name, DIR));
    if (r) results.push(r);
  }
  if (results.length === 0) return 0;
  const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)}`.padStart(5);
  log('');
  log('set                 n    locator Acc@1/5/10 %    plain BM25 Acc@1/5/10 %   median cold / warm ms');
  for (const r of results)
    log(
      `${r.name.padEnd(16)} ${String(r.measured).padStart(4)}    ` +
        `${KS.map((k) => pct(r.locator[k], r.measured)).join(' ')}       ` +
        `${KS.map((k) => pct(r.bm25[k], r.measured)).join(' ')}         ` +
        `${r.cold.toFixed(0)} / ${r.warm.toFixed(0)}`,
    );
  log(`load at the end: ${loadAverage()}${pressure()}`);
  log(
    'note: swe-lite-dev and js-swe-dev are development sets; py-loc-dev3 is a check set. Every ranking rule is ' +
      'general (none names a repository, file or instance): the locator is measured on other repositories too.',
  );
  return 0;
}

process.exitCode = await main();
