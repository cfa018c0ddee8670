import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../sandbox/types.js';
import type { BaselineSummary, HungTest, SetupReport, ValidatorOutput } from '../step-contract/fix.js';
import { type Comparison, compareRuns, unreachedOnBaseline } from './compare.js';
import { type Checkout, type RunTree, openCheckout, prepareCopies, trackedPaths } from '../environments/copies.js';
import { type TestRecipe, commandWithTimeouts } from '../environments/detect.js';
import type { EnvKeyParts } from '../environments/env-key.js';
import { environmentKeyParts } from '../environments/env-setup.js';
import { removeTree } from '../environments/tree-copy.js';
import { type PrepareOptions, type TreeSource, prepareTrees } from '../environments/prepare-trees.js';
import { type RunContext, type TestRunTimeouts, testRunTimeouts, runContextOf } from '../environments/sandboxed.js';
import { setupState } from '../environments/setup-phase.js';
import { describeNativeBuildFailure } from '../environments/native-build.js';
import { describeMissing } from '../environments/toolchains.js';
import { newFailureDetails } from '../test-runs/failure-detail.js';
import type { RunOutcome } from '../test-runs/outcome.js';
import { namesProgressPlugin, withoutProgressPlugin } from '../test-runs/pytest-progress.js';
import { type TestRun, describeHung, probe, runTests } from '../test-runs/run.js';
import { extrasDigest, keptRowFor } from './baseline-key.js';
import { type BaselineResult, BaselineTree, keepBaseline, keptBaseline } from './baseline-run.js';
import type { BaselineStore } from './baseline-store.js';
import { type ChangeTests, changeTests, judgeReproduction, reproduced } from './reproduction.js';
import { flakyNote, judgeReruns, needingNetwork, networkNote, rerunRefusal, statusIn, suspectsOf } from './reruns.js';
import { type TestRunSlots, sideBySide } from './run-slots.js';
import { untouchedFailures } from './untouched-failures.js';
import type { FocusInput } from './focus.js';
import { type FocusedPass, focusedPass } from './focused-pass.js';
import { scriptTreeOf } from './focus-read.js';
import { changeRunAlone } from './over-cores.js';

export const NO_TEST_COMMAND = 'no test command found';

export interface ValidateInput extends TreeSource {
  /** Its git directory, when it lives outside the files (a task's checkout). */
  gitDir?: string;
  /** A baseline result from an earlier run; used when its commit and command match. */
  cachedBaseline?: BaselineSummary;
}

export interface ValidateOptions extends PrepareOptions {
  limits?: Partial<TestRunTimeouts>;
  /** Where the temporary copies go (default: the OS temp dir). */
  tmpRoot?: string;
  /**
   * Kept baselines (docs/validator.md, "Kept baselines"): a baseline kept by an earlier validation
   * on the same base, environment, command and test files is reused, and one that runs here is kept.
   */
  baselines?: BaselineStore;
  /** The process's test runs (src/validator/run-slots.ts): with it, the two trees run at once when they fit. */
  runSlots?: TestRunSlots;
  /**
   * `focused` (a fixer retry that another retry may follow; docs/validator.md, "The focused pass"): the
   * test files the change touches first run on both trees before the whole suite, and new failures
   * there are the verdict. Without it the whole suite runs, as always.
   */
  pass?: 'focused';
  /** The previous verdict's failing tests: their files are among the focused pass's. */
  lastFailures?: FocusInput['lastFailures'];
  /**
   * Takes the work left once the verdict is out, to run it off the validation's path (the
   * service's src/processes/after-work.ts): removing the copies, and laying the environment ahead
   * for the next validation (a spare lay, src/environments/env-cache.ts). Without it the copies
   * are removed before the verdict returns and nothing is laid ahead.
   */
  afterwards?: (work: () => Promise<unknown>) => void;
}

/**
 * Runs the repository's tests on the baseline and on the change, each in its own copy in the
 * sandbox (at once when the machine allows it, else in turn), and compares them: failures present
 * before the change are pre-existing, the others are new; tests failing before and passing now are
 * fixed. A baseline an earlier validation kept for the same base is reused instead of run.
 */
