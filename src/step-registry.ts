import { rememberTestCommand } from './feedback/memory-from-feedback.js';
import { rememberedTestCommand } from './memory/repo-memory.js';
import { repoSettingsFor } from './repos/repo-settings.js';
import { fixerStep } from './steps/fix/fixer.js';
import { inspectorStep } from './steps/fix/inspector.js';
import { locatorStep } from './steps/fix/locator.js';
import { plannerStep } from './steps/fix/planner.js';
import { prStep } from './steps/fix/pr.js';
import { type ValidatorContextOf, validatorStep } from './steps/fix/validator.js';
import { siteFixerStep } from './steps/site/fixer.js';
import { sitePlannerStep } from './steps/site/planner.js';
import { siteValidatorStep } from './steps/site/validator.js';
import type { FixPayload, FixStep, RegistryStep, SitePayload, StepFn, StepRegistry } from './steps/step.js';

/** The validator with the account's remembered test command and its settings for the repository, if any. */
const validatorContext: ValidatorContextOf = async ({ task }, helpers) => ({
  sandbox: helpers.deps.sandbox,
  workspace: await helpers.workspace(),
  testCommand: task.repoUrl ? await rememberedTestCommand(helpers.deps, task.accountId, task.repoUrl) : undefined,
  repoSettings: task.repoUrl ? await repoSettingsFor(helpers.deps, task.accountId, task.repoUrl) : undefined,
  testTimeoutMs: helpers.deps.config.validator.testTimeoutMs,
});

/**
 * The steps `emend serve` and `emend worker` run: the thinking steps on the model layer, the
 * validator in the sandbox, the pull request on the code host; for scaffold tasks, the site's
 * plan, its files, and its checks in headless Chromium (src/steps/site).
 */
export function productionSteps(): StepRegistry {
  return {
    planner: byTaskType({ fix: plannerStep(), scaffold: sitePlannerStep() }),
    locator: fixOnly('locator', locatorStep()),
    inspector: fixOnly('inspector', inspectorStep()),
    fixer: byTaskType({ fix: fixerStep(), scaffold: siteFixerStep() }),
    validator: byTaskType({
      fix: rememberingTestCommand(validatorStep(validatorContext)),
      scaffold: siteValidatorStep(),
    }),
    pr: fixOnly('pr', prStep()),
  };
}

/** A step that does different work for fix and scaffold tasks, each typed by its own payload. */
const byTaskType =
  (steps: { fix: StepFn<FixPayload, object>; scaffold: StepFn<SitePayload, object> }): RegistryStep =>
  (payload, helpers) =>
    payload.kind === 'scaffold' ? steps.scaffold(payload, helpers) : steps.fix(payload, helpers);

/** A step only fix tasks have (the runner skips it for scaffold tasks before it could get here). */
const fixOnly =
  (name: string, step: StepFn<FixPayload, object>): RegistryStep =>
  async (payload, helpers) => {
    if (payload.kind !== 'fix') throw new Error(`a ${payload.kind} task has no ${name} step`);
    return step(payload, helpers);
  };

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
