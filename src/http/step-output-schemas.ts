import { z } from 'zod';
import { STEPS, TASK_KINDS, runsFor } from '../step-contract/index.js';

/**
 * The step outputs as JSON Schema for components.schemas, generated from the step contract's
 * zod schemas (OpenAPI 3.1 takes JSON Schema 2020-12 as it is, less the `$schema` keyword):
 * each output under its descriptor's component name, fix outputs first, in pipeline order.
 */
export function stepOutputComponents(): Record<string, object> {
  return Object.fromEntries(
    TASK_KINDS.flatMap((kind) =>
      STEPS.flatMap((step) => {
        const runs = runsFor(step, kind);
        if (!runs) return [];
        const { $schema: _dialect, ...json } = z.toJSONSchema(runs.output, { io: 'output' });
        return [[runs.component, json]];
      }),
    ),
  );
}
