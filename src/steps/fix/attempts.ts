import { applyDiff, checkoutDiff } from '../../checkout/diff.js';
import type { AttemptChoice, FixAttempt, FixerOutput, ValidatorOutput } from '../../step-contract/index.js';
import { clip } from '../../text/clip.js';
import type { AttemptHelpers, FixPayload, FixStep, StepHelpers, StepResult } from '../step.js';
import { carryConversation } from './agent/agent-fixer.js';
import { type RankedAttempt, rankAttempts } from './attempt-rank.js';
import { truncateDiff } from './diff-summary.js';

/**
 * The temperature of each attempt: the first at the fixer's own (EMEND_MODEL_TEMPERATURE_FIXER, 0
 * by default), the others spread evenly from there up to 1 (so three attempts sample at 0, 0.5
 * and 1). An operator's temperature of 1 or more is kept for every attempt.
 */
export function attemptTemperatures(own: number, attempts: number): number[] {
  const top = Math.max(own, 1);
  return Array.from({ length: attempts }, (_, i) =>
    attempts === 1 ? own : Math.round((own + ((top - own) * i) / (attempts - 1)) * 100) / 100,
  );
}

/** Lines a unified diff adds and removes (its headers left out). */
export function diffLines(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of diff.split('\n')) {
    if (line.startsWith('+') && !line.startsWith('+++ ')) added++;
    else if (line.startsWith('-') && !line.startsWith('--- ')) removed++;
  }
  return { added, removed };
}

/** One attempt's run: its fixer's result and its validation's, or why it failed. */
interface AttemptRun {
  attempt: number;
  temperature: number;
  helpers: AttemptHelpers;
  fixed?: StepResult<FixerOutput>;
  judged?: StepResult<ValidatorOutput>;
  error?: string;
  ms: number;
}

/**
 * Runs `work` over the items, at most `limit` at a time, each result in the item's place. A work
 * that throws (a kill) stops the others from starting; the first error is thrown once every
 * started one has ended, so nothing still writes in a tree when the step's trees are removed.
 */
