/**
 * Checkout from a warm mirror (npm run bench:checkout): a repository of 10,000 files served over
 * git smart HTTP (test/support/git-http.ts), one cold prepareCheckout that makes the mirror,
 * then warm prepareCheckout calls for new task ids (mirror fetch + local clone + checkout),
 * each followed by dispose; the fetch part alone; disk usage of a checkout. Prints figures;
 * asserts nothing about time.
 *
 * Two passes: the data dir on tmpfs (/dev/shm, when there is one: git and the code without the
 * disk), then on the temp dir's filesystem (the disk, where a data dir lives).
 *
 *   BENCH_RUNS (default 10) warm calls per pass, fewer once a pass has spent BENCH_BUDGET_S (50)
 *   on them (at least 3); BENCH_DIRS × BENCH_FILES (100 × 100) files; BENCH_DATA_PARENT (the
 *   temp dir) where the disk pass makes its data dir.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../src/logger.js';
import { prepareCheckout } from '../src/checkout/checkout.js';
import type { CheckoutDeps } from '../src/checkout/checkout-deps.js';
import { mirrorPath, withMirror } from '../src/checkout/mirrors.js';
import { type GitHttpServer, startGitHttp } from '../test/support/git-http.js';
import { envInt, loadAverage, log, median, percentile, pressure } from './stats.js';

const RUNS = envInt('BENCH_RUNS', 10);
const DIRS = envInt('BENCH_DIRS', 100);
const FILES = envInt('BENCH_FILES', 100);
/**
 * Warm calls stop once a pass has spent this long on them (but not before MIN_RUNS): a slow disk must not make the run
 * endless.
 */
const BUDGET_MS = envInt('BENCH_BUDGET_S', 50) * 1000;
const MIN_RUNS = 3;

const ms = (x: number) => `${x.toFixed(0)} ms`;
const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
const stats = (xs: number[]) =>
  `median ${ms(median(xs))}, p90 ${ms(percentile(xs, 90))}, min ${ms(Math.min(...xs))}, max ${ms(Math.max(...xs))}`;

/** A small deterministic PRNG (mulberry32), so every run commits the same tree. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'value',
  'count',
  'index',
  'result',
  'items',
  'config',
  'handler',
  'request',
  'buffer',
  'limit',
  'offset',
  'cursor',
  'status',
  'retry',
  'parse',
  'format',
];

/** DIRS × FILES source-like files of 100 B to about 4 KiB, every one different. */
function generateFiles(): { files: Record<string, string>; bytes: number } {
  const random = prng(42);
  const pick = () => WORDS[Math.floor(random() * WORDS.length)]!;
  const files: Record<string, string> = {};
  let bytes = 0;
  for (let d = 0; d < DIRS; d++) {
    for (let f = 0; f < FILES; f++) {
      const path = `pkg${String(d).padStart(3, '0')}/mod${String(f).padStart(3, '0')}.ts`;
      const lines = [`// ${path}`, `export const id = ${d * FILES + f};`];
      const n = 2 + Math.floor(random() ** 2 * 60);
      for (let i = 0; i < n; i++) {
        lines.push(
          `export function ${pick()}${i}(${pick()}: number, ${pick()} = ${Math.floor(random() * 1000)}) { ` +
            `return ${pick()} * ${i + 1}; }`,
        );
      }
      const text = `${lines.join('\n')}\n`;
      files[path] = text;
      bytes += Buffer.byteLength(text);
    }
  }
  return { files, bytes };
}

interface Usage {
  files: number;
  apparent: number;
  /** st_blocks × 512 of files with one link only: what this directory costs on its own. */
  ownDisk: number;
  /** Files with more than one link (shared with the mirror), and their blocks. */
  linkedFiles: number;
  linkedDisk: number;
}

