import { z } from 'zod';
import { type Pipeline, type TaskKind, runsFor } from './descriptor.js';
import { type OutputSchemaOf, STEPS, type StepOf } from './steps.js';

/** Each step's output schema for a kind of task, by step name, from a pipeline's descriptors. */
export const outputSchemasOf = (kind: TaskKind, pipeline: Pipeline = STEPS): Record<string, z.ZodType> =>
  Object.fromEntries(
    pipeline.flatMap((step) => {
      const runs = runsFor(step, kind);
      return runs ? [[step.name, runs.output]] : [];
    }),
  );

type SchemasOf<K extends TaskKind> = { [S in StepOf<K>]: OutputSchemaOf<K, S> };

/** What each step of a fix task produces. */
export const FIX_OUTPUTS = outputSchemasOf('fix') as SchemasOf<'fix'>;
/** What each step of a scaffold task produces: it has no locator, inspector or pull request. */
export const SITE_OUTPUTS = outputSchemasOf('scaffold') as SchemasOf<'scaffold'>;

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

const storedOutputs = (schemas: Record<string, z.ZodType>) =>
  z.object(Object.fromEntries(Object.entries(schemas).map(([step, schema]) => [step, absentUnlessValid(schema)])));

export const FixOutputsSchema = storedOutputs(FIX_OUTPUTS);
export const SiteOutputsSchema = storedOutputs(SITE_OUTPUTS);

/** A fix task's outputs from stored JSON; anything that is not an object reads as no outputs. */
export const parseFixOutputs = (raw: unknown): Partial<FixOutputs> =>
  FixOutputsSchema.catch(() => ({})).parse(raw) as Partial<FixOutputs>;

/** A scaffold task's outputs from stored JSON; anything that is not an object reads as no outputs. */
export const parseSiteOutputs = (raw: unknown): Partial<SiteOutputs> =>
  SiteOutputsSchema.catch(() => ({})).parse(raw) as Partial<SiteOutputs>;