async function pooled<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failed: { error: unknown } | undefined;
  const worker = async () => {
    for (let i = next++; i < items.length && !failed; i = next++) {
      try {
        results[i] = await work(items[i]!);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failed) throw failed.error;
  return results;
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** An attempt as the fixer's output shows it. */
function attemptRecord(run: AttemptRun, fixer: FixAttempt['fixer'], chosen: number | undefined): FixAttempt {
  const diff = run.fixed?.output.diff ?? '';
  const verdict = run.judged?.output;
  const lines = diffLines(diff);
  const spent = run.helpers.spent();
  return {
    attempt: run.attempt,
    fixer,
    temperature: run.temperature,
    status: run.error === undefined ? 'validated' : 'failed',
    ...(run.error !== undefined ? { error: clip(run.error, 1_000) } : {}),
    passed: verdict?.passed ?? null,
    rule: verdict?.reproduction?.rule ?? null,
    now_passing: verdict?.reproduction?.now_passing.length ?? 0,
    still_failing: verdict?.reproduction?.still_failing.length ?? 0,
    new_failures: (verdict?.new_failures ?? []).slice(0, 10),
    new_failure_count: verdict?.new_failures.length ?? 0,
    files_changed: (run.fixed?.output.files_changed ?? []).map((f) => f.path),
    lines_added: lines.added,
    lines_removed: lines.removed,
    diff_summary: truncateDiff(diff),
    diff,
    tokens: spent.tokens,
    cost_usd: spent.costUsd,
    duration_ms: Math.round(run.ms),
    chosen: run.attempt === chosen,
  };
}

/** One attempt: the fixer in its own tree, then the validator on what it made. */
async function runAttempt(
  payload: FixPayload,
  helpers: StepHelpers,
  steps: { fixer: FixStep<'fixer'>; validator: FixStep<'validator'> },
  attempt: number,
  temperature: number,
): Promise<AttemptRun> {
  const own = helpers.attempt(attempt, { temperature });
  const started = performance.now();
  const run: AttemptRun = { attempt, temperature, helpers: own, ms: 0 };
  try {
    run.fixed = await steps.fixer(payload, own);
    const outputs = { ...payload.outputs, fixer: run.fixed.output };
    run.judged = await steps.validator({ ...payload, outputs, failure: undefined }, own);
  } catch (err) {
    // A kill ends every attempt: the step stops, and the runner says why.
    if (helpers.signal.aborted) throw err;
    run.error = errorText(err);
  }
  run.ms = performance.now() - started;
  const record = attemptRecord(run, payload.task.fixer, undefined);
  const { diff: _diff, diff_summary: _summary, chosen: _chosen, ...summary } = record;
  await helpers.report({ attempt, attempt_done: summary });
  return run;
}

/**
 * The fixer of a task that asks for several attempts (docs/agent.md, "Attempts"): each attempt
 * is a run of the task's fixer in a tree of its own, at its own temperature, validated there by
 * the validator; they run side by side, at most the plan's concurrency at once. The best-ranked
 * change (attempt-rank.ts) is applied to the task's checkout and is the step's output, with every
 * attempt and why it was chosen; its verdict goes with it, so the validator step does not run
 * again on the same change. A retry after a failed verdict refines the chosen change with one
 * run, as for a task of one attempt; so does a task of one attempt, which is today's fixer.
 */
export function attemptedFixerStep(fixer: FixStep<'fixer'>, validator: FixStep<'validator'>): FixStep<'fixer'> {
  return async (payload, helpers) => {
    const count = payload.task.fixAttempts;
    if (count <= 1 || payload.retry > 0 || payload.failure) return fixer(payload, helpers);
    const temperatures = attemptTemperatures(helpers.deps.config.llm.temperatures.fixer, count);
    helpers.log('fixer attempts', { attempts: count, temperatures, at_once: helpers.limits.concurrent });
    const runs = await pooled(
      temperatures.map((t, i) => ({ attempt: i + 1, temperature: t })),
      helpers.limits.concurrent,
      (a) => runAttempt(payload, helpers, { fixer, validator }, a.attempt, a.temperature),
    );
    const validated = runs.filter(
      (r): r is AttemptRun & Required<Pick<AttemptRun, 'fixed' | 'judged'>> => r.error === undefined,
    );
    if (validated.length === 0)
      throw new Error(
        `none of the ${count} attempts made a change that could be validated: ` +
          clip(runs.map((r) => `attempt ${r.attempt}: ${r.error}`).join('; '), 1_500),
      );
    const ranked: RankedAttempt[] = validated.map((r) => {
      const lines = diffLines(r.fixed.output.diff);
      return { attempt: r.attempt, verdict: r.judged.output, lines: lines.added + lines.removed };
    });
    const { order, reason } = rankAttempts(ranked);
    const chosenNumber = order[0]!.attempt;
    const chosen = validated.find((r) => r.attempt === chosenNumber)!;
    // The chosen change joins the task's checkout (binary files too), where the gates, a retry and
    // the pr step find it as they find a single run's.
    const tree = await chosen.helpers.checkout();
    const main = await helpers.checkout();
    const checkoutDeps = { dataDir: helpers.deps.config.dataDir, log: helpers.deps.log };
    const patch = await checkoutDiff(checkoutDeps, tree, { binary: true, signal: helpers.signal });
    await applyDiff(checkoutDeps, main, patch, helpers.signal);
    await carryConversation(tree.root, main.root);
    const choice: AttemptChoice = { attempt: chosenNumber, reason };
    const attempts = runs.map((r) => attemptRecord(r, payload.task.fixer, chosenNumber));
    helpers.log('attempt chosen', { attempt: chosenNumber, reason });
    const output = chosen.fixed.output;
    return {
      output: { ...output, attempts, choice },
      patch: {
        changed: true,
        diffSummary: truncateDiff(output.diff),
        judged: {
          output: chosen.judged.output as Record<string, unknown>,
          ...(chosen.judged.patch?.passed !== undefined ? { passed: chosen.judged.patch.passed } : {}),
          from: `attempt ${chosenNumber}`,
        },
      },
    };
  };
}
