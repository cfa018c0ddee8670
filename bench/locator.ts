/**
 * The deterministic locator on the locator benchmark (npm run bench:locator): the 41 SWE-bench
 * Lite instances of /work/shared/bench/swe-lite-dev.jsonl (see its README). For each instance
 * the repository at base_commit is checked out from its mirror under /work/.mirror/<owner>+<name>/
 * (brought by the search tools' `fetch`; nothing fetched is committed) into a temp dir, by a
 * shared clone, so the mirror itself is never written to. Then locate() twice: cold (empty
 * cache: the index is built and saved) and warm (the cached index of that commit). Prints
 * Acc@1/5/10 (an instance counts when any gold file is in the top k) and the median time per
 * instance, cold and warm, next to the README's reference BM25 figures.
 *
 *   BENCH_DATA (default /work/shared/bench/swe-lite-dev.jsonl), BENCH_MIRRORS (/work/.mirror)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { locate } from '../src/locator/index.js';
import { loadAverage, log, median, pressure } from './stats.js';
import { mirrorGitDir as mirrorOf } from '../src/eval/checkout.js';

interface Instance {
  instance_id: string;
  repo: string;
  base_commit: string;
  problem_statement: string;
  gold_files: string[];
}

const DATA = process.env.BENCH_DATA ?? '/work/shared/bench/swe-lite-dev.jsonl';
const MIRRORS = process.env.BENCH_MIRRORS ?? '/work/.mirror';
const KS = [1, 5, 10] as const;

/** The mirror's git directory, looked up as `emend eval --mirrors` does. */
const mirrorGitDir = (repo: string) => mirrorOf(MIRRORS, repo);

async function main(): Promise<number> {
  const instances = readFileSync(DATA, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Instance);
  const repos = [...new Set(instances.map((i) => i.repo))];
  const missing = repos.filter((r) => !mirrorGitDir(r));
  if (missing.length === repos.length) {
    log(
      `NOTICE: no repository mirrors under ${MIRRORS}: the benchmark needs them fetched first (the search ` +
        `tools' fetch, github:<owner>/<name>, for ${repos.join(', ')}). Nothing measured.`,
    );
    return 0;
  }
  if (missing.length) log(`NOTICE: mirrors missing for ${missing.join(', ')}: their instances are skipped`);
  const runnable = instances.filter((i) => !missing.includes(i.repo));

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  log(
    `machine: ${cpu} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
      `Node ${process.version}, ${os.platform()} ${os.release()}; load ${loadAverage()}${pressure()}`,
  );
  log(`instances: ${runnable.length} of ${instances.length} on ${repos.length - missing.length} repositories`);

  const hits = { 1: 0, 5: 0, 10: 0 } as Record<(typeof KS)[number], number>;
  const cold: number[] = [];
  const warm: number[] = [];
  const fileCounts: number[] = [];
  for (const inst of runnable) {
    const work = mkdtempSync(join(os.tmpdir(), 'emend-bench-locator-'));
    try {
      const dir = join(work, 'repo');
      const gitDir = mirrorGitDir(inst.repo)!;
      execFileSync('git', ['clone', '-q', '--shared', '--no-checkout', gitDir, dir], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      execFileSync('git', ['-C', dir, 'checkout', '-q', '--detach', inst.base_commit], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const cacheDir = join(work, 'cache');
      const first = await locate(dir, inst.problem_statement, { top: 10, cacheDir });
      const second = await locate(dir, inst.problem_statement, { top: 10, cacheDir });
      if (first.timings.cache !== 'miss' || second.timings.cache !== 'hit')
        log(`  note: ${inst.instance_id}: cache ${first.timings.cache}/${second.timings.cache}`);
      cold.push(first.timings.total_ms);
      warm.push(second.timings.total_ms);
      fileCounts.push(first.timings.files);
      const ranked = first.files.map((f) => f.path);
      const rankOfGold = Math.min(...inst.gold_files.map((g) => ranked.indexOf(g)).filter((r) => r >= 0));
      for (const k of KS) if (rankOfGold < k) hits[k]++;
      log(
        `  ${inst.instance_id.padEnd(34)} gold ` +
          `at ${Number.isFinite(rankOfGold) ? `#${rankOfGold + 1}` : '>10'}  ` +
          `cold ${first.timings.total_ms.toFixed(0)} ms, warm ${second.timings.total_ms.toFixed(0)} ` +
          `ms, ${first.timings.files} files`,
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  const pct = (n: number) => `${((100 * n) / runnable.length).toFixed(1)}%`;
  log('');
  log(
    `locator (deterministic): Acc@1 ${pct(hits[1])}, Acc@5 ${pct(hits[5])}, Acc@10 ${pct(hits[10])}  ` +
      `(${runnable.length} instances)`,
  );
  log('reference plain BM25 (README, non-test .py files): Acc@1 26.8%, Acc@5 68.3%, Acc@10 75.6%');
  log(
    `median time per instance: cold ${median(cold).toFixed(0)} ms (index built), ` +
      `warm ${median(warm).toFixed(0)} ms (cached index); median ${median(fileCounts)} files indexed`,
  );
  log(
    'note: the ranking was developed against these 41 cases with general rules only (no rule names a ' +
      'repository, file or instance); the README warns the locator is measured on other repositories too.',
  );
  return 0;
}

process.exitCode = await main();
