/** The pipeline's steps, in the order a task runs them: the one list every layer names them from. */
export const STEP_NAMES = ['planner', 'locator', 'inspector', 'fixer', 'validator', 'pr'] as const;
export type StepName = (typeof STEP_NAMES)[number];

/** The steps that call a model (their model is chosen per step; the others are refused one). */
export const MODEL_STEPS = ['planner', 'locator', 'inspector', 'fixer'] as const satisfies readonly StepName[];
export type ModelStep = (typeof MODEL_STEPS)[number];

/** The step a validation that did not pass sends the task back to, while retries remain. */
export const REWORK_STEP = 'fixer' satisfies StepName;

/** The kinds of task, whose steps produce different outputs (a site's plan is not a fix's plan). */
export const TASK_KINDS = ['fix', 'scaffold'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

export const isStepName = (value: unknown): value is StepName => STEP_NAMES.some((s) => s === value);
export const isModelStep = (value: unknown): value is ModelStep => MODEL_STEPS.some((s) => s === value);
