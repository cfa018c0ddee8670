import { validatorStep } from '../../validator/step.js';
import { PIPELINE, type StepFn, type StepRegistry } from '../step-types.js';

/**
 * The steps `emend serve` and `emend worker` run. The validator runs the repository's tests
 * in the sandbox. The thinking steps (model layer) and the pr step (code host) arrive with
 * their own work; until a step exists here it fails the task at once with a message that
 * says so, rather than pretending to have done anything.
 */
export function productionSteps(): StepRegistry {
  const missing =
    (step: string): StepFn =>
    async () => {
      throw new Error(`the ${step} step is not part of this build yet; tasks cannot run past it`);
    };
  const steps = Object.fromEntries(PIPELINE.map((step) => [step, missing(step)])) as StepRegistry;
  return { ...steps, validator: validatorStep() };
}
