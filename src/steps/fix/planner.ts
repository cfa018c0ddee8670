import { PlanSchema } from '../../step-contract/index.js';
import { recall } from '../../memory/repo-memory.js';
import type { FixStep } from '../step.js';
import { repoOverview } from './overview.js';
import { conventions, existingOrNew, rankedPaths } from './grounding.js';
import { fenced, memorySection } from '../prompt-parts.js';
import { clip } from '../../text/clip.js';
import { estimateTokens } from '../../llm/usage.js';

const SYSTEM = `You are the planner of emend, a service that makes code changes in a repository on request and opens a pull request.
Read the request and the overview of the repository, then write a short, concrete plan for the smallest change that does what is asked.
- The overview lists the files a search ranks highest for the request; you have not read them, so the plan is advice for the steps that will.
- Name files by their repository-relative paths as they appear in the ranked list or the tree; list the files the change creates in new_files too.
- Follow the repository's conventions files (contributing guides, agent instructions, editor and lint settings) when they are shown.
- Prefer fixing the cause over working around it; keep behaviour that the request does not mention.
- Plan a test for the change when the repository has tests.
- Follow the lessons from earlier tasks when they apply.
Answer with the JSON object only.`;

const MEMORY_TOKENS = 2_000;
const OUTPUT_TOKENS = 2_000;

/**
 * Characters the conventions files may fill: what the model's window leaves after the rest of the
 * prompt and the answer (the inverse of estimateTokens, less a margin), so a small local model gets
 * fewer of them rather than a prompt that cannot fit.
 */
function conventionsRoom(contextWindow: number, promptChars: number): number {
  const left = contextWindow - OUTPUT_TOKENS - estimateTokens(promptChars);
  return Math.max(0, Math.floor((left / 1.1) * 4) - 1_000);
}

/** The planner: request + repository overview, ranked paths, conventions + repo memory → plan. */
export function plannerStep(): FixStep<'planner'> {
  return async ({ task }, helpers) => {
    if (task.taskType !== 'fix')
      throw new Error(`the planner for ${task.taskType} tasks is not part of this build yet`);
    const model = await helpers.model();
    const checkout = await helpers.checkout();
    const overview = repoOverview(checkout.dir);
    const ranked = await rankedPaths(checkout.dir, task.prompt, helpers.deps.config.dataDir);
    const memory = await recall(helpers.deps, {
      workspaceId: task.workspaceId,
      repo: task.repoUrl,
      prompt: task.prompt,
      tokenBudget: MEMORY_TOKENS,
    });
    const languages =
      overview.languages
        .slice(0, 6)
        .map((l) => `${l.language} (${l.files})`)
        .join(', ') || 'none recognised';
    const head = [
      `Request:\n${fenced(task.prompt)}`,
      '',
      `Repository: ${task.repoUrl} (branch ${task.baseBranch}, ${overview.files} files)`,
      `Languages: ${languages}`,
      `Test command: ${overview.testCommand ?? 'none found'}`,
      `Tree:\n${fenced(overview.tree)}`,
      ranked,
      overview.readme ? `README (start):\n${fenced(clip(overview.readme, 4000))}` : 'README: none',
    ].join('\n');
    const tail = memorySection(memory);
    const rules = conventions(
      checkout.dir,
      conventionsRoom(model.contextWindow, SYSTEM.length + head.length + tail.length),
    );
    const user = [head, rules ? `Conventions files:\n${rules}` : 'Conventions files: none', tail].join('\n');
    const plan = await model.object({
      system: SYSTEM,
      messages: [{ role: 'user', content: user }],
      schema: PlanSchema,
      name: 'plan',
      maxOutputTokens: OUTPUT_TOKENS,
    });
    const { kept, dropped } = existingOrNew(checkout.dir, plan.likely_files, plan.new_files);
    if (dropped.length) helpers.log('likely files not in the checkout dropped (not marked new)', { dropped });
    helpers.log('plan made', { files: kept.length, memory: memory.length });
    return {
      output: {
        ...plan,
        likely_files: kept.slice(0, 10),
        new_files: plan.new_files.map((f) => f.replace(/^\.\//, '')).filter((f) => kept.includes(f)),
        memory_used: memory.map((m) => m.id),
        model: `${model.provider}/${model.modelId}`,
      },
    };
  };
}
