/**
 * Validator wall time on fixture repositories (npm run bench:validator): the whole of
 * validate() — temp copies, test detection, the probe, baseline and change runs in the real
 * bubblewrap sandbox, parsing and comparison — against the same test command run once
 * directly on the host, for scale. Prints figures; asserts nothing.
 *
 * BENCH_RUNS (default 7) measured runs per fixture after one warm-up run.
 *
 * Then the cost of a hang: the QuixBugs-style fixture whose change puts sqrt into an infinite
 * loop, validated with a per-test timeout of BENCH_HANG_TIMEOUT_S (default 5) seconds, where
 * the whole run's limit is the sandbox's (600 s): how long the verdict takes past the timeout.
 *
 * Then kept baselines and both trees at once (docs/validator.md): on one base, validate() when the
 * baseline runs in turn with the change (as before issue 49), at once with it, reused from the
 * store, and reused from a retry's previous output; interleaved, RUNS each. BENCH_ONLY=reuse runs
 * only this part.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import os from 'node:os';
import type { Sandbox } from '../src/sandbox/types.js';
import type { ValidatorOutput } from '../src/step-contract/fix.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { openPglite, runMigrations } from '../src/db/client.js';
import { DbBaselineStore } from '../src/validator/baseline-store.js';
import { TestRunSlots } from '../src/validator/run-slots.js';
import { validate } from '../src/validator/validate.js';
import {
  type FixtureRepo,
  fixtureSandbox,
  jsFailingTest,
  pythonPytest,
  quixBugsHang,
  removeFixtureRepos,
} from '../test/support/fixture-repos.js';
import { log, median } from './stats.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const HANG_TIMEOUT_S = Number(process.env.BENCH_HANG_TIMEOUT_S ?? 5);

const ms = (x: number) => `${x.toFixed(0)} ms`;

function describeMachine(sandbox: Sandbox) {
  const cpus = os.cpus();
  const gb = (os.totalmem() / 1024 ** 3).toFixed(1);
  const report = sandbox.report();
  log(`emend validator benchmark, ${new Date().toISOString()}`);
  log(
    `machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${gb} GiB ` +
      `RAM, ${os.type()} ${os.release()}, Node ${process.version}`,
  );
  log(
    `sandbox: ${report.kind} ${report.version ?? ''}, cgroups ${report.cgroups} (memory ` +
      `limit ${report.memoryLimit}, process limit ${report.processLimit})`,
  );
  log(
    `python: ${
      spawnSync('/usr/bin/python3', ['-m', 'pytest', '--version'], { encoding: 'utf8' }).stdout.trim() ||
      'pytest not found'
    }`,
  );
  log(
    `load average (1, 5, 15 min) at start: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')}; other work on the machine shares its ${cpus.length} cores`,
  );
  log(
    `method: ${RUNS} runs per fixture after 1 warm-up; each run validates the fixture's working-tree change ` +
      `against HEAD (two test runs in the sandbox, in sequence); medians`,
  );
}

/** The detected command once on the host, unsandboxed, in the checkout itself: the floor. */
function hostRun(repo: FixtureRepo, command: string): number {
  const started = performance.now();
  spawnSync('sh', ['-c', `${command} >/dev/null 2>&1`], {
    cwd: repo.dir,
    env: { PATH: '/usr/bin:/bin', HOME: os.tmpdir(), CI: 'true' },
  });
  return performance.now() - started;
}

async function measure(sandbox: Sandbox, name: string, make: () => FixtureRepo) {
  const repo = make();
  const totals: number[] = [];
  const baselines: number[] = [];
  const hosts: number[] = [];
  let last: ValidatorOutput | undefined;
  for (let i = 0; i <= RUNS; i++) {
    const started = performance.now();
    last = await validate(sandbox, { dir: repo.dir, base: repo.base });
    const total = performance.now() - started;
    const host = hostRun(repo, last.command!);
    if (i === 0) continue; // warm-up: page cache, node's compile cache
    totals.push(total);
    baselines.push(last.baseline!.duration_ms);
    hosts.push(host);
  }
  log('');
  log(`${name}: ${last!.command}`);
  log(
    `  verdict: passed=${last!.passed}, new failures ${JSON.stringify(last!.new_failures)}, ` +
      `tests ${JSON.stringify(last!.tests)}`,
  );
  log(
    `  validate() wall time: median ${ms(median(totals))} (min ${ms(Math.min(...totals))}, ` +
      `max ${ms(Math.max(...totals))}); runs: ${totals.map((t) => t.toFixed(0)).join(' / ')}`,
  );
  log(`  one sandboxed test run (the baseline's): median ${ms(median(baselines))}`);
  log(`  the same command on the host, unsandboxed, once: median ${ms(median(hosts))}`);
  log(`  overhead of validate() over two host runs: median ${ms(median(totals) - 2 * median(hosts))}`);
}

