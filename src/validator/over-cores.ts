// The change's whole suite over the free cores (docs/validator.md, "One suite over several cores"):
// when the base commit's run is kept, the change's run goes alone, and a serial runner leaves the
// other cores idle. mocha runs its files in worker processes with its own --parallel; the result
// stands for the run in one process only when it names every test the base commit's run named and
// fails none anew, and otherwise the suite runs again in one process, whose result is the verdict's.
import type { TestRecipe } from '../environments/detect.js';
import { repoFiles } from '../locator/files.js';
import type { RunOutcome } from '../test-runs/outcome.js';
import type { TestRun } from '../test-runs/run.js';
import type { BaselineResult } from './baseline-run.js';
import { lastCommandOf } from './focus.js';
import { testScriptIn } from './focus-read.js';
import type { TestRunSlots } from './run-slots.js';

/** mocha's --parallel came in 8.0. */
const MOCHA_PARALLEL_SINCE = 8;

/**
 * mocha's options that --parallel refuses (--file, --sort, --delay), changes the meaning of
 * (--bail stops one worker, not the run) or sets itself; a script with one runs in one process.
 */
const ONE_PROCESS_ONLY = /(?:^|\s)(--parallel|-p|--jobs|-j|--file|--sort|-S|--delay|--watch|-w|--bail|-b)(?=[\s=]|$)/;

/**
 * Why the whole suite cannot run over several processes here, or undefined when it can: only a
 * test script whose last command is mocha 8 or later, without an option that runs in one process only.
 */
export function overCoresRefusal(
  recipe: Pick<TestRecipe, 'perTest'>,
  script: string | undefined,
  mochaMajor: number | undefined,
): string | undefined {
  if (recipe.perTest.kind !== 'mocha') return 'only mocha runs its files over several processes here';
  if (mochaMajor === undefined || mochaMajor < MOCHA_PARALLEL_SINCE)
    return `mocha ${mochaMajor ?? '(version unknown)'} has no --parallel (8.0 and later)`;
  const last = script === undefined ? undefined : lastCommandOf(script);
  if (!last || !['mocha', '_mocha'].includes(last.bin)) return "the test script's last command is not mocha itself";
  const option = ONE_PROCESS_ONLY.exec(script ?? '')?.[1];
  if (option !== undefined) return `the test script gives mocha ${option}, which runs in one process`;
  return undefined;
}

/** The whole suite's command (`timed`: the recipe's with the validator's flags) under mocha's --parallel over `jobs` processes. */
export function overCoresCommand(recipe: Pick<TestRecipe, 'command'>, timed: string, jobs: number): string {
  // npm passes what follows `--` to the script; the validator's flags already opened it.
  const pass = timed.includes(`${recipe.command} -- `) || !recipe.command.startsWith('npm ') ? '' : ' --';
  return `${timed}${pass} --parallel --jobs ${jobs}`;
}

/** The major version of the mocha installed in the tree, read without leaving it; undefined when none. */
export function mochaMajorIn(repoDir: string): number | undefined {
  const text = repoFiles(repoDir).readText('node_modules/mocha/package.json', { maxBytes: 256 * 1024 });
  if (text === undefined) return undefined;
  try {
    const version: unknown = (JSON.parse(text) as { version?: unknown }).version;
    const major = typeof version === 'string' ? /^(\d+)\./.exec(version)?.[1] : undefined;
    return major === undefined ? undefined : Number(major);
  } catch {
    return undefined;
  }
}

/**
 * Why a run over several processes cannot stand for the suite's run in one process, or undefined
 * when it can: it ended on its own, fails nothing the base commit's run did not, and names every
 * test that run named. A test that needs another file's side effects fails or goes missing there,
 * and then the suite runs again in one process.
 */
export function notConclusive(run: TestRun, base: Pick<RunOutcome, 'tests' | 'failures'>): string | undefined {
  if (run.timedOut) return 'it timed out';
  if (run.hung) return 'it stopped at a hung test';
  const failedBefore = new Set(base.failures);
  const anew = run.outcome.failures.filter((id) => !failedBefore.has(id));
  if (anew.length > 0) return `${anew.length} test(s) failed there that did not fail on the base commit`;
  const missing = [...base.tests.keys()].filter((id) => !run.outcome.tests.has(id));
  if (missing.length > 0) return `${missing.length} test(s) of the base commit's run were not among its tests`;
  return undefined;
}

/**
 * The change's whole-suite run beside a kept baseline: over the cores free now when the runner can
 * and the base commit's tests are known by id, else (or when that run is not conclusive) in one
 * process. Returns the run the verdict reads and, when the cores were tried, a note for its message
 * (and the run over them when it was not conclusive: a second sight of the change's failures).
 */
export async function changeRunAlone(o: {
  recipe: TestRecipe;
  /** The whole suite's command as the validator runs it. */
  command: string;
  /** Where the test script is read (the base commit's tree: a change cannot pick how it is judged). */
  scriptTree: string;
  /** The change's tree, whose installed mocha decides. */
  changeTree: string;
  baseline: BaselineResult;
  slots?: TestRunSlots;
  run: (command: string) => Promise<TestRun>;
  log: (message: string, data?: Record<string, unknown>) => void;
}): Promise<{ run: TestRun; note?: string; inconclusive?: TestRun }> {
  const base = o.baseline.outcome;
  if (!o.slots || !base || o.recipe.perTest.kind !== 'mocha') return { run: await o.run(o.command) };
  const refused = overCoresRefusal(o.recipe, testScriptIn(o.scriptTree), mochaMajorIn(o.changeTree));
  if (refused !== undefined) {
    o.log('the change runs in one process', { reason: refused });
    return { run: await o.run(o.command) };
  }
  const extras: (() => void)[] = [];
  for (let extra = o.slots.tryExtra(); extra; extra = o.slots.tryExtra()) extras.push(extra);
  if (extras.length === 0) return { run: await o.run(o.command) };
  const jobs = extras.length + 1;
  let spread: TestRun;
  try {
    spread = await o.run(overCoresCommand(o.recipe, o.command, jobs));
  } finally {
    for (const release of extras) release();
  }
  const why = notConclusive(spread, base);
  if (why === undefined) {
    o.log('the change ran over several processes', { jobs, ms: spread.durationMs });
    return { run: spread, note: `the change's whole suite ran in ${jobs} mocha processes at once (--parallel)` };
  }
  o.log('the run over several processes was not conclusive: the suite runs again in one process', { jobs, why });
  return {
    run: await o.run(o.command),
    note: `the change's run in ${jobs} mocha processes at once was not conclusive (${why}), so the suite ran again in one`,
    inconclusive: spread,
  };
}
