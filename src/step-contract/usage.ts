import { z } from 'zod';

/**
 * What the runner adds to any step's output when the step called a model: how many calls it
 * made, and how many answers had to be asked for again for not matching their schema.
 */
export const modelUsage = {
  model_calls: z.number().int().optional(),
  malformed_answers: z.number().int().optional(),
};
