/**
 * What reading a checkout through src/checkout/confined-fs.ts costs (npm run bench:confined):
 * a generated tree of BENCH_FILES files (default 3,000, ~2 KB of Python each, 3 levels of
 * directories, some symlinks inside and out), read whole with a plain readFileSync and with
 * ConfinedDir.read (O_PATH open, /proc/self/fd check, reopen, read), then listed and indexed
 * by the locator (listCandidateFiles + buildIndex, which read every file through the module).
 * Prints the median of BENCH_ROUNDS rounds (default 5) per file and per tree.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listCandidateFiles } from '../src/locator/files.js';
import { buildIndex } from '../src/locator/index.js';
import { ConfinedDir } from '../src/checkout/confined-fs.js';
import { envInt, loadAverage, log, median, pressure } from './stats.js';

const FILES = envInt('BENCH_FILES', 3_000);
const ROUNDS = envInt('BENCH_ROUNDS', 5);

function makeTree(): { root: string; paths: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'emend-bench-confined-'));
  const paths: string[] = [];
  for (let i = 0; i < FILES; i++) {
    const path = `pkg${i % 10}/mod${Math.floor(i / 10) % 10}/file${i}.py`;
    mkdirSync(join(root, path, '..'), { recursive: true });
    const body = Array.from({ length: 60 }, (_, j) => `def f${i}_${j}(x):\n    return x + ${j}  # line ${j}\n`).join(
      '',
    );
    writeFileSync(join(root, path), body.slice(0, 2048));
    paths.push(path);
  }
  symlinkSync('pkg0/mod0/file0.py', join(root, 'alias.py'));
  symlinkSync('/etc/passwd', join(root, 'passwd.txt'));
  return { root, paths };
}

function time(fn: () => void): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

async function main() {
  const { root, paths } = makeTree();
  try {
    const dir = new ConfinedDir(root, { exclude: ['.git'] });
    const plain: number[] = [];
    const confined: number[] = [];
    const locator: number[] = [];
    let bytes = 0;
    for (let r = 0; r < ROUNDS; r++) {
      plain.push(
        time(() => {
          for (const p of paths) bytes += readFileSync(join(root, p)).length;
        }),
      );
      confined.push(
        time(() => {
          for (const p of paths) {
            const got = dir.read(p, { maxBytes: 1_000_000 });
            if (got.ok) bytes += got.bytes.length;
          }
        }),
      );
      const start = performance.now();
      const listed = listCandidateFiles(root);
      await buildIndex(root);
      locator.push(performance.now() - start);
      if (listed.length !== FILES + 1)
        throw new Error(`listed ${listed.length} candidates, expected ${FILES + 1} (the files and the inside link)`);
    }
    const per = (ms: number) => `${((ms * 1000) / FILES).toFixed(1)} µs/file`;
    log(`confined-fs: ${FILES} files of ~2 KB, median of ${ROUNDS} rounds (load ${loadAverage()}${pressure()})`);
    log(`  plain readFileSync        ${median(plain).toFixed(1)} ms  (${per(median(plain))})`);
    log(
      `  ConfinedDir.read          ${median(confined).toFixed(1)} ms  (${per(median(confined))})  ` +
        `ratio ${(median(confined) / median(plain)).toFixed(2)}`,
    );
    log(
      `  locator list + index      ${median(locator).toFixed(1)} ms  (${per(median(locator))}), of which the ` +
        `confined reads above are the part this module adds`,
    );
    if (bytes === 0) throw new Error('nothing was read');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
