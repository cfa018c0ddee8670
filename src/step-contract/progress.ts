import { z } from 'zod';
import { STEP_NAMES } from './names.js';

/** An output that is not even an object is no step's: it is dropped with the rest of what does not parse. */
const isObjectEntry = (entry: [string, unknown]): entry is [string, Record<string, unknown>] =>
  typeof entry[1] === 'object' && entry[1] !== null && !Array.isArray(entry[1]);

/**
 * The change's verdict, given already by the step that made it (docs/agent.md, "Attempts"): the
 * judging step's output and its `passed`, which the loop takes as that step's result.
 */
export const JudgedChange = z.object({
  output: z.record(z.string(), z.unknown()),
  passed: z.boolean().optional(),
  /** Where the verdict came from, for the judging step's log record (`attempt 2`). */
  from: z.string(),
});
export type JudgedChange = z.infer<typeof JudgedChange>;

/**
 * What the runner keeps in tasks.progress so any worker can carry on after the last finished
 * step. The outputs stay stored JSON here: what they hold depends on the kind of task, so they
 * are parsed where a kind is known (parseFixOutputs, parseSiteOutputs), as is `failure`.
 */
// Every fallback is made fresh (a function, not a value): the runner mutates the progress it
// reads, and a shared default object would carry one task's outputs into the next.
export const Progress = z.object({
  outputs: z
    .record(z.string(), z.unknown())
    .catch(() => ({}))
    .transform((all) => Object.fromEntries(Object.entries(all).filter(isObjectEntry))),
  /** The step the run goes on with, or 'end': a name of the pipeline the task runs (readProgress checks it). */
  next: z.string().catch('planner'),
  /** The validator output the next fixer run should address. */
  failure: z.unknown().optional(),
  /** Gates already approved for the current outputs. */
  approved: z.object({ plan: z.boolean().optional(), diff: z.boolean().optional() }).catch(() => ({})),
  /** The commit the run's checkout started from; a resumed run checks out the same one. */
  baseCommit: z.string().optional().catch(undefined),
  /** The current change's verdict, already given (TaskPatch.judged): the judging step takes it instead of running. */
  judged: JudgedChange.optional().catch(undefined),
});
export type Progress = z.infer<typeof Progress>;

/**
 * A task's progress from its stored row. A row that does not parse (none yet, or written by
 * an older build) reads as a task that has not started: each part that does not fit falls
 * back to its start value on its own; a next step the pipeline does not have, to its first.
 */
export const readProgress = (raw: unknown, steps: readonly string[] = STEP_NAMES): Progress => {
  const progress = Progress.catch(() => Progress.parse({})).parse(raw ?? {});
  if (progress.next !== 'end' && !steps.includes(progress.next)) progress.next = steps[0] ?? 'end';
  return progress;
};
