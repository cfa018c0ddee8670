import { z } from 'zod';
import { FixerOutput, InspectorOutput, LocatorOutput, PlannerOutput, PrOutput, ValidatorOutput } from './fix.js';
import type { StepName, TaskKind } from './names.js';
import { SiteFixerOutput, SitePlannerOutput, SiteValidatorOutput } from './site.js';

/** What each step of a fix task produces. */
export const FIX_OUTPUTS = {
  planner: PlannerOutput,
  locator: LocatorOutput,
  inspector: InspectorOutput,
  fixer: FixerOutput,
  validator: ValidatorOutput,
  pr: PrOutput,
} as const satisfies Record<StepName, z.ZodType>;

/** What each step of a scaffold task produces: it has no locator, inspector or pull request. */
export const SITE_OUTPUTS = {
  planner: SitePlannerOutput,
  fixer: SiteFixerOutput,
  validator: SiteValidatorOutput,
} as const satisfies Partial<Record<StepName, z.ZodType>>;

export const OUTPUT_SCHEMAS = { fix: FIX_OUTPUTS, scaffold: SITE_OUTPUTS } as const satisfies Record<TaskKind, object>;

type InferAll<T> = { [K in keyof T]: T[K] extends z.ZodType ? z.infer<T[K]> : never };
/** Each step's output for a kind of task, derived from the schemas. */
export type StepOutputs<K extends TaskKind = 'fix'> = InferAll<(typeof OUTPUT_SCHEMAS)[K]>;
export type FixOutputs = StepOutputs<'fix'>;
export type SiteOutputs = StepOutputs<'scaffold'>;
/** Any step's output, of either kind of task. */
export type StepOutput = FixOutputs[keyof FixOutputs] | SiteOutputs[keyof SiteOutputs];

/**
 * The outputs a task has so far, as read back from the database (tasks.progress). Each step's
 * output is parsed on its own: one that does not parse — a row written before its schema
 * changed, or by hand — is treated as absent, so the step that needs it fails for want of it
 * (or the task runs that step again) instead of a step reading fields that are not there.
 */
const absentUnlessValid = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);

export const FixOutputsSchema = z.object({
  planner: absentUnlessValid(PlannerOutput),
  locator: absentUnlessValid(LocatorOutput),
  inspector: absentUnlessValid(InspectorOutput),
  fixer: absentUnlessValid(FixerOutput),
  validator: absentUnlessValid(ValidatorOutput),
  pr: absentUnlessValid(PrOutput),
});

export const SiteOutputsSchema = z.object({
  planner: absentUnlessValid(SitePlannerOutput),
  fixer: absentUnlessValid(SiteFixerOutput),
  validator: absentUnlessValid(SiteValidatorOutput),
});

/** A fix task's outputs from stored JSON; anything that is not an object reads as no outputs. */
export const parseFixOutputs = (raw: unknown): Partial<FixOutputs> => FixOutputsSchema.catch(() => ({})).parse(raw);

/** A scaffold task's outputs from stored JSON; anything that is not an object reads as no outputs. */
export const parseSiteOutputs = (raw: unknown): Partial<SiteOutputs> => SiteOutputsSchema.catch(() => ({})).parse(raw);
