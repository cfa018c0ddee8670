import { rememberedTestCommand } from '../../memory/repo-memory.js';
import { type ValidatorContextOf, validatorStep } from '../../validator/step.js';
import type { StepRegistry } from '../step-types.js';
import { fixerStep } from './fixer.js';
import { inspectorStep } from './inspector.js';
import { locatorStep } from './locator.js';
import { plannerStep } from './planner.js';
import { prStep } from './pr.js';

/** The validator with the account's remembered test command for the repository, if any. */
const validatorContext: ValidatorContextOf = async ({ task }, helpers) => ({
  sandbox: helpers.deps.sandbox,
  workspace: await helpers.workspace(),
  testCommand: task.repoUrl ? await rememberedTestCommand(helpers.deps, task.accountId, task.repoUrl) : undefined,
});

/**
 * The steps `emend serve` and `emend worker` run: the thinking steps on the model layer, the
 * validator in the sandbox, the pull request on the code host.
 */
export function productionSteps(): StepRegistry {
  return {
    planner: plannerStep(),
    locator: locatorStep(),
    inspector: inspectorStep(),
    fixer: fixerStep(),
    validator: validatorStep(validatorContext),
    pr: prStep(),
  };
}