export async function validate(
  sandbox: Sandbox,
  input: ValidateInput,
  options: ValidateOptions = {},
): Promise<ValidatorOutput> {
  const started = performance.now();
  const limits = testRunTimeouts(sandbox, options.limits);
  const ctx = runContextOf(sandbox, limits, options);
  const log = options.log ?? (() => {});
  const checkout = await openCheckout({ dir: input.dir, gitDir: input.gitDir }, input.base);
  const { commit } = checkout;
  const root = await mkdtemp(join(options.tmpRoot ?? tmpdir(), 'emend-validate-'));
  let spare: (() => Promise<boolean>) | undefined;
  let nextBase: (() => Promise<void>) | undefined;
  try {
    // With work left for after the verdict, the base commit's checkout is made ahead for the next validation.
    const copies = await prepareCopies(
      checkout,
      commit,
      root,
      options.afterwards ? { spares: options.tmpRoot ?? tmpdir() } : {},
    );
    nextBase = copies.nextSpare;
    if (copies.fromSpare) log('the baseline tree from a spare checkout of the base commit');
    const store = options.baselines;
    // What the baseline took from the checkout beyond the commit's files runs on the base too: part of the key.
    const extras = store ? await extrasDigest(copies.baseline.repo, copies.extras) : undefined;
    if (extras === 'too large')
      log('kept baselines not used: the checkout adds too much to the base commit to key it', { paths: copies.extras });
    let envParts: EnvKeyParts | undefined;
    // The command comes from the unmodified tree, so a change cannot pick its own judge;
    // only when the baseline has no tests at all does the change's tree decide.
    // Setup on the change's copy first: the command it yields decides whether a cached baseline
    // still applies, and then the baseline's setup need not run at all. With the environment
    // cache, the baseline's setup runs first instead (only the base commit builds an entry), and
    // both trees get its result (src/environments/env-setup.ts).
    const prepared = await prepareTrees({
      ctx,
      tree: copies.change,
      detectIn: [copies.baseline.repo, copies.change.repo],
      detect: { testCommand: input.testCommand, settings: input.settings },
      onRecipe: async (recipe, environment) => {
        log('test recipe', {
          runner: recipe.runner,
          source: recipe.source,
          command: recipe.command,
          ...(recipe.build ? { build: recipe.build } : {}),
          setup: recipe.setup?.command,
        });
        // The environment's key, read while the base tree is as the commit has it (no setup has run).
        if (store && extras !== 'too large')
          envParts = environmentKeyParts(ctx, {
            scope: store.scope,
            baseline: copies.baseline,
            tracked: await trackedPaths(checkout, commit),
            settings: input.settings,
            recipe,
            environment,
          });
      },
      dated: { repo: checkout, commit },
      toolchainCache: options.toolchainCache,
      cache: options.environments
        ? { scope: options.environments, baseline: copies.baseline, checkout, commit, settings: input.settings }
        : undefined,
      log,
    });
    if (prepared.kind === 'no-recipe') return notValidated(started, NO_TEST_COMMAND);
    const { environment } = prepared;
    const { recipe } = environment;
    // What was tried on the way (a version that could not be fetched, and why) belongs with it.
    if (prepared.kind === 'missing')
      return notValidated(started, [describeMissing(prepared.missing), ...environment.notes].join('; '), recipe);
    const { setups } = prepared;
    spare = setups.spare;
    const setup = setups.change;
    const probed = await probe(ctx, copies.change, recipe);
    // The progress plugin needs the read-only bind of its directory, which only bubblewrap gives.
    const canWatch = sandbox.report().kind === 'bubblewrap';
    const timed = commandWithTimeouts(
      recipe,
      Math.ceil(limits.testTimeoutMs / 1000),
      Math.ceil(limits.runTimeoutMs / 1000),
      probed,
      { pytestProgress: canWatch },
    );
    const command = canWatch ? timed : withoutProgressPlugin(timed);
    const watchPytest = canWatch && namesProgressPlugin(command);

    // The change's test files run on the base commit's code too: a reproduction must fail there.
    const tests = await changeTests(checkout, commit);
    const keyed =
      store && envParts && extras !== 'too large'
        ? { store, row: keptRowFor(store, envParts, { ctx, commit, command, tests, extras }) }
        : undefined;
    const baseTree = new BaselineTree(ctx, copies.baseline, recipe, {
      checkoutDir: input.dir,
      tests,
      setup: setups.baseline,
      laySetup: setups.layBaseline,
      log,
    });
    const runChange = async (cmd = command): Promise<TestRun> => {
      const run = await runTests(ctx, copies.change, cmd, setup, { watchPytest });
      log('change run', { failures: run.outcome.failures.length, tests: run.outcome.tests.size, ms: run.durationMs });
      return run;
    };

    // The change's run counts among the process's test runs; the baseline's beside it only when it fits.
    const release = options.runSlots?.hold();
    try {
      // The verdict on a baseline and a change's run of `cmd` (the whole suite's, or the focused pass's).
      const judge = (baseline: BaselineResult, change: TestRun, cmd: string, seenAgain?: TestRun) =>
        judgeRuns({
          ctx,
          started,
          checkout,
          commit,
          tests,
          command: cmd,
          watchPytest,
          recipe,
          environment,
          setup,
          change,
          changeTree: copies.change,
          baseline,
          baseTree,
          slots: options.runSlots,
          ...(seenAgain ? { seenAgain } : {}),
          log,
        });
      let focused: FocusedPass | undefined;
      if (options.pass === 'focused') {
        focused = await focusedPass(
          {
            ctx,
            checkout,
            commit,
            copies,
            recipe,
            command,
            setup,
            watchPytest,
            baseTree,
            slots: options.runSlots,
            log,
          },
          options.lastFailures ?? [],
          judge,
        );
        if (focused.verdict) return focused.verdict;
      }
      let baseline = await keptBaseline({ store: keyed, previous: input.cachedBaseline, commit, command, tests, log });
      let change: TestRun;
      let alone: Awaited<ReturnType<typeof changeRunAlone>> | undefined;
      if (baseline) {
        // Alone beside a kept baseline: over the free cores where the runner can (./over-cores.ts).
        alone = await changeRunAlone({
          recipe,
          command,
          scriptTree: scriptTreeOf(copies).repo,
          changeTree: copies.change.repo,
          baseline,
          slots: options.runSlots,
          run: runChange,
          log,
        });
        change = alone.run;
      } else {
        const both = await sideBySide(
          options.runSlots,
          () => baseTree.result(command, watchPytest, commit),
          () => runChange(),
        );
        if (both.together) log('baseline and change ran at once');
        const [ran, changeRun] = both.results;
        baseline = ran.result;
        change = changeRun;
        await keepBaseline(keyed, ran.kept, log);
      }
      const judged = await judge(baseline, change, command, alone?.inconclusive);
      const verdict = alone?.note
        ? { ...judged, message: [judged.message, alone.note].filter(Boolean).join('; ') }
        : judged;
      if (!focused) return verdict;
      return {
        ...verdict,
        pass: 'full',
        ...(focused.record ? { focus: focused.record } : {}),
        message: [verdict.message, focused.note].filter(Boolean).join('; '),
      };
    } finally {
      release?.();
    }
  } finally {
    if (options.afterwards)
      options.afterwards(async () => {
        // From the pack in `root`, before it goes; the copies go whether it was made or not.
        await nextBase?.().catch(() => {});
        // At the lowest priority: the task's next step (its pull request) goes first.
        await removeTree(root, { aside: true }).catch(() => {});
        await spare?.();
      });
    else await removeTree(root).catch(() => {});
  }
}
/** What the judging of one validation's runs reads. */
interface Runs {
  ctx: RunContext;
  started: number;
  checkout: Checkout;
  commit: string;
  tests: ChangeTests;
  command: string;
  watchPytest: boolean;
  recipe: TestRecipe;
  environment: { facts: { node?: string }; notes: string[] };
  /** The change's setup, as the output reports it. */
  setup: SetupReport | null;
  change: TestRun;
  changeTree: RunTree;
  baseline: BaselineResult;
  baseTree: BaselineTree;
  slots?: TestRunSlots;
  /**
   * Another run of the whole suite on the change's tree (over several processes, not conclusive):
   * where every suspect failed there too and the baseline is kept, it is their second run.
   */
  seenAgain?: TestRun;
  log: (message: string, data?: Record<string, unknown>) => void;
}

