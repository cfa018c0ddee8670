import { rememberTestCommand } from '../feedback/memory-from-feedback.js';
import { rememberedTestCommand } from '../memory/repo-memory.js';
import { repoSettingsFor } from '../repos/repo-settings.js';
import { type ValidatorContextOf, validatorContextFromHelpers } from '../steps/fix/validator.js';
import { contractRegistry, stepFunctions } from '../steps/registry.js';
import type { StepName } from '../step-contract/index.js';
import type { FixStep, StepRegistry } from '../steps/step.js';

/**
 * The validator's (and the agent fixer's) context: the steps' own (the sandbox, the checkout,
 * the toolchain cache) with the account's remembered test command and its settings for the
 * repository, if any.
 */
const validatorContext: ValidatorContextOf = async (payload, helpers) => {
  const { task } = payload;
  return {
    ...(await validatorContextFromHelpers(payload, helpers)),
    testCommand: task.repoUrl ? await rememberedTestCommand(helpers.deps, task.workspaceId, task.repoUrl) : undefined,
    repoSettings: task.repoUrl ? await repoSettingsFor(helpers.deps, task.workspaceId, task.repoUrl) : undefined,
  };
};

/**
 * The steps `emend serve` and `emend worker` run (src/steps/registry.ts): the thinking steps on
 * the model layer, the validator in the sandbox (with the account's test command, remembered
 * when a run passes), the pull request on the code host; for scaffold tasks, the site's plan,
 * its files, and its checks in headless Chromium (src/steps/site).
 */
export function productionSteps(): StepRegistry<StepName> {
  return contractRegistry(stepFunctions(validatorContext, rememberingTestCommand));
}

/**
 * The validator that remembers the test command of a passing run (a failure to store it only
 * logs): the next run on the repository starts from it.
 */
const rememberingTestCommand =
  (step: FixStep<'validator'>): FixStep<'validator'> =>
  async (payload, helpers) => {
    const result = await step(payload, helpers);
    if (result.patch?.passed === true) {
      await rememberTestCommand(helpers.deps, payload.task, result.output).catch((err: unknown) =>
        helpers.deps.log.warn({ err, task: payload.task.id }, 'remembering the test command failed'),
      );
    }
    return result;
  };
