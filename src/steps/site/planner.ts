import type { SiteStep } from '../step.js';
import { fenced } from '../prompt-parts.js';
import { SitePlanSchema } from '../../step-contract/index.js';

const SYSTEM = `You are the planner of emend, a service that builds a small static marketing site from a brief, publishes it at a live URL and can push it to a new repository.
Read the brief and plan a site a person would be glad to publish: who it is for, the sections in order with their real copy (no lorem ipsum, no placeholders), a colour palette with readable contrast, and system font stacks.
If the brief asks for something unsafe or illegal (phishing or credential collection under another name, impersonating a real organisation, selling illegal goods, malware, hate, sexual content involving minors), put the reason in refusal and leave the rest minimal.
Answer with the JSON object only.`;

/** The scaffold planner: brief → site plan (audience, sections with copy, palette, typography), or a refusal. */
export function sitePlannerStep(): SiteStep<'planner'> {
  return async ({ task }, helpers) => {
    const model = await helpers.model();
    const plan = await model.object({
      system: SYSTEM,
      messages: [{ role: 'user', content: `Brief:\n${fenced(task.prompt)}` }],
      schema: SitePlanSchema,
      name: 'site_plan',
      maxOutputTokens: 4_000,
    });
    if (plan.refusal.trim()) throw new Error(`emend does not build this site: ${plan.refusal.trim()}`);
    const { refusal: _refusal, ...rest } = plan;
    return { output: { ...rest, model: `${model.provider}/${model.modelId}` } };
  };
}