/** The verdict on the two runs: the comparison, the reproduction, the flaky suspects run again, the notes. */
async function judgeRuns(r: Runs): Promise<ValidatorOutput> {
  const { ctx, checkout, commit, tests, command, watchPytest, recipe, environment, setup, change, log } = r;
  const baseline = r.baseline.summary;
  const failedOnBase = baseline.test_file_failures ?? [];
  const untouched = await untouchedFailures(
    checkout,
    commit,
    tests,
    failedOnBase.filter((id) => change.outcome.failures.includes(id)),
    change.outcome.details,
  );
  const reproduction = judgeReproduction(tests.tests, failedOnBase, change.outcome, untouched);
  log(reproduction.note, { rule: reproduction.rule, test_files: reproduction.test_files });
  const compared = compareRuns(baseline.failures, change.outcome);
  const unreached = new Set(unreachedOnBaseline(compared.new_failures, r.baseline.seen));
  // A suspect new failure runs again on both trees before it counts (./reruns.ts); not after a
  // run stopped at a hang or its timeout, which would only stop again (its note says why).
  const stopped = change.hung !== undefined || change.timedOut;
  const suspects = suspectsOf(
    stopped ? [] : compared.new_failures.filter((id) => !unreached.has(id)),
    reproduction.still_failing,
  );
  const refused = suspects.length > 0 ? rerunRefusal(suspects, change.durationMs + baseline.duration_ms) : undefined;
  let rerun: ReturnType<typeof judgeReruns> | undefined;
  const seen = r.seenAgain?.outcome;
  if (suspects.length > 0 && seen && !r.baseline.ranHere && suspects.every((id) => statusIn(seen, id) === 'failed')) {
    // Each failed twice on the same tree already, in two runs of the whole suite: no third run.
    rerun = judgeReruns(
      suspects,
      { change: change.outcome, ...(r.baseline.outcome ? { baseline: r.baseline.outcome } : {}) },
      { change: seen },
    );
    log('suspects failed in both runs of the change', { suspects: suspects.length });
  } else if (suspects.length > 0 && refused === undefined) {
    // The baseline's tree runs again too when it ran here. A kept baseline ran in another
    // validation's tree: only the change's runs again, and the kept statuses are the base's first.
    const first = r.baseline.outcome;
    const both = await sideBySide(
      r.baseline.ranHere ? r.slots : undefined,
      () => runTests(ctx, r.changeTree, command, setup, { watchPytest }),
      async () => (r.baseline.ranHere ? (await r.baseTree.run(command, watchPytest)).outcome : undefined),
    );
    const [again, againBase] = both.results;
    rerun = judgeReruns(
      suspects,
      { change: change.outcome, ...(first ? { baseline: first } : {}) },
      { change: again.outcome, ...(againBase ? { baseline: againBase } : {}) },
    );
    log('suspects run again', { suspects: suspects.length, flaky: rerun.flaky, at_once: both.together });
  }
  const flaky = new Set(rerun?.flaky ?? []);
  const comparison = withOwnTests(
    { ...compared, new_failures: compared.new_failures.filter((id) => !unreached.has(id) && !flaky.has(id)) },
    reproduction.still_failing,
  );
  const network = needingNetwork(change.outcome.failures, change.outcome.details);

  const judged = verdict(comparison.new_failures, change.outcome, baseline, setup, environment.facts.node);
  const message =
    [
      judged.message,
      // Named by the verdict where setup failed; where it went through without dependencies' scripts, here.
      setup?.native_build && setup.exit_code === 0
        ? describeNativeBuildFailure(setup.native_build, environment.facts.node)
        : undefined,
      unreachedNote([...unreached]),
      rerun ? flakyNote(rerun.flaky, rerun.results) : refused,
      networkNote(network),
      ...hungNotes(change.hung, baseline.hung),
      ...environment.notes,
      ...(setup?.notes ?? []),
    ]
      .filter((m) => m !== undefined)
      .join('; ') || undefined;
  // No new failures is not enough when the change has tests: one of them must reproduce the request.
  const passed =
    judged.passed === true && reproduction.rule === 'reproduction' ? reproduced(reproduction) : judged.passed;
  const details = newFailureDetails(comparison.new_failures, change.outcome.details);
  return {
    command,
    setup,
    passed,
    ...comparison,
    ...(details.length > 0 ? { failure_details: details } : {}),
    ...(rerun ? { flaky: rerun.flaky, reruns: rerun.results } : {}),
    ...(network.length > 0 ? { needs_network: network } : {}),
    duration_ms: Math.round(performance.now() - r.started),
    log_tail: change.logTail,
    ...(message !== undefined ? { message } : {}),
    source: recipe.source,
    ...(recipe.runner !== undefined ? { runner: recipe.runner } : {}),
    // Absent when the output neither names a test nor has a runner's totals: unknown, not zero.
    ...(change.counts ? { tests: change.counts } : {}),
    ...(change.hung ? { hung: change.hung } : {}),
    baseline,
    reproduction,
  };
}