function usage(dir: string, skip = new Set<string>()): Usage {
  const u: Usage = { files: 0, apparent: 0, ownDisk: 0, linkedFiles: 0, linkedDisk: 0 };
  const walk = (path: string) => {
    const st = lstatSync(path);
    if (st.isDirectory()) {
      u.ownDisk += st.blocks * 512;
      for (const entry of readdirSync(path)) if (!skip.has(join(path, entry))) walk(join(path, entry));
      return;
    }
    u.files++;
    u.apparent += st.size;
    if (st.nlink > 1) {
      u.linkedFiles++;
      u.linkedDisk += st.blocks * 512;
    } else {
      u.ownDisk += st.blocks * 512;
    }
  };
  walk(dir);
  return u;
}

/** The 'mirror created' / 'mirror fetched' log line of withMirror carries the fetch's own time (inside the lock). */
function capturingLogger() {
  const fetches: number[] = [];
  const ready: number[] = [];
  const sink = {
    write(line: string) {
      const entry = JSON.parse(line) as { msg?: string; ms?: number };
      if (entry.msg === 'mirror created' || entry.msg === 'mirror fetched') fetches.push(entry.ms ?? NaN);
      if (entry.msg === 'checkout ready') ready.push(entry.ms ?? NaN);
      return true;
    },
  };
  return { log: createLogger('info', sink as unknown as NodeJS.WritableStream), fetches, ready };
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU time of this process's finished children (git and its helpers), ms: cutime and cstime of /proc/self/stat. */
function childrenCpu(): { user: number; system: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 of the file; the slice starts at field 3.
  return { user: (Number(fields[13]) * 1000) / CLOCK_TICKS, system: (Number(fields[14]) * 1000) / CLOCK_TICKS };
}

/** The filesystem's type as df names it (stat -f says ext2/ext3 for ext4). */
function fsTypeOf(dir: string): string {
  try {
    return execFileSync('df', ['--output=fstype', dir], { encoding: 'utf8' }).trim().split('\n').at(-1)!.trim();
  } catch {
    return execFileSync('stat', ['-f', '-c', '%T', dir], { encoding: 'utf8' }).trim();
  }
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t0 };
}

/** Small files written and removed with Node's sync calls: how fast this filesystem makes files, for scale. */
function fileProbe(dir: string, n = 1000): { write: number; remove: number } {
  const probe = mkdtempSync(join(dir, 'probe-'));
  const t0 = performance.now();
  for (let i = 0; i < n; i++) writeFileSync(join(probe, `f${i}`), `probe ${i}\n`);
  const write = performance.now() - t0;
  const t1 = performance.now();
  rmSync(probe, { recursive: true, force: true });
  return { write, remove: performance.now() - t1 };
}

interface Pass {
  label: string;
  fsType: string;
  cold: number;
  warm: number[];
  fetches: number[];
}

