import { PlanSchema } from '../../step-contract/index.js';
import { recall } from '../../memory/repo-memory.js';
import type { FixStep } from '../step.js';
import { repoOverview } from './overview.js';
import { fenced, memorySection } from '../prompt-parts.js';
import { clip } from '../../text/clip.js';

const SYSTEM = `You are the planner of emend, a service that makes code changes in a repository on request and opens a pull request.
Read the request and the overview of the repository, then write a short, concrete plan for the smallest change that does what is asked.
- Name files by their repository-relative paths as they appear in the tree; say so when a file is new.
- Prefer fixing the cause over working around it; keep behaviour that the request does not mention.
- Plan a test for the change when the repository has tests.
- Follow the lessons from earlier tasks when they apply.
Answer with the JSON object only.`;

const MEMORY_TOKENS = 2_000;

/** The planner: request + repository overview + repo memory → plan. */
export function plannerStep(): FixStep<'planner'> {
  return async ({ task }, helpers) => {
    if (task.taskType !== 'fix')
      throw new Error(`the planner for ${task.taskType} tasks is not part of this build yet`);
    const model = await helpers.model();
    const ws = await helpers.workspace();
    const overview = repoOverview(ws.dir);
    const memory = await recall(helpers.deps, {
      accountId: task.accountId,
      repo: task.repoUrl,
      prompt: task.prompt,
      tokenBudget: MEMORY_TOKENS,
    });
    const languages =
      overview.languages
        .slice(0, 6)
        .map((l) => `${l.language} (${l.files})`)
        .join(', ') || 'none recognised';
    const user = [
      `Request:\n${fenced(task.prompt)}`,
      '',
      `Repository: ${task.repoUrl} (branch ${task.baseBranch}, ${overview.files} files)`,
      `Languages: ${languages}`,
      `Test command: ${overview.testCommand ?? 'none found'}`,
      `Tree:\n${fenced(overview.tree)}`,
      overview.readme ? `README (start):\n${fenced(clip(overview.readme, 4000))}` : 'README: none',
      memorySection(memory),
    ].join('\n');
    const plan = await model.object({
      system: SYSTEM,
      messages: [{ role: 'user', content: user }],
      schema: PlanSchema,
      name: 'plan',
      maxOutputTokens: 2_000,
    });
    helpers.log('plan made', { files: plan.likely_files.length, memory: memory.length });
    return {
      output: {
        ...plan,
        likely_files: plan.likely_files.slice(0, 10),
        memory_used: memory.map((m) => m.id),
        model: `${model.provider}/${model.modelId}`,
      },
    };
  };
}