/** Says which failures were left out of the new ones because the base commit's run never reached them. */
function unreachedNote(ids: string[]): string | undefined {
  if (ids.length === 0) return undefined;
  const shown = ids.slice(0, 3).join(', ');
  return (
    `${ids.length} failing test(s) never ran on the base commit, whose test run stopped at its own failures, ` +
    `so they are not counted as new: ${shown}${ids.length > 3 ? ', …' : ''}`
  );
}

/**
 * The change's own tests that fail with it are its new failures even when they failed on the
 * base too (they ran there only because the change brought them): the fixer is shown them in
 * detail, and they are no pre-existing failure of the repository.
 */
function withOwnTests(comparison: Comparison, stillFailing: string[]): Comparison {
  if (stillFailing.length === 0) return comparison;
  const own = new Set(stillFailing);
  return {
    ...comparison,
    new_failures: [...new Set([...comparison.new_failures, ...stillFailing])].sort(),
    preexisting_failures: comparison.preexisting_failures.filter((id) => !own.has(id)),
  };
}

/**
 * Passed when nothing fails that did not fail before, but null (not validated) when there
 * was nothing to judge by: no test reported on either tree, or a baseline failing without
 * its dependencies, where failures from the missing install can hide the change's own.
 */
function verdict(
  newFailures: string[],
  change: RunOutcome,
  baseline: BaselineSummary,
  setup: SetupReport | null,
  node: string | undefined,
): { passed: boolean | null; message?: string } {
  const named = setup?.native_build ? describeNativeBuildFailure(setup.native_build, node) : undefined;
  const install = setup
    ? `${setup.command}: ${setup.skipped ?? (setup.timed_out ? 'timed out' : `exit code ${setup.exit_code}`)}${
        setup.unreached?.length ? `; ${setup.unreached.join('; ')}` : ''
      }`
    : '';
  // A failed setup is named beside new failures too: they may be its doing (a native module by name first).
  if (newFailures.length > 0)
    return named
      ? { passed: false, message: named }
      : setupState(setup) === 'failed'
        ? { passed: false, message: `the dependencies were not installed (${install})` }
        : { passed: false };
  if (change.tests.size === 0 && baseline.tests === 0 && change.failures.length > 0) {
    return {
      passed: null,
      message:
        `the test command reports no tests and fails the same way on the unmodified checkout ` +
        `(${change.failures[0]}); the change could not be validated`,
    };
  }
  // A native module that did not build is said first, by name: it is why the install failed.
  const native = named ? `${named}; ` : '';
  if ((baseline.setup === 'skipped' || baseline.setup === 'failed') && baseline.failures.length > 0) {
    return {
      passed: null,
      message:
        `${native}the dependencies were not installed (${install}) and the unmodified checkout ` +
        `fails ${baseline.failures.length} test(s) without them; the change could not be validated`,
    };
  }
  if (setupState(setup) === 'skipped' || setupState(setup) === 'failed')
    return {
      passed: true,
      message: `${native}the dependencies were not installed (${install}); the tests passed without them`,
    };
  return { passed: true };
}

