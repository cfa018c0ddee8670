import { appendFile, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../sandbox/types.js';
import { type Repo, type RunTree, linkOnTheWay, prepareChangeCopy, prepareCopies } from '../environments/copies.js';
import { type TestRecipe, commandWithTimeouts } from '../environments/detect.js';
import type { EnvironmentScope } from '../environments/env-setup.js';
import { isManifest } from '../environments/env-key.js';
import { prepareTrees } from '../environments/prepare-trees.js';
import { type RunContext, type TestRunTimeouts, testRunTimeouts } from '../environments/sandboxed.js';
import type { ToolchainCache } from '../environments/toolchain-cache.js';
import { describeMissing } from '../environments/toolchains.js';
import { namesProgressPlugin, withoutProgressPlugin } from '../test-runs/pytest-progress.js';
import { probe, runTests } from '../test-runs/run.js';
import { runGit } from '../checkout/git.js';
import { type ReportedRun, jsIdPassed, reportedTests } from './test-ids.js';

/** What the judge needs of an instance. */
export interface JudgedInstance {
  repo: string;
  test_patch: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
}

/** The step that kept the tests from running, and why. */
export interface JudgeSetup {
  ok: boolean;
  /** The operator's setup command, when there was one. */
  command?: string;
  /** The environment came from the cache (`hit`) or was built into it now (`built`), as a task's does. */
  environment?: 'hit' | 'built';
  /** Why the tests did not run: the stage that failed and the reason. */
  /** `pipeline`: the model mode's fix pipeline failed (a model error, a step that threw), so nothing was judged. */
  failure?: {
    stage: 'checkout' | 'pipeline' | 'test_patch' | 'setup' | 'runner';
    reason: string;
    /** A toolchain (or browser) the sandbox lacks kept setup from running at all. */
    missing?: true;
  };
}

export interface Verdict {
  /** Every FAIL_TO_PASS and PASS_TO_PASS test passed. */
  resolved: boolean;
  f2p: { passed: number; total: number };
  p2p: { passed: number; total: number };
  /** The listed ids that did not pass (failed, skipped, or not reported by the run), F2P first. */
  not_passed: string[];
  setup: JudgeSetup;
  /**
   * How long the environment took (toolchains, install or the cache's copy) and the test run,
   * in milliseconds; `tests_ms` is absent when the tests did not run.
   */
  times?: { setup_ms: number; tests_ms?: number };
  /** The test command, as run in the sandbox. */
  command?: string;
  /** The end of the test output, when something did not pass. */
  log_tail?: string;
  wall_ms: number;
  /** The date the tests ran at, when not today's (`emend eval --clock base`). */
  clock?: string;
  /**
   * Listed ids that did not pass at `clock` and passed when the tests ran again at today's
   * date: they count as passed (see JudgeOptions.clock).
   */
  passed_today?: string[];
}

export interface JudgeOptions {
  sandbox: Sandbox;
  /**
   * The operator's setup command for this repository (run in the sandbox before the tests),
   * replacing the detected install; `null`: the operator's entry names no command, so no install.
   */
  setupCommand?: string | null;
  /** Variables for the test command (not the setup's), e.g. PYTHONPATH=/workspace/repo/src. */
  env?: Record<string, string>;
  /**
   * The tests' clock: the date (said in the verdict) and the variables that set it for the
   * test command (src/test-runs/test-clock.ts). A data set's ids were recorded passing at some
   * date between the base commit's and today: a test that reads the year passes only near the
   * commit's, one that formats the current month may fail in the commit's month and pass in
   * another. So when listed ids do not pass at this date, the tests run once more at today's,
   * and an id passed if it passed at either.
   */
  clock?: { at: string; env: Record<string, string> };
  limits?: Partial<TestRunTimeouts>;
  signal?: AbortSignal;
  tmpRoot?: string;
  /** Fetches the node, pnpm or yarn a repository asks for, as the validator does (docs/environments.md). */
  toolchainCache?: ToolchainCache;
  /**
   * The checkout's repository (its git directory may live outside the files, as the model
   * mode's does) and the base commit. With it, the test patch's files are first put back as the
   * base commit has them, as the SWE-bench harness does (a change that wrote the same tests, as
   * the fixer is asked to, does not stop the patch from applying), and the environment cache
   * can be used.
   */
  base?: { git: Repo; commit: string };
  /**
   * The environment cache, as a task's validation uses it (src/environments/env-setup.ts): built
   * from the base commit's tracked files only, never from the change or the test patch, and
   * laid into the judged tree. Needs `base`.
   */
  environments?: EnvironmentScope;
  /**
   * Where the run's output is kept for a reader (`emend eval --logs`): the setup's end and the
   * whole test output, as the judge read it. Absent: nothing is written.
   */
  logFile?: string;
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** A pytest node id: `path.py::name`, as SWE-bench lists the tests of Python repositories. */
const PYTEST_ID = /^[^\s:]+\.py::/;

/** The recipe pytest is run by when the ids are pytest's, whatever the repository's own files suggest. */
const PYTEST_RECIPE: TestRecipe = {
  runner: 'pytest',
  source: 'detected',
  command: 'python3 -m pytest',
  perTest: { kind: 'pytest' },
  setup: null,
};

/**
 * The tests to run. pytest ids: pytest on the files that hold them, as the SWE-bench harness
 * runs them (pytest stops the whole run at one id it cannot find, and the data sets list ids
 * cut at a space or absent at the base commit); the listed ids are then read from the report.
 * Other runners have no per-id selection: their whole command runs and the listed ids are read.
 * A repository without any detected runner is judged by pytest when the ids are pytest's.
 */
export function selectTests(detected: TestRecipe | undefined, ids: string[]): TestRecipe | undefined {
  if (ids.length === 0 || !ids.every((id) => PYTEST_ID.test(id))) return detected;
  if (detected && detected.source !== 'detected') return detected;
  const files = [...new Set(ids.map((id) => id.split('::')[0]!))];
  // The environment stays the detected one: its install (and `.emend/setup`) runs as a task's
  // would, so the tests import the checkout's package, not a copy the system happens to have.
  const environment = detected
    ? { setup: detected.setup, ...(detected.extraSetup ? { extraSetup: detected.extraSetup } : {}) }
    : {};
  return { ...PYTEST_RECIPE, ...environment, command: `${PYTEST_RECIPE.command} ${files.map(quote).join(' ')}` };
}

/**
 * Judges a checkout holding a change as the SWE-bench harness does: in a copy (the checkout is
 * not touched), test_patch applied with `git apply`, the operator's setup, then the listed
 * tests in the sandbox, offline. Resolved when every FAIL_TO_PASS and PASS_TO_PASS id passed;
 * an id the run never reports did not pass.
 */
export async function judge(checkout: string, instance: JudgedInstance, options: JudgeOptions): Promise<Verdict> {
  const started = performance.now();
  const ids = [...instance.FAIL_TO_PASS, ...instance.PASS_TO_PASS];
  const root = await mkdtemp(join(options.tmpRoot ?? tmpdir(), 'emend-judge-'));
  const notRun = (setup: JudgeSetup): Verdict => ({
    ...count(instance, () => false),
    resolved: false,
    not_passed: ids,
    setup,
    wall_ms: Math.round(performance.now() - started),
  });
  try {
    const at = options.base ? { ...options.base.git, dir: checkout, commit: options.base.commit } : undefined;
    // A test patch that changes what setup reads gets its own setup, as a change that does would.
    const scope = touchedFiles(instance.test_patch).some(isManifest) ? undefined : options.environments;
    // With the cache, the base commit's files in a tree of their own build its entry.
    const copies = scope && at ? await prepareCopies(at, at.commit, root) : undefined;
    // The judged tree has a .git of its own at the base commit, the change uncommitted (src/environments/tree-git.ts).
    const tree = copies?.change ?? (at ? await prepareChangeCopy(at, at.commit, root) : await copyTree(checkout, root));
    if (at) await restoreTestFiles(instance.test_patch, tree, at, root);
    const patchError = await applyTestPatch(instance.test_patch, tree, root);
    const base = typeof options.setupCommand === 'string' ? { command: options.setupCommand } : {};
    if (patchError) return notRun({ ok: false, ...base, failure: { stage: 'test_patch', reason: patchError } });
    const ctx: RunContext = {
      sandbox: options.sandbox,
      limits: testRunTimeouts(options.sandbox, options.limits),
      signal: options.signal,
    };
    // The environment as the validator builds it (toolchains, the detected install through the
    // egress proxy); the operator's setup file, where it names a command, replaces the install.
    const setupStarted = performance.now();
    const setupMs = () => ({ times: { setup_ms: Math.round(performance.now() - setupStarted) } });
    const prepared = await prepareTrees({
      ctx,
      tree,
      detectIn: [tree.repo],
      select: (detected) => selectTests(detected, ids),
      dated: { repo: at ?? { dir: checkout }, commit: 'HEAD' },
      toolchainCache: options.toolchainCache,
      setupCommand: options.setupCommand,
      cache: scope && copies && at ? { scope, baseline: copies.baseline, checkout: at, commit: at.commit } : undefined,
    });
    if (prepared.kind === 'no-recipe')
      return {
        ...notRun({ ok: false, ...base, failure: { stage: 'runner', reason: 'no test runner found' } }),
        ...setupMs(),
      };
    if (prepared.kind === 'missing')
      return {
        ...notRun({
          ok: false,
          ...base,
          failure: { stage: 'setup', reason: describeMissing(prepared.missing), missing: true },
        }),
        ...setupMs(),
      };
    const setupTime = setupMs();
    const { recipe } = prepared.environment;
    const setup = prepared.setups.change;
    const used = setup
      ? { command: setup.command, ...(setup.environment ? { environment: setup.environment.cache } : {}) }
      : base;
    if (options.logFile && setup) {
      // What ran it: the toolchains chosen (and why some were not), then the setup's own words.
      const { facts, notes } = prepared.environment;
      const tools = Object.entries(facts)
        .filter(([, version]) => version !== undefined)
        .map(([name, version]) => `${name} ${version}`)
        .join(', ');
      const said = [
        `emend: toolchains: ${tools || 'none'}`,
        ...notes.map((n) => `emend: ${n}`),
        ...(setup.notes ?? []),
      ];
      await writeFile(
        options.logFile,
        `${said.join('\n')}\n$ ${setup.command}\n${setup.log_tail ?? ''}\nemend: setup exited ${setup.exit_code}\n`,
      );
    }
    if (setup && (setup.exit_code !== 0 || setup.skipped !== undefined)) {
      const why = setup.skipped ?? (setup.timed_out ? 'timed out' : `exited with code ${setup.exit_code}`);
      const reason = `${why}${setup.log_tail ? `: ${setup.log_tail.trim().split('\n').slice(-10).join(' | ')}` : ''}`;
      return { ...notRun({ ok: false, ...used, failure: { stage: 'setup', reason } }), ...setupTime };
    }
    const testsStarted = performance.now();
    const { command, watchPytest } = await testCommand(ctx, tree, recipe);
    const runAt = async (clock: JudgeOptions['clock']) => {
      const env = clock || options.env ? { ...options.env, ...clock?.env } : undefined;
      const run = await runTests(ctx, tree, command, setup, { watchPytest, ...(env ? { env } : {}) });
      const when = clock
        ? `emend: the tests' clock at ${clock.at}\n`
        : options.clock
          ? "emend: the tests' clock at today's date\n"
          : '';
      if (options.logFile) await appendFile(options.logFile, `${when}$ ${command}\n${run.output}`);
      return { run, passed: idReader(run.outcome.tests, run.output) };
    };
    const first = await runAt(options.clock);
    const missed = count(instance, first.passed).not_passed;
    const today = options.clock && missed.length > 0 && !options.signal?.aborted ? await runAt(undefined) : undefined;
    const passedToday = today ? missed.filter(today.passed) : [];
    const counted = today
      ? count(instance, (id) => first.passed(id) || today.passed(id))
      : count(instance, first.passed);
    const last = (today ?? first).run;
    return {
      ...counted,
      resolved: counted.not_passed.length === 0,
      setup: { ok: true, ...used },
      times: { ...setupTime.times, tests_ms: Math.round(performance.now() - testsStarted) },
      command,
      ...(options.clock ? { clock: options.clock.at } : {}),
      ...(passedToday.length > 0 ? { passed_today: passedToday } : {}),
      ...(counted.not_passed.length > 0 ? { log_tail: last.logTail } : {}),
      wall_ms: Math.round(performance.now() - started),
    };
  } finally {
    await rm(root, { recursive: true, force: true }).catch(() => {});
  }
}

/**
 * Whether a listed id passed. The SWE-bench data sets took their ids from pytest's log cut at
 * the first space, so `test_x[a b]` is listed as `test_x[a`: an id the run does not report
 * as such stands for the reported ids it is the cut form of, and passed when all of them did.
 */
export function statusOf(tests: Map<string, string>): (id: string) => boolean {
  const byCut = new Map<string, string[]>();
  for (const [id, status] of tests) {
    const cut = id.split(/\s/)[0]!;
    if (cut !== id) byCut.set(cut, [...(byCut.get(cut) ?? []), status]);
  }
  return (id) => {
    const exact = tests.get(id);
    if (exact !== undefined) return exact === 'passed';
    const cut = byCut.get(id);
    return cut !== undefined && cut.every((s) => s === 'passed');
  };
}

/**
 * How the listed ids are read from a run: pytest's ids (`path.py::name`) from the parsed
 * report as the SWE-bench harness reads them; every other id (jest's `file` and `file:title`,
 * mocha's and node:test's titles, vitest's names) by the rule of src/eval/test-ids.ts.
 */
function idReader(tests: Map<string, string>, output: string): (id: string) => boolean {
  const pytest = statusOf(tests);
  let reported: ReportedRun | undefined;
  return (id) => {
    if (PYTEST_ID.test(id)) return pytest(id);
    reported ??= reportedTests(output);
    return jsIdPassed(reported, id);
  };
}

function count(instance: JudgedInstance, passed: (id: string) => boolean) {
  const f2p = instance.FAIL_TO_PASS.filter(passed).length;
  const p2p = instance.PASS_TO_PASS.filter(passed).length;
  return {
    f2p: { passed: f2p, total: instance.FAIL_TO_PASS.length },
    p2p: { passed: p2p, total: instance.PASS_TO_PASS.length },
    not_passed: [...instance.FAIL_TO_PASS, ...instance.PASS_TO_PASS].filter((id) => !passed(id)),
  };
}

/** The paths a unified diff reads or writes (`--- a/path`, `+++ b/path`). */
const touchedFiles = (patch: string) => [
  ...new Set([...patch.matchAll(/^(?:---|\+\+\+) [ab]\/(.+?)\s*$/gm)].map((m) => m[1]!)),
];

/**
 * The test patch's files as the base commit has them, in the run tree: those the commit has
 * are checked out from it (through a throwaway index, so the checkout's own is untouched; git
 * writes nothing through a link on the way), those it lacks are removed. As the SWE-bench
 * harness does before applying the patch, so a change that wrote the same tests does not stop it.
 */
async function restoreTestFiles(patch: string, tree: RunTree, at: Repo & { commit: string }, root: string) {
  const paths = touchedFiles(patch);
  if (paths.length === 0) return;
  const gitDir = at.gitDir ?? join(at.dir, '.git');
  const env = { GIT_LITERAL_PATHSPECS: '1', GIT_INDEX_FILE: join(root, 'restore-index') };
  const home = { home: join(root, 'git-home') };
  const listed = await runGit(home, { args: ['ls-tree', '-z', '--name-only', at.commit, '--', ...paths], gitDir, env });
  const inBase = new Set(listed.stdout.split('\0').filter(Boolean));
  for (const path of paths.filter((p) => !inBase.has(p)))
    if (!(await linkOnTheWay(tree.repo, path))) await rm(join(tree.repo, path), { force: true });
  if (inBase.size > 0)
    await runGit(home, {
      args: ['checkout', at.commit, '--', ...inBase],
      gitDir,
      workTree: tree.repo,
      env: { ...env, GIT_CEILING_DIRECTORIES: tree.workdir },
    });
}

/** The checkout's files, without .git, in a run tree of its own (the sandbox writes there): no base commit is known. */
async function copyTree(checkout: string, root: string): Promise<RunTree> {
  const workdir = join(root, 'tree');
  const tree = { workdir, repo: join(workdir, 'repo') };
  await mkdir(join(workdir, 'home'), { recursive: true });
  const dotGit = join(checkout, '.git');
  await cp(checkout, tree.repo, { recursive: true, verbatimSymlinks: true, filter: (src) => src !== dotGit });
  return tree;
}

/**
 * `git apply` of the test patch in the copy, to its files only (the tree's own fresh `.git`, made
 * by the service, where it has one: nothing of the repository's code has run yet; else git works
 * as `patch` does), refusing paths that leave the tree. Returns why it did not apply, or undefined.
 */
async function applyTestPatch(patch: string, tree: RunTree, root: string): Promise<string | undefined> {
  if (!patch.trim()) return undefined;
  const file = join(root, 'test.patch');
  await writeFile(file, patch);
  try {
    await runGit(
      { home: join(root, 'git-home') },
      {
        args: ['apply', '--whitespace=nowarn', file],
        cwd: tree.repo,
        // Never look for a repository above the copy.
        env: { GIT_CEILING_DIRECTORIES: tree.workdir },
      },
    );
    return undefined;
  } catch (err) {
    return `git apply failed: ${(err as Error).message}`;
  }
}

/** The recipe's command with the validator's per-test timeouts and, under bubblewrap, its pytest progress watch. */
async function testCommand(ctx: RunContext, tree: RunTree, recipe: TestRecipe) {
  const probed = await probe(ctx, tree, recipe);
  const canWatch = ctx.sandbox.report().kind === 'bubblewrap';
  const timed = commandWithTimeouts(
    recipe,
    Math.ceil(ctx.limits.testTimeoutMs / 1000),
    Math.ceil(ctx.limits.runTimeoutMs / 1000),
    probed,
    { pytestProgress: canWatch },
  );
  const command = canWatch ? timed : withoutProgressPlugin(timed);
  return { command, watchPytest: canWatch && namesProgressPlugin(command) };
}
