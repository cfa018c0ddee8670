import { PIPELINE, type StepFn, type StepRegistry } from '../step-types.js';

/**
 * The steps `emend serve` and `emend worker` run. The engine is complete; the thinking
 * steps (model layer), the validator (sandbox) and the pr step (code host) arrive with
 * their own work. Until a step exists here it fails the task at once with a message that
 * says so, rather than pretending to have done anything.
 */
export function productionSteps(): StepRegistry {
  const missing =
    (step: string): StepFn =>
    async () => {
      throw new Error(`the ${step} step is not part of this build yet; tasks cannot run past it`);
    };
  return Object.fromEntries(PIPELINE.map((step) => [step, missing(step)])) as StepRegistry;
}