/**
 * What the runs stopped at a hung test could not show: the tests after it did not run.
 * Not run on the change: neither failed nor fixed. Not run on the baseline: a failure among
 * them on the change counts as new, since nothing shows it failed before (docs/validator.md).
 */
function hungNotes(change: HungTest | undefined, baseline: HungTest | undefined): string[] {
  const notes: string[] = [];
  if (change) notes.push(`the change's run was stopped: ${describeHung(change)}`);
  if (baseline)
    notes.push(
      `the unmodified checkout's run was stopped: ${describeHung(baseline)}, so a failure among them on the ` +
        `change counts as new`,
    );
  return notes;
}

/**
 * Nothing ran, for the reason `message` gives: no tests found, or (with the recipe that needs it) a
 * toolchain the sandbox lacks, named with its install.
 */
function notValidated(started: number, message: string, recipe?: TestRecipe): ValidatorOutput {
  return {
    command: recipe?.command ?? null,
    setup: null,
    passed: null,
    new_failures: [],
    fixed: [],
    preexisting_failures: [],
    duration_ms: Math.round(performance.now() - started),
    log_tail: message,
    message,
    ...(recipe ? { source: recipe.source } : {}),
    ...(recipe?.runner !== undefined ? { runner: recipe.runner } : {}),
  };
}
