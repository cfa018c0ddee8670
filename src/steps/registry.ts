import { type Pipeline, STEPS, type StepName, type StepOf, type TaskKind } from '../step-contract/index.js';
import { attemptedFixerStep } from './fix/attempts.js';
import { chosenFixerStep } from './fix/choose-fixer.js';
import { inspectorStep } from './fix/inspector.js';
import { locatorStep } from './fix/locator.js';
import { plannerStep } from './fix/planner.js';
import { prStep } from './fix/pr.js';
import { type ValidatorContextOf, validatorStep } from './fix/validator.js';
import { siteFixerStep } from './site/fixer.js';
import { sitePlannerStep } from './site/planner.js';
import { siteValidatorStep } from './site/validator.js';
import type { FixStep, RegistryStep, SiteStep, StepFn, StepPayload, StepRegistry } from './step.js';

/** A function for every step a kind of task runs (the contract's descriptors say which), each typed by its output. */
export interface StepFunctions {
  fix: { [S in StepOf<'fix'>]: FixStep<S> };
  scaffold: { [S in StepOf<'scaffold'>]: SiteStep<S> };
}

/**
 * Every step's function, by the kind of task that runs it: where a step is registered. The
 * service (src/runtime/step-registry.ts) gives the validator the account's remembered test
 * command, and `judging` to wrap the validator (it remembers a passing run's command); `emend
 * eval` runs them as they are. The fixer's attempts are judged by that same validator.
 */
export const stepFunctions = (
  validatorContext?: ValidatorContextOf,
  judging: (validator: FixStep<'validator'>) => FixStep<'validator'> = (v) => v,
): StepFunctions => {
  const validator = judging(validatorStep(validatorContext));
  return {
    fix: {
      planner: plannerStep(),
      locator: locatorStep(),
      inspector: inspectorStep(),
      fixer: attemptedFixerStep(chosenFixerStep(validatorContext), validator),
      validator,
      pr: prStep(),
    },
    scaffold: { planner: sitePlannerStep(), fixer: siteFixerStep(), validator: siteValidatorStep() },
  };
};

type AnyKindFunctions = { readonly [K in TaskKind]: Readonly<Record<string, StepFn<never, object>>> };

/**
 * The registry the runner drives: the pipeline, and for each of its steps one function that
 * runs the kind of task's own (the runner skips a step a kind does not run before it gets here).
 */
export function registryOf(functions: StepFunctions | AnyKindFunctions, pipeline: Pipeline = STEPS): StepRegistry {
  const byKind = functions as AnyKindFunctions;
  const run =
    (name: string): RegistryStep =>
    async (payload, helpers) => {
      const fn = byKind[payload.kind][name] as StepFn<StepPayload, object> | undefined;
      if (!fn) throw new Error(`a ${payload.kind} task has no ${name} step`);
      return fn(payload, helpers);
    };
  return Object.fromEntries(pipeline.map((s) => [s.name, run(s.name)]));
}

/** The contract's steps, each with its function: built from STEPS, so every step name has one. */
export const contractRegistry = (functions: StepFunctions): StepRegistry<StepName> =>
  registryOf(functions) as StepRegistry<StepName>;
