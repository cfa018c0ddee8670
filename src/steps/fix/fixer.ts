import { recall } from '../../memory/repo-memory.js';
import { checkoutDiff } from '../../checkout/diff.js';
import type { ValidatorOutput } from '../../step-contract/index.js';
import type { FixStep } from '../step.js';
import { truncateDiff } from './diff-summary.js';
import { editRounds } from './edit-rounds.js';
import { failureFiles, failureInsights } from './file-views.js';
import { fenced } from '../prompt-parts.js';
import { FIXER_SYSTEM, fixerUserMessage } from './fixer-prompt.js';
import { assembleFixerFiles, filesBudget } from './fixer-context.js';
import { fixerFiles } from './locator.js';
import { definitionsOfFiles } from '../../locator/index.js';
import { clip } from '../../text/clip.js';
import { reproductionSignal } from './reproduction-messages.js';
import { repoInstructions } from './repo-instructions.js';

/** Answers the fixer may give in one run: the first, then corrections of edits that did not apply. */
const MAX_ROUNDS = 3;
/** The most tokens one answer of the fixer may take. */
const OUTPUT_TOKENS = 12_000;
const MEMORY_TOKENS = 3_000;
/** The repository's instructions take at most this share of what the window leaves the files: the code comes first. */
const INSTRUCTIONS_SHARE = 0.25;

/** Each new failure as the runner told it: the test, where it failed in the repository, its message. */
function failingTests(failure: ValidatorOutput): string {
  const details = failure.failure_details ?? [];
  const told = new Set(details.map((d) => d.test));
  const blocks = details.map((d) => {
    const where = d.frame ? `\n  failed at ${d.frame.path}:${d.frame.line}` : '';
    const file = d.test_file && d.test_file !== d.frame?.path ? `\n  test file: ${d.test_file}` : '';
    const message = d.message ? `\n${fenced(d.message)}` : '';
    return `- ${d.test}${file}${where}${message}`;
  });
  const rest = failure.new_failures.filter((id) => !told.has(id)).slice(0, Math.max(0, 30 - details.length));
  if (rest.length) blocks.push(`- also failing: ${rest.join(', ')}`);
  return blocks.length ? `Tests that now fail:\n${blocks.join('\n')}` : '';
}

/** The end of the output, from a line start: where a run says why it failed. */
function lastChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(-max);
  return `… (earlier output left out)\n${cut.slice(cut.indexOf('\n') + 1)}`;
}

