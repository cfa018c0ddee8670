import { type Pipeline, type TaskKind, runsFor } from './descriptor.js';
import { STEPS, type StepName } from './steps.js';

export { TASK_KINDS, type TaskKind } from './descriptor.js';
export type { StepName } from './steps.js';

type Step = (typeof STEPS)[number];
type Names<T extends readonly { name: string }[]> = { -readonly [I in keyof T]: T[I]['name'] };

/** The pipeline's steps, in the order a task runs them: the one list every layer names them from. */
export const STEP_NAMES = STEPS.map((s) => s.name) as unknown as Readonly<Names<typeof STEPS>>;

/** The steps that call a model (their model is chosen per step; the others are refused one). */
export type ModelStep = Extract<Step, { model: true }>['name'];
export const MODEL_STEPS: readonly ModelStep[] = STEPS.flatMap((s) => (s.model ? [s.name] : []));

/** The step a validation that did not pass sends the task back to, while retries remain. */
export type ReworkStep = Extract<Step, { rework: true }>['name'];
export const REWORK_STEP = STEPS.find((s) => 'rework' in s)?.name as ReworkStep;

/** The steps a demo token's tasks of a kind run, in order (the rest are skipped). */
export const demoSteps = (kind: TaskKind, pipeline: Pipeline = STEPS): string[] =>
  pipeline.flatMap((s) => (runsFor(s, kind)?.demo ? [s.name] : []));
/** The steps a demo token's fix tasks run (the API's demo limits list them). */
export const DEMO_STEPS = demoSteps('fix') as StepName[];

export const isStepName = (value: unknown): value is StepName => STEP_NAMES.some((s) => s === value);
export const isModelStep = (value: unknown): value is ModelStep => MODEL_STEPS.some((s) => s === value);

/**
 * The step the diff gate stands before (the validator), and the fix steps before it: what a
 * continued preview reuses from its parent, since its diff was already seen; the child starts at
 * the first of them it lacks, else at the gated step.
 */
const diffGated = STEPS.findIndex((s) => 'gateBefore' in s && s.gateBefore === 'diff');
export const DIFF_GATED_STEP: StepName = STEPS[diffGated]!.name;
export const REUSED_STEPS: readonly StepName[] = STEPS.slice(0, diffGated).flatMap((s) =>
  runsFor(s, 'fix') ? [s.name] : [],
);
