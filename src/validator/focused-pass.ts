import { type Checkout, type RunTree, changedFiles } from '../environments/copies.js';
import type { TestRecipe } from '../environments/detect.js';
import type { RunContext } from '../environments/sandboxed.js';
import type { SetupReport, ValidatorOutput } from '../step-contract/fix.js';
import { type TestRun, runTests } from '../test-runs/run.js';
import type { BaselineResult, BaselineTree } from './baseline-run.js';
import { type FocusInput, focusedCommand } from './focus.js';
import { focusIn, mochaSpecIn, scriptTreeOf, testScriptIn } from './focus-read.js';
import { type TestRunSlots, sideBySide } from './run-slots.js';

/** What a focused pass leaves: the verdict when it failed (the whole suite then does not run), else its record and a note. */
export interface FocusedPass {
  verdict?: ValidatorOutput;
  record?: NonNullable<ValidatorOutput['focus']>;
  note: string;
}

/**
 * The focused pass (docs/validator.md, "The focused pass"): the test files the change touches first
 * run on both trees with the same command, and are judged as a whole verdict is. A failing verdict
 * is returned as `pass: "focused"`; otherwise the caller runs the whole suite, noting this pass.
 */
export async function focusedPass(
  o: {
    ctx: RunContext;
    checkout: Checkout;
    commit: string;
    copies: { baseline: RunTree; change: RunTree };
    recipe: TestRecipe;
    /** The whole suite's command as the validator runs it (flags added). */
    command: string;
    setup: SetupReport | null;
    watchPytest: boolean;
    baseTree: BaselineTree;
    slots?: TestRunSlots;
    log: (message: string, data?: Record<string, unknown>) => void;
  },
  lastFailures: FocusInput['lastFailures'],
  judge: (baseline: BaselineResult, change: TestRun, command: string) => Promise<ValidatorOutput>,
): Promise<FocusedPass> {
  const { ctx, copies, log } = o;
  const started = performance.now();
  const scriptTree = scriptTreeOf(copies);
  const script = testScriptIn(scriptTree.repo);
  const kind = o.recipe.perTest.kind;
  const focus = focusIn(copies.change.repo, {
    changed: await changedFiles(o.checkout, o.commit),
    lastFailures,
    // vitest reads `test/a.test.js` as a part of a path: `pkg/test/a.test.js` would run too.
    substrings: kind === 'vitest',
  });
  if (focus.unsafe.length > 0)
    log('test files left out of the focused pass: a runner could misread their names', { files: focus.unsafe });
  if (focus.ambiguous.length > 0)
    log('test files left out of the focused pass: the runner would take their names for other files too', {
      files: focus.ambiguous,
    });
  const ownSpec = kind === 'mocha' ? mochaSpecIn(scriptTree.repo, script) : undefined;
  const built = focusedCommand(o.recipe, o.command, focus.files, script, ownSpec);
  if ('refused' in built) {
    log('no focused pass', { reason: built.refused });
    return { note: `no focused pass: ${built.refused}; the whole suite ran` };
  }
  // Both trees run the same focused command: a file run alone can fail where the whole suite passes
  // (a root hook file left out), and then it fails on the base commit too.
  const both = await sideBySide(
    o.slots,
    () => o.baseTree.result(built.command, o.watchPytest, o.commit),
    async () => {
      const run = await runTests(ctx, copies.change, built.command, o.setup, { watchPytest: o.watchPytest });
      log('focused change run', { failures: run.outcome.failures.length, ms: run.durationMs });
      return run;
    },
  );
  const [ran, change] = both.results;
  const first = await judge(ran.result, change, built.command);
  const record: NonNullable<ValidatorOutput['focus']> = {
    files: focus.files.map((path) => ({ path, reason: focus.reasons[path]! })),
    command: built.command,
    passed: first.passed,
    duration_ms: Math.round(performance.now() - started),
  };
  const said = `focused pass: ${focus.files.length} test file(s) the change touches first${
    focus.leftOut > 0 ? ` (${focus.leftOut} more left to the whole suite)` : ''
  }`;
  log('focused pass', {
    files: focus.files.length,
    passed: first.passed,
    ms: record.duration_ms,
    at_once: both.together,
  });
  if (first.passed === false)
    return {
      verdict: {
        ...first,
        pass: 'focused',
        focus: record,
        message: [`${said} failed, so the whole suite was not run`, first.message].filter(Boolean).join('; '),
      },
      record,
      note: said,
    };
  return { record, note: `${said} ${first.passed ? 'passed' : 'validated nothing'}; the whole suite ran` };
}
