/**
 * Sandbox start overhead per command (npm run bench:sandbox): a trivial command run again and
 * again through the real sandbox (bubblewrap, default limits and cgroups from a default Config)
 * against the same command spawned directly on the host, with the layers in between measured
 * on their own. Prints figures; asserts nothing about time.
 *
 *   BENCH_RUNS (default 100) measured runs per command and variant, after BENCH_WARMUP (5).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { loadConfig } from '../src/config/config.js';
import { GROUP, PASSWD, bwrapArgs } from '../src/sandbox/bwrap-args.js';
import { findExecutable, hostLayout } from '../src/sandbox/bwrap.js';
import { CommandCgroup, detectCgroups } from '../src/sandbox/cgroups.js';
import { prlimitArgs } from '../src/sandbox/limits.js';
import { createSandbox } from '../src/sandbox/sandbox.js';
import type { Sandbox } from '../src/sandbox/types.js';
import { envInt, loadAverage, log, median, percentile, pressure } from './stats.js';

const RUNS = envInt('BENCH_RUNS', 100);
const WARMUP = envInt('BENCH_WARMUP', 5);

const ms = (x: number) => x.toFixed(1).padStart(6);
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(1)} ms`;

interface Command {
  label: string;
  argv: string[];
  stdout: string;
}
const COMMANDS: Command[] = [
  { label: '/usr/bin/true', argv: ['/usr/bin/true'], stdout: '' },
  { label: "sh -c 'echo hi'", argv: ['sh', '-c', 'echo hi'], stdout: 'hi\n' },
];

/** One way of running a command; resolves with its exit code and stdout. */
interface Variant {
  name: string;
  what: string;
  run(argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** spawn, capture both streams, wait for 'close' (the pipes drained, as launch() does). */
function collect(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Writes /etc/passwd and /etc/group of the sandbox to fds 3 and 4, as launch() does for --ro-bind-data. */
function feedData(child: ChildProcess) {
  [PASSWD, GROUP].forEach((data, i) => {
    const fd = child.stdio[3 + i] as Writable;
    fd.on('error', () => {});
    fd.end(data);
  });
}

function describeMachine(sandbox: Sandbox) {
  const cpus = os.cpus();
  const gb = (os.totalmem() / 1024 ** 3).toFixed(1);
  const report = sandbox.report();
  log(`emend sandbox benchmark, ${new Date().toISOString()}`);
  log(
    `machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${gb} GiB ` +
      `RAM, ${os.type()} ${os.release()}, Node ${process.version}`,
  );
  log(
    `sandbox: ${report.kind} ${report.version ?? ''}, cgroups ${report.cgroups} (memory ` +
      `limit ${report.memoryLimit}, process limit ${report.processLimit})` +
      `${report.notes ? `; notes: ${report.notes.join('; ')}` : ''}; running as uid ${process.getuid?.() ?? '?'}`,
  );
  const l = report.limits;
  log(
    `limits (defaults of loadConfig): timeout ${l.timeoutMs / 1000} s, CPU ${l.cpuSeconds} s, ` +
      `memory ${l.memoryBytes / 1024 ** 2} MiB, ` +
      (`processes ${l.maxProcesses}, file size ${l.fileSizeBytes / 1024 ** 2} MiB, open files ${l.openFiles}, ` +
        `output ${l.outputBytes / 1024} KiB`),
  );
  log(
    `load average (1, 5, 15 min) at start: ${loadAverage()}${pressure()}; other work on the machine shares ` +
      `its ${cpus.length} cores`,
  );
  log(
    `method: per command, ${WARMUP} untimed rounds, then ${RUNS} rounds; each round runs the command once in ` +
      `every variant, ` +
      (`in an order rotated from round to round, one process at a time; wall time from just before spawn (or ` +
        `sandbox.run) `) +
      `until the process has exited and its stdout/stderr pipes are closed`,
  );
}

/**
 * Where the cgroup step goes: the cgroups' bookkeeping with no process in them (mkdir, limits
 * written, rmdir), and a bash that writes its pid into the command's cgroup.procs files (as
 * launch()'s bash does) against one that only exits.
 */
async function cgroupCosts(limits: { memoryBytes: number; maxProcesses: number }, summary: string[]) {
  const support = detectCgroups();
  if (support.version === 'none') {
    log('\ncgroups: none on this host; nothing to break down');
    return;
  }
  const bash = findExecutable('bash')!;
  const runBash = (script: string, args: string[]) =>
    collect(
      spawn(bash, ['-c', script, 'bench', ...args], {
        env: { PATH: '/usr/bin:/bin' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
  const times = { bookkeeping: [] as number[], exit: [] as number[], join: [] as number[] };
  for (let round = 0; round < WARMUP + RUNS; round++) {
    let t0 = performance.now();
    CommandCgroup.create(support, limits)!.remove();
    const bookkeeping = performance.now() - t0;

    t0 = performance.now();
    await runBash('exit 0', []);
    const exit = performance.now() - t0;

    t0 = performance.now();
    const group = CommandCgroup.create(support, limits)!;
    const r = await runBash('for f; do echo $$ > "$f" || exit 1; done', group.procsFiles);
    await group.drain();
    group.remove();
    const join = performance.now() - t0;
    if (r.code !== 0) throw new Error(`bash could not join the cgroups: ${r.stderr}`);
    if (round >= WARMUP) {
      times.bookkeeping.push(bookkeeping);
      times.exit.push(exit);
      times.join.push(join);
    }
  }
  const controllers = (['memory', 'pids'] as const)
    .filter((c) => support[c])
    .map((c) => `${c} v${support[c]!.version}`);
  log('');
  log(
    `cgroups apart (${controllers.join(', ')}; ${RUNS} runs each, interleaved); load average after: ${loadAverage()}`,
  );
  log(`  step                                                       median ms  p90 ms`);
  const row = (label: string, xs: number[]) =>
    log(`  ${label.padEnd(58)} ${ms(median(xs))}    ${ms(percentile(xs, 90))}`);
  row('create + remove the cgroups, no process in them', times.bookkeeping);
  row("spawn bash -c 'exit 0'", times.exit);
  row('create, spawn bash that joins them (cgroup.procs), remove', times.join);
  const joinCost = median(times.join) - median(times.exit) - median(times.bookkeeping);
  log(
    `  → joining ${controllers.length} cgroup${controllers.length > 1 ? 's' : ''} costs the process ` +
      `about ${joinCost.toFixed(1)} ms (median differences)`,
  );
  summary.push(
    `cgroups: bookkeeping ${median(times.bookkeeping).toFixed(1)} ms, a process joining ` +
      `them ${joinCost.toFixed(1)} ms (medians)`,
  );
}

async function main() {
  const dataDir = mkdtempSync(join(os.tmpdir(), 'emend-bench-sandbox-data-'));
  const workdir = mkdtempSync(join(os.tmpdir(), 'emend-bench-sandbox-work-'));
  try {
    const config = loadConfig({ EMEND_DATA_DIR: dataDir });
    const sandbox = await createSandbox(config.sandbox, { protectedPaths: [dataDir] });
    const noCgroups = await createSandbox(config.sandbox, { protectedPaths: [dataDir], cgroups: false });
    describeMachine(sandbox);
    if (sandbox.report().kind !== 'bubblewrap')
      throw new Error(`needs bubblewrap; the sandbox is ${sandbox.report().kind}: ${sandbox.report().problem ?? ''}`);

    const bwrap = findExecutable('bwrap')!;
    const prlimit = findExecutable('prlimit')!;
    const layout = hostLayout();
    const limits = config.sandbox.limits;
    // The argv sandbox.run builds for bwrap (src/sandbox/sandbox.ts), without prlimit, bash or cgroups.
    const bwrapArgv = (command: string[]) =>
      bwrapArgs(
        {
          workdir,
          command,
          network: false,
          toolRoots: config.sandbox.toolRoots,
          tmpBytes: limits.memoryBytes,
          passwdFd: 3,
          groupFd: 4,
          hostsFd: 5,
        },
        layout,
      );
    const launchEnv = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };
    const bwrapSpawn = (file: string, args: string[]) => {
      const child = spawn(file, args, {
        cwd: '/',
        env: launchEnv,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
      });
      feedData(child);
      return collect(child);
    };
    const viaSandbox = (s: Sandbox) => async (argv: string[]) => {
      const r = await s.run({ command: argv, workdir });
      return { code: r.exitCode, stdout: r.stdout, stderr: r.stderr };
    };

    const variants: Variant[] = [
      {
        name: 'host',
        what: 'child_process.spawn of the command itself, unsandboxed (cwd the checkout, env PATH HOME LANG)',
        run: (argv) =>
          collect(
            spawn(argv[0]!, argv.slice(1), {
              cwd: workdir,
              env: { PATH: '/usr/bin:/bin', HOME: workdir, LANG: 'C.UTF-8' },
              stdio: ['ignore', 'pipe', 'pipe'],
            }),
          ),
      },
      {
        name: 'bwrap',
        what:
          "spawn of bwrap with sandbox.run's bwrap argv (same binds, namespaces, passwd/group on fds 3 and 4), " +
          'no prlimit, no bash, no cgroups',
        run: (argv) => bwrapSpawn(bwrap, bwrapArgv(argv)),
      },
      {
        name: 'prlimit+bwrap',
        what: 'the same, started through prlimit with the default rlimits (CPU, file size, open files, core)',
        run: (argv) => {
          const [file, ...args] = prlimitArgs(prlimit, limits);
          return bwrapSpawn(file!, [...args, bwrap, ...bwrapArgv(argv)]);
        },
      },
      {
        name: 'run, no cgroups',
        what:
          "sandbox.run() of a sandbox made with { cgroups: false }: adds launch()'s bash (closes inherited fds, " +
          'then execs prlimit), checks, output tails',
        run: viaSandbox(noCgroups),
      },
      {
        name: 'sandbox.run',
        what:
          `sandbox.run() as the service runs it: adds a cgroup per command (${sandbox.report().cgroups}: mkdir, ` +
          `limits written, bash joins it, drained and removed after)`,
        run: viaSandbox(sandbox),
      },
    ];
    log('variants:');
    for (const v of variants) log(`  ${v.name.padEnd(16)} ${v.what}`);

    const started = Date.now();
    const summary: string[] = [];
    for (const command of COMMANDS) {
      const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
      for (let round = 0; round < WARMUP + RUNS; round++) {
        for (let k = 0; k < variants.length; k++) {
          const v = variants[(round + k) % variants.length]!;
          const t0 = performance.now();
          const r = await v.run(command.argv);
          const elapsed = performance.now() - t0;
          // A run that did not do the work measures nothing: stop rather than print a figure for it.
          if (r.code !== 0 || r.stdout !== command.stdout) {
            throw new Error(
              `${v.name} ${command.label}: exit ${r.code}, stdout ${JSON.stringify(r.stdout)}, ` +
                `stderr ${JSON.stringify(r.stderr.slice(-500))}`,
            );
          }
          if (round >= WARMUP) times.get(v.name)!.push(elapsed);
        }
      }
      const host = times.get('host')!;
      log('');
      log(
        `${command.label}: ${RUNS} runs per variant (all exited 0 with the expected output); load average ` +
          `after: ${loadAverage()}`,
      );
      log(
        `  variant            median ms  p90 ms  min ms  max ms   overhead vs host (median diff, ratio)   step ` +
          `from the row above (median diff)`,
      );
      let previous: number[] | undefined;
      for (const v of variants) {
        const xs = times.get(v.name)!;
        const over =
          v.name === 'host' ? '' : `${signed(median(xs) - median(host))}, ×${(median(xs) / median(host)).toFixed(1)}`;
        const step = previous ? signed(median(xs) - median(previous)) : '';
        log(
          `  ${v.name.padEnd(16)}  ${ms(median(xs))}    ${ms(percentile(xs, 90))}  ${ms(Math.min(...xs))}  ${ms(Math.max(...xs))}   ${over.padEnd(38)}  ${step}`.trimEnd(),
        );
        previous = xs;
      }
      const full = times.get('sandbox.run')!;
      summary.push(
        `${command.label}: host median ${median(host).toFixed(1)} ms (p90 ${percentile(host, 90).toFixed(1)}), ` +
          `sandboxed median ${median(full).toFixed(1)} ms ` +
          (`(p90 ${percentile(full, 90).toFixed(1)}): overhead ${(median(full) - median(host)).toFixed(1)} ms ` +
            `per command, ×${(median(full) / median(host)).toFixed(1)}`),
      );
    }
    await cgroupCosts(config.sandbox.limits, summary);

    log('');
    for (const line of summary) log(line);
    log(
      `total time ${((Date.now() - started) / 1000).toFixed(0)} s; load average (1, 5, 15 min) at the ` +
        `end: ${loadAverage()}${pressure()}`,
    );
  } finally {
    rmSync(workdir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
