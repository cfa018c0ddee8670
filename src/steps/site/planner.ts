import type { StepFn } from '../step.js';
import { fenced } from '../prompt-parts.js';
import { SITE_PLANNER_SYSTEM, SitePlanSchema } from './plan.js';

/** The scaffold planner: brief → site plan (audience, sections with copy, palette, typography), or a refusal. */
export function sitePlannerStep(): StepFn {
  return async ({ task }, helpers) => {
    const model = await helpers.model();
    const plan = await model.object({
      system: SITE_PLANNER_SYSTEM,
      messages: [{ role: 'user', content: `Brief:\n${fenced(task.prompt)}` }],
      schema: SitePlanSchema,
      name: 'site_plan',
      maxOutputTokens: 4_000,
    });
    if (plan.refusal.trim()) throw new Error(`emend does not build this site: ${plan.refusal.trim()}`);
    const { refusal: _refusal, ...rest } = plan;
    return {
      output: {
        ...rest,
        // the fields every plan shows (the API's approve gate and the panel read these)
        summary: `${plan.title}: ${plan.tagline}`,
        steps: plan.sections.map((s) => `${s.heading}: ${s.purpose}`),
        model: `${model.provider}/${model.modelId}`,
      },
    };
  };
}