/** One data dir: cold prepareCheckout, warm ones (within the time budget), withMirror alone, disk usage. */
async function measureOn(
  label: string,
  parent: string,
  repoUrl: string,
  count: number,
  budgetMs: number,
): Promise<Pass> {
  const dataDir = mkdtempSync(join(parent, 'emend-bench-checkout-'));
  try {
    const fsType = fsTypeOf(dataDir);
    const probe = fileProbe(dataDir);
    log('');
    log(`== data dir on ${label}: ${dataDir} (${fsType}) ==`);
    log(
      `filesystem probe: 1000 small files written in ${ms(probe.write)} (${(probe.write / 1000).toFixed(2)} ms ` +
        `a file), removed in ${ms(probe.remove)}`,
    );

    const capture = capturingLogger();
    const deps: CheckoutDeps = { dataDir, log: capture.log };
    const request = (taskId: string) => ({ taskId, repoUrl, baseBranch: 'main' });

    // Cold: the mirror is made (a full fetch over HTTP), then the checkout.
    const cold = await timed(() => prepareCheckout(deps, request('cold')));
    const coldFetch = capture.fetches.at(-1)!;
    const coldDispose = await timed(() => cold.value.dispose());
    log(
      `cold prepareCheckout (makes the mirror): ${ms(cold.ms)}, of which the mirror's first ` +
        `fetch ${ms(coldFetch)} (git init --bare, fetch of everything, rename); dispose ${ms(coldDispose.ms)}`,
    );

    // Warm: the mirror exists; each call fetches into it (nothing new), clones it locally and checks out.
    const totals: number[] = [];
    const fetches: number[] = [];
    const disposes: number[] = [];
    const gitUser: number[] = [];
    const gitSystem: number[] = [];
    let disk: { root: string; tree: Usage; git: Usage; index: number; mirror: Usage } | undefined;
    const warmStarted = performance.now();
    let stopped = false;
    for (let i = 1; i <= RUNS; i++) {
      if (i > MIN_RUNS && performance.now() - warmStarted > budgetMs) {
        stopped = true;
        break;
      }
      const before = capture.fetches.length;
      const cpuBefore = childrenCpu();
      const { value: ws, ms: total } = await timed(() => prepareCheckout(deps, request(`warm-${i}`)));
      const cpuAfter = childrenCpu();
      gitUser.push(cpuAfter.user - cpuBefore.user);
      gitSystem.push(cpuAfter.system - cpuBefore.system);
      if (capture.fetches.length !== before + 1) throw new Error('expected one mirror fetch per prepareCheckout');
      totals.push(total);
      fetches.push(capture.fetches.at(-1)!);
      if (!disk) {
        const tree = usage(ws.dir, new Set([join(ws.dir, '.git')]));
        if (tree.files !== count) throw new Error(`the checkout holds ${tree.files} files, not ${count}`);
        disk = {
          root: ws.root,
          tree,
          git: usage(ws.gitDir),
          index: lstatSync(join(ws.gitDir, 'index')).size,
          mirror: usage(mirrorPath(dataDir, repoUrl)),
        };
      }
      disposes.push((await timed(() => ws.dispose())).ms);
    }
    const rest = totals.map((t, i) => t - fetches[i]!);
    const note = stopped
      ? ` (stopped after ${totals.length} of ${RUNS}: the ${budgetMs / 1000} s budget of this pass was spent)`
      : '';
    log(`warm prepareCheckout, ${totals.length} calls${note}, ${count} files checked out each time:`);
    log(`  total:                                             ${stats(totals)}`);
    log(`  mirror fetch inside it (its log line; in the lock): ${stats(fetches)}`);
    log(`  the rest (lock, local clone, checkout, checks):    ${stats(rest)}`);
    log(`  dispose (removing the task's directory):           ${stats(disposes)}`);
    log(
      `  CPU of the git processes per call (user / system): median ${ms(median(gitUser))} / ${ms(median(gitSystem))}`,
    );

    // The fetch alone: withMirror with nothing to do inside it.
    const alone: number[] = [];
    const inLock: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      alone.push((await timed(() => withMirror(deps, { repoUrl }, async () => undefined))).ms);
      inLock.push(capture.fetches.at(-1)!);
    }
    log(`withMirror alone, ${RUNS} calls (lock, then a fetch that brings nothing new):`);
    log(`  total:                                             ${stats(alone)}`);
    log(`  the fetch inside it (its log line):                ${stats(inLock)}`);

    const { tree, git, index, mirror } = disk!;
    log(`disk usage of one checkout (${disk!.root}, before its dispose):`);
    log(
      `  files (tree/): ${tree.files} files, ${mib(tree.apparent)} of content, ${mib(tree.ownDisk)} allocated ` +
        `(directories included; a small file takes a whole block)`,
    );
    log(
      `  git dir (git/): ${mib(git.ownDisk)} of its own (the index ${mib(index)}, refs, config); ` +
        `${git.linkedFiles} object files (${mib(git.linkedDisk)}) hard-linked from the mirror, not copied`,
    );
    log(
      `  the task's own cost: ${mib(tree.ownDisk + git.ownDisk)}; the mirror, shared by all ` +
        `tasks: ${mib(mirror.ownDisk + mirror.linkedDisk)} in ${mirror.files} files`,
    );
    log(`  load average after this pass: ${loadAverage()}${pressure()}`);
    return { label, fsType, cold: cold.ms, warm: totals, fetches };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  const started = Date.now();
  const cpus = os.cpus();
  const diskParent = process.env.BENCH_DATA_PARENT ?? os.tmpdir();
  const memoryParent = existsSync('/dev/shm') ? '/dev/shm' : undefined;
  let server: GitHttpServer | undefined;
  try {
    log(`emend checkout benchmark, ${new Date().toISOString()}`);
    log(
      `machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} ` +
        `cores, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, ${os.type()} ${os.release()}, ` +
        `Node ${process.version}`,
    );
    log(execFileSync('git', ['--version'], { encoding: 'utf8' }).trim());
    log(
      `load average (1, 5, 15 min) at start: ${loadAverage()}${pressure()}; other work on the machine shares ` +
        `its ${cpus.length} cores and its disk`,
    );

    // The served side (bare repository, the helper's scratch clone) goes on tmpfs when there is
    // one: making 10,000 files there is setup, not what is measured.
    const tmpdir = process.env.TMPDIR;
    if (memoryParent) process.env.TMPDIR = memoryParent;
    try {
      server = await startGitHttp();
    } finally {
      if (tmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdir;
    }
    const { files, bytes } = generateFiles();
    const count = Object.keys(files).length;
    const made = await timed(async () => server!.createRepo('bench', 'big', { files }));
    const repoUrl = server.repoUrl('bench', 'big');
    const bare = usage(server.bareDir('bench', 'big'));
    log(
      `repository: ${count} files in ${DIRS} directories (${mib(bytes)} of text, 100 B to 4 KiB a file, all ` +
        `different), one commit on main; ` +
        `bare repository ${mib(bare.ownDisk + bare.linkedDisk)} (${server.root}); made in ${ms(made.ms)}`,
    );
    log(
      `served by test/support/git-http.ts (git http-backend as CGI) at ${server.baseUrl}: every fetch goes ` +
        `over HTTP, smart protocol`,
    );
    log(
      `method: per data dir, 1 cold prepareCheckout (no mirror yet), then up to ${RUNS} warm ones for new ` +
        `task ids (at least ${MIN_RUNS}, ` +
        (`fewer if the pass's time budget runs out), one at a time, each disposed before the next; then ${RUNS} ` +
          `withMirror calls `) +
        (`with an empty callback (the fetch part alone). The remote does not change, so a warm fetch brings ` +
          `nothing new. `) +
        (`Times are wall clock around each call; the fetch part is the ms of withMirror's own log line ('mirror ` +
          `fetched')`),
    );

    const passes: Pass[] = [];
    if (memoryParent)
      passes.push(
        await measureOn(
          'tmpfs (memory): what git and the code cost without the disk',
          memoryParent,
          repoUrl,
          count,
          BUDGET_MS,
        ),
      );
    passes.push(
      await measureOn(
        `the temp dir's filesystem (the disk, as a data dir would be)`,
        diskParent,
        repoUrl,
        count,
        BUDGET_MS,
      ),
    );

    log('');
    log('summary:');
    for (const p of passes) {
      log(
        `  ${p.fsType.padEnd(9)} warm checkout of ${count} files: median ${ms(median(p.warm))}, ` +
          `p90 ${ms(percentile(p.warm, 90))} (n=${p.warm.length}); ` +
          (`fetch part median ${ms(median(p.fetches))}, p90 ${ms(percentile(p.fetches, 90))}; cold, mirror ` +
            `made: ${ms(p.cold)}`),
      );
    }
    log(
      `total time ${((Date.now() - started) / 1000).toFixed(0)} s; load average (1, 5, 15 min) at the ` +
        `end: ${loadAverage()}${pressure()}`,
    );
  } finally {
    await server?.close();
  }
}

await main();
