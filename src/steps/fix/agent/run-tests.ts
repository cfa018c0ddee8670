import type { WorkTree } from '../../../environments/work-tree.js';
import type { Sandbox } from '../../../sandbox/types.js';
import type { ValidatorOutput } from '../../../step-contract/fix.js';
import { parseOutput } from '../../../test-runs/parse.js';
import { testCounts } from '../../../test-runs/summary-counts.js';
import { focusedCommand } from '../../../validator/focus.js';
import { focusIn, lastFailuresOf, testScriptIn } from '../../../validator/focus-read.js';
import { type CommandPlace, runCommand } from './shell.js';

/** Failing tests named in the summary, at most. */
const NAMED_FAILURES = 10;

/**
 * The agent's `run_tests` tool (docs/agent.md, "What the model can do"): by default the focused pass
 * the validator runs on a retry (src/validator/focus.ts: the test files the change touches, the tests
 * that failed last time, the test files that import the changed modules), else the whole suite; in
 * the work tree, through the sandbox as `bash` runs, with a summary line before the output's head
 * and tail. The command is the validator's (the recipe's, without its timeout flags).
 */
export function runTestsTool(o: {
  sandbox: Sandbox;
  work: WorkTree;
  place: CommandPlace;
  /** The verdict that sent the fixer back, if any: its failures are focused on. */
  failure: ValidatorOutput | undefined;
  timeoutMs: number;
  signal: AbortSignal;
}): ((all: boolean) => Promise<{ action: string; exitCode: number | null; observation: string }>) | undefined {
  const { work } = o;
  const whole = work.testCommand;
  if (whole === undefined || work.recipe === undefined) return undefined;
  const recipe = work.recipe;
  return async (all) => {
    let command = whole;
    let what = `The whole suite: ${whole}`;
    if (!all) {
      const focus = focusIn(work.tree.repo, {
        changed: await work.changed(o.signal),
        lastFailures: lastFailuresOf(o.failure),
      });
      const built = focusedCommand(recipe, whole, focus.files, testScriptIn(work.tree.repo));
      if ('command' in built) {
        command = built.command;
        const files = focus.files.map((f) => `${f} (${focus.reasons[f]})`).join(', ');
        what =
          `The focused pass: ${focus.files.length} test file(s): ${files}` +
          `${focus.leftOut > 0 ? `; ${focus.leftOut} more left to the whole suite` : ''}. ` +
          'run_tests with all: true runs the whole suite, as the validator will.';
      } else what = `No focused pass (${built.refused}); the whole suite ran: ${whole}`;
    }
    const ran = await runCommand(o.sandbox, {
      place: o.place,
      // From the repository's root, whatever the bash tool's working directory is.
      state: { cwd: '' },
      command,
      timeoutMs: o.timeoutMs,
      signal: o.signal,
    });
    return {
      action: all ? 'all' : 'focused',
      exitCode: ran.exitCode,
      observation: `${what}\n${summary(ran.output)}\n\n${ran.observation}`,
    };
  };
}

/** The tests counted by status (by name, else by the runner's printed totals), and the first failing ones by name. */
function summary(output: string): string {
  const tests = parseOutput(output).tests;
  const counts = testCounts(tests, output);
  if (!counts) return 'No test was named or counted in the output (its end is below).';
  const failing = [...tests].filter(([, s]) => s === 'failed').map(([id]) => id);
  return (
    `${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped` +
    (failing.length > 0
      ? `; failing: ${failing.slice(0, NAMED_FAILURES).join(', ')}${failing.length > NAMED_FAILURES ? ', …' : ''}`
      : '')
  );
}