/**
 * A hung pytest test: the verdict's wall time against the per-test timeout (runs: RUNS, at most 3; no warm-up needed at
 * this scale).
 */
async function measureHang(sandbox: Sandbox) {
  const runs = Math.max(1, Math.min(RUNS, 3));
  const repo = quixBugsHang('change', 'qxbench');
  const totals: number[] = [];
  const changeRuns: number[] = [];
  let last: ValidatorOutput | undefined;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    last = await validate(
      sandbox,
      { dir: repo.dir, base: repo.base },
      { limits: { testTimeoutMs: HANG_TIMEOUT_S * 1000 } },
    );
    totals.push(performance.now() - started);
    changeRuns.push(last.duration_ms - last.baseline!.duration_ms);
  }
  log('');
  log(
    `Python, QuixBugs sqrt with an infinite loop (9 tests; the 6th hangs on the change), per-test ` +
      `timeout ${HANG_TIMEOUT_S} s, run limit ${sandbox.report().limits.timeoutMs / 1000} s: ${last!.command}`,
  );
  log(
    `  verdict: passed=${last!.passed}, new failures ${JSON.stringify(last!.new_failures)}, ` +
      `tests ${JSON.stringify(last!.tests)}, hung ${JSON.stringify(last!.hung)}`,
  );
  log(
    `  validate() wall time: median ${ms(median(totals))} (min ${ms(Math.min(...totals))}, ` +
      `max ${ms(Math.max(...totals))}); runs: ${totals.map((t) => t.toFixed(0)).join(' / ')}`,
  );
  log(
    `  past the per-test timeout: median ${ms(median(totals) - HANG_TIMEOUT_S * 1000)} (the 1 s grace, the ` +
      `baseline's run, copies, the probe, the kill)`,
  );
}

/**
 * One base, four ways to get its baseline: run in turn with the change (before issue 49), run at
 * once with it (this machine's slots), kept in the store (a follow-up, another task, a retry), and
 * kept in a retry's previous output (the retry path that existed before). Interleaved per round.
 */
async function measureReuse(sandbox: Sandbox, name: string, make: () => FixtureRepo) {
  const database = await openPglite(undefined);
  await runMigrations(database);
  try {
    const repo = make();
    const store = new DbBaselineStore({
      db: database.db,
      secretKey: randomBytes(32),
      workspace: randomUUID(),
      repository: 'https://example.com/bench/fixture',
      maxBytes: 64 * 1024 * 1024,
      now: () => new Date(),
    });
    const slots = TestRunSlots.forSandbox(sandbox.report(), 'auto');
    const input = { dir: repo.dir, base: repo.base };
    // The first validation keeps the baseline, and gives the retry's previous output.
    const first = await validate(sandbox, input, { baselines: store });
    const ways: Record<string, () => Promise<ValidatorOutput>> = {
      'in turn (no kept baseline, as before)': () => validate(sandbox, input),
      'at once (no kept baseline)': () => validate(sandbox, input, { runSlots: slots }),
      'kept in the store': () => validate(sandbox, input, { baselines: store, runSlots: slots }),
      "kept in a retry's previous output (before)": () =>
        validate(sandbox, { ...input, cachedBaseline: first.baseline }),
    };
    const times = new Map<string, number[]>(Object.keys(ways).map((k) => [k, []]));
    const verdicts = new Set<string>();
    for (let i = 0; i <= RUNS; i++) {
      for (const [way, run] of Object.entries(ways)) {
        const started = performance.now();
        const out = await run();
        if (i > 0) times.get(way)!.push(performance.now() - started);
        verdicts.add(JSON.stringify([out.passed, out.new_failures, out.fixed, out.preexisting_failures, out.flaky]));
      }
    }
    log('');
    log(`${name}, one base (capacity ${slots.capacity} runs at once here): ${first.command}`);
    log(`  verdicts: ${[...verdicts].join(' | ')} (one means every way agreed)`);
    for (const [way, ts] of times)
      log(`  ${way}: median ${ms(median(ts))} (min ${ms(Math.min(...ts))}, max ${ms(Math.max(...ts))})`);
  } finally {
    await database.close();
  }
}

async function main() {
  execFileSync('git', ['--version']);
  const sandbox = await fixtureSandbox();
  describeMachine(sandbox);
  try {
    if (process.env.BENCH_ONLY !== 'reuse') {
      await measure(sandbox, 'JavaScript, node --test (2 tests, 1 broken by the change)', jsFailingTest);
      await measure(sandbox, 'Python, pytest (2 tests, 1 broken by the change)', pythonPytest);
      await measureHang(sandbox);
    }
    await measureReuse(sandbox, 'JavaScript, node --test (2 tests, 1 broken by the change)', jsFailingTest);
    await measureReuse(sandbox, 'Python, pytest (2 tests, 1 broken by the change)', pythonPytest);
  } finally {
    removeFixtureRepos();
  }
}

await main();