export function failureSection(failure: ValidatorOutput | undefined, previousDiff: string | undefined): string {
  if (!failure) return '';
  // The parsed failures say more than the output around them; the output's end is kept for
  // when nothing could be parsed (a crash before any test, an unknown runner).
  const parsed = (failure.failure_details ?? []).some((d) => d.message !== undefined || d.frame !== undefined);
  return [
    '',
    'Your previous change did not pass validation. It is already applied to the files shown; change them further (or undo parts) so the tests pass.',
    `Command: ${failure.command ?? 'unknown'}`,
    failingTests(failure),
    failure.message ? `Validator: ${failure.message}` : '',
    reproductionSignal(failure),
    parsed ? '' : `Test output (end):\n${fenced(lastChars(failure.log_tail, 3_000))}`,
    previousDiff ? `Your previous diff:\n${fenced(clip(previousDiff, 12_000), 'diff')}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

/**
 * The fixer: asks for edits in the documented format (docs/edit-format.md), applies them to
 * the checkout, and sends back what did not apply, with the reason, for up to MAX_ROUNDS
 * answers. Its output is the git diff of the checkout against the base commit.
 */
export function fixerStep(): FixStep<'fixer'> {
  return async ({ task, outputs, failure }, helpers) => {
    const checkout = await helpers.checkout();
    // On a retry, the failing tests' files and the files they failed in join the view. The located
    // files after the selection (left out by a re-rank, then beyond its shortlist) fill what the
    // selected ones leave of the budget, in the deterministic order, up to the plan's number of files.
    const { selected, fill, beyond } = fixerFiles(
      outputs.locator,
      helpers.limits.maxFiles,
      failureFiles(checkout.dir, failure),
    );
    const insights = outputs.inspector?.insights ?? [];
    const memory = await recall(helpers.deps, {
      workspaceId: task.workspaceId,
      repo: task.repoUrl,
      prompt: task.prompt,
      tokenBudget: MEMORY_TOKENS,
    });
    const model = await helpers.model();
    const budget = (rest: number) =>
      filesBudget({ contextTokens: model.contextWindow, outputTokens: OUTPUT_TOKENS, rounds: MAX_ROUNDS, rest });
    const parts = {
      request: task.prompt,
      plan: outputs.planner,
      insights,
      memory,
      failure: failureSection(failure, outputs.fixer?.diff),
    };
    // The repository's instructions (its conventions files, the AGENTS.md nearest each shown file)
    // get a share of what the window leaves, and are then counted in the rest like any other part.
    const room = Math.floor(
      budget(FIXER_SYSTEM.length + fixerUserMessage({ ...parts, files: [], instructions: '' }).length) *
        INSTRUCTIONS_SHARE,
    );
    const instructions = repoInstructions(checkout.dir, selected, room);
    if (instructions.text)
      helpers.log("the repository's instructions shown", {
        chars: instructions.text.length,
        nested: instructions.nested,
      });
    const message = (files: string[]) => fixerUserMessage({ ...parts, files, instructions: instructions.text });
    // The files get what the model's window leaves once the rest of the prompt and the rounds are counted.
    const rest = FIXER_SYSTEM.length + message([]).length;
    const files = assembleFixerFiles({
      dir: checkout.dir,
      paths: selected,
      fill,
      beyond,
      // A retry also shows where each failing test stopped and the test itself, whole.
      insights: [...insights, ...failureInsights(failure)],
      definitions: await definitionsOfFiles(checkout.dir, [...selected, ...fill, ...beyond]),
      request: task.prompt,
      budget: budget(rest),
    });
    const user = message(files);
    const {
      rounds,
      applied,
      failed,
      notes: commentary,
    } = await editRounds(model, {
      system: FIXER_SYSTEM,
      user,
      dir: checkout.dir,
      maxRounds: MAX_ROUNDS,
      maxOutputTokens: OUTPUT_TOKENS,
      syntaxCheck: true,
      log: helpers.log,
    });
    const diff = await checkoutDiff({ dataDir: helpers.deps.config.dataDir, log: helpers.deps.log }, checkout, {
      signal: helpers.signal,
    });
    if (!diff.trim()) {
      const why = failed.length
        ? failed.map((f) => `${f.path}: ${f.reason.split('\n')[0]}`).join('; ')
        : 'no edits were proposed';
      throw new Error(
        `the model proposed no change that applied after ${rounds} answer${rounds === 1 ? '' : 's'} (${clip(why, 600)})`,
      );
    }
    // A rename is its old path deleted and its new one created, as files_changed has no other word for it.
    const kinds = applied.flatMap((a): [string, 'modified' | 'created' | 'deleted'][] =>
      a.kind === 'renamed'
        ? [
            [a.from ?? a.path, 'deleted'],
            [a.path, 'created'],
          ]
        : [[a.path, a.kind]],
    );
    const changed = [...new Map(kinds).entries()].map(([path, kind]) => ({ path, kind }));
    return {
      output: {
        diff,
        files_changed: changed,
        edits_applied: applied.length,
        edits_failed: failed.map((f) => ({ path: f.path, reason: clip(f.reason, 1_000) })),
        rounds,
        notes: clip(commentary, 2_000),
        memory_used: memory.map((m) => m.id),
        model: `${model.provider}/${model.modelId}`,
      },
      // A new change: the diff gate and the last validation failure no longer apply to it.
      patch: { changed: true, diffSummary: truncateDiff(diff) },
    };
  };
}
