import { InsightsSchema } from '../../step-contract/index.js';
import type { FixStep } from '../step.js';
import { viewFiles } from './file-views.js';
import { filesBudget } from './fixer-context.js';
import { fenced } from '../prompt-parts.js';

const SYSTEM = `You are the inspector of emend. You are shown a change request, its plan, and the files most likely involved (with line numbers; large files as an outline plus the relevant spans).
For each file, say how relevant it is and exactly which functions, classes or blocks must change, with their line ranges and what to change there.
Write the summary for a person: plain sentences naming files and functions, no filler. Answer with the JSON object only.`;

const OUTPUT_TOKENS = 4_000;
/** Answers one call may take: a malformed one goes back with the reason (ModelClient.object). */
const ATTEMPTS = 3;

/** The inspector: for each located file, insights {file, relevance, symbols and line ranges, notes} and a summary. */
export function inspectorStep(): FixStep<'inspector'> {
  return async ({ task, outputs }, helpers) => {
    const checkout = await helpers.checkout();
    const selected = (outputs.locator?.selected ?? []).slice(0, helpers.limits.maxFiles);
    if (selected.length === 0) throw new Error('the locator found no files to inspect');
    const plan = outputs.planner;
    const request = `${task.prompt}\n${plan?.summary ?? ''}\n${(plan?.steps ?? []).join('\n')}`;
    const model = await helpers.model();
    const head = [
      `Request:\n${fenced(task.prompt)}`,
      plan?.summary
        ? `Plan: ${plan.summary}${plan.steps?.length ? `\n${plan.steps.map((s, i) => `${i + 1}. ${s}`).join('\n')}` : ''}`
        : '',
    ];
    // The views get what the model's window leaves (each view's heading and fence counted in `rest`).
    const rest = SYSTEM.length + head.join('\n\n').length + 120 * selected.length;
    const budget = filesBudget({
      contextTokens: model.contextWindow,
      outputTokens: OUTPUT_TOKENS,
      rounds: ATTEMPTS,
      rest,
    });
    const views = await viewFiles(checkout.dir, selected, request, budget);
    const user = [
      ...head,
      ...views.map((v) => `## ${v.path} (${v.lines} lines${v.whole ? '' : ', outline and spans'})\n${fenced(v.text)}`),
    ].join('\n\n');
    const answer = await model.object({
      system: SYSTEM,
      messages: [{ role: 'user', content: user }],
      schema: InsightsSchema,
      name: 'insights',
      maxOutputTokens: OUTPUT_TOKENS,
      attempts: ATTEMPTS,
    });
    // Only files that were shown, with line ranges that exist in them.
    const shown = new Map(views.map((v) => [v.path, v]));
    const insights = answer.insights
      .filter((i) => shown.has(i.file))
      .map((i) => {
        const lines = shown.get(i.file)!.lines;
        const clamp = (n: number) => Math.min(Math.max(1, n), lines);
        return {
          ...i,
          symbols: i.symbols.map((s) => ({
            ...s,
            start_line: clamp(Math.min(s.start_line, s.end_line)),
            end_line: clamp(Math.max(s.start_line, s.end_line)),
          })),
        };
      });
    return {
      output: {
        summary: answer.summary,
        insights,
        files: views.map((v) => v.path),
        model: `${model.provider}/${model.modelId}`,
      },
    };
  };
}
