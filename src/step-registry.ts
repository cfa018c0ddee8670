import { rememberingTestCommand } from './feedback/memory-from-feedback.js';
import { rememberedTestCommand } from './memory/repo-memory.js';
import { type ValidatorContextOf, validatorStep } from './steps/fix/validator.js';
import { siteFixerStep } from './steps/site/fixer.js';
import { sitePlannerStep } from './steps/site/planner.js';
import { siteValidatorStep } from './steps/site/validator.js';
import type { StepFn, StepRegistry } from './steps/step.js';
import { fixerStep } from './steps/fix/fixer.js';
import { inspectorStep } from './steps/fix/inspector.js';
import { locatorStep } from './steps/fix/locator.js';
import { plannerStep } from './steps/fix/planner.js';
import { prStep } from './steps/fix/pr.js';

/** The validator with the account's remembered test command for the repository, if any. */
const validatorContext: ValidatorContextOf = async ({ task }, helpers) => ({
  sandbox: helpers.deps.sandbox,
  workspace: await helpers.workspace(),
  testCommand: task.repoUrl ? await rememberedTestCommand(helpers.deps, task.accountId, task.repoUrl) : undefined,
  testTimeoutMs: helpers.deps.config.validator.testTimeoutMs,
});

/**
 * The steps `emend serve` and `emend worker` run: the thinking steps on the model layer, the
 * validator in the sandbox, the pull request on the code host; for scaffold tasks, the site's
 * plan, its files, and its checks in headless Chromium (src/scaffold).
 */
export function productionSteps(): StepRegistry {
  return {
    planner: byTaskType({ fix: plannerStep(), scaffold: sitePlannerStep() }),
    locator: locatorStep(),
    inspector: inspectorStep(),
    fixer: byTaskType({ fix: fixerStep(), scaffold: siteFixerStep() }),
    validator: byTaskType({
      fix: rememberingTestCommand(validatorStep(validatorContext)),
      scaffold: siteValidatorStep(),
    }),
    pr: prStep(),
  };
}

/** A step that does different work for fix and scaffold tasks. */
const byTaskType =
  (steps: { fix: StepFn; scaffold: StepFn }): StepFn =>
  (payload, helpers) =>
    (payload.task.taskType === 'scaffold' ? steps.scaffold : steps.fix)(payload, helpers);
