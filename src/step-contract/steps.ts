import { FixerOutput, InspectorOutput, LocatorOutput, PlannerOutput, PrOutput, ValidatorOutput } from './fix.js';
import type { Pipeline } from './descriptor.js';
import { SiteFixerOutput, SitePlannerOutput, SiteValidatorOutput } from './site.js';

const NO_REPOSITORY = { skip: 'a scaffold task has no repository to search' };

/**
 * The pipeline's steps, in the order a task runs them: one entry per step, and every list of
 * steps (names, model steps, demo steps, outputs, OpenAPI components, skips, gates) read from it.
 */
export const STEPS = [
  {
    name: 'planner',
    kinds: {
      fix: { output: PlannerOutput, component: 'PlannerOutput', demo: true },
      scaffold: { output: SitePlannerOutput, component: 'SitePlannerOutput', demo: true },
    },
    model: true,
    gateAfter: 'plan',
  },
  {
    name: 'locator',
    kinds: { fix: { output: LocatorOutput, component: 'LocatorOutput', demo: true }, scaffold: NO_REPOSITORY },
    model: true,
  },
  {
    name: 'inspector',
    kinds: { fix: { output: InspectorOutput, component: 'InspectorOutput', demo: true }, scaffold: NO_REPOSITORY },
    model: true,
  },
  {
    name: 'fixer',
    kinds: {
      fix: { output: FixerOutput, component: 'FixerOutput' },
      scaffold: { output: SiteFixerOutput, component: 'SiteFixerOutput' },
    },
    model: true,
    rework: true,
  },
  {
    name: 'validator',
    kinds: {
      fix: { output: ValidatorOutput, component: 'ValidatorOutput' },
      // A fix that did not pass still becomes a draft PR for a person to judge; a site that did
      // not pass is not published at all.
      scaffold: {
        output: SiteValidatorOutput,
        component: 'SiteValidatorOutput',
        failedVerdictEnds: 'the site did not pass validation; see the validator step for the problems',
      },
    },
    model: false,
    gateBefore: 'diff',
    judge: true,
  },
  {
    name: 'pr',
    kinds: {
      fix: { output: PrOutput, component: 'PrOutput' },
      scaffold: {
        skip: 'a scaffold task publishes its site; POST /v1/tasks/{id}/deploy-git pushes it to a new repository',
      },
    },
    model: false,
    skippedInPreview: 'preview mode opens no pull request',
  },
] as const satisfies Pipeline;

type Step = (typeof STEPS)[number];
export type StepName = Step['name'];
/** The steps that run for a kind of task, by name. */
export type StepOf<K extends 'fix' | 'scaffold'> = Extract<Step, { kinds: { [P in K]: { output: unknown } } }>['name'];
/** A step's output schema for a kind of task. */
export type OutputSchemaOf<K extends 'fix' | 'scaffold', S extends string> = Extract<
  Step,
  { name: S }
>['kinds'][K] extends { output: infer O }
  ? O
  : never;
/** The steps that a preview task runs, for a kind. */
export type PreviewStepOf<K extends 'fix' | 'scaffold'> = Exclude<
  StepOf<K>,
  Extract<Step, { skippedInPreview: string }>['name']
>;
