import { rememberedTestCommand } from '../../memory/repo-memory.js';
import { type ValidatorContextOf, validatorStep } from '../../validator/step.js';
import type { StepRegistry } from '../step-types.js';
import { fixerStep } from './fixer.js';
import { inspectorStep } from './inspector.js';
import { locatorStep } from './locator.js';
import { plannerStep } from './planner.js';

/** The validator with the account's remembered test command for the repository, if any. */
const validatorContext: ValidatorContextOf = async ({ task }, helpers) => ({
  sandbox: helpers.deps.sandbox,
  workspace: await helpers.workspace(),
  testCommand: task.repoUrl ? await rememberedTestCommand(helpers.deps, task.accountId, task.repoUrl) : undefined,
});

/**
 * The steps `emend serve` and `emend worker` run: the thinking steps on the model layer, the
 * validator in the sandbox. The pr step arrives with the code-host work; until then it fails
 * the task at once with a message that says so, rather than pretending to have done anything.
 */
export function productionSteps(): StepRegistry {
  return {
    planner: plannerStep(),
    locator: locatorStep(),
    inspector: inspectorStep(),
    fixer: fixerStep(),
    validator: validatorStep(validatorContext),
    pr: async () => {
      throw new Error('the pr step is not part of this build yet; run the task in preview mode');
    },
  };
}
