import { z } from 'zod';
import {
  FixerOutput,
  InspectorOutput,
  LocatorOutput,
  PlannerOutput,
  PrOutput,
  SiteFixerOutput,
  SitePlannerOutput,
  SiteValidatorOutput,
  ValidatorOutput,
} from '../step-contract/index.js';

/** Each step's output by the name the OpenAPI document (and the panel's generated types) give it. */
const STEP_OUTPUT_COMPONENTS = {
  PlannerOutput,
  LocatorOutput,
  InspectorOutput,
  FixerOutput,
  ValidatorOutput,
  PrOutput,
  SitePlannerOutput,
  SiteFixerOutput,
  SiteValidatorOutput,
};

/**
 * The step outputs as JSON Schema for components.schemas, generated from the step contract's
 * zod schemas (OpenAPI 3.1 takes JSON Schema 2020-12 as it is, less the `$schema` keyword).
 */
export function stepOutputComponents(): Record<string, object> {
  return Object.fromEntries(
    Object.entries(STEP_OUTPUT_COMPONENTS).map(([name, schema]) => {
      const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: 'output' });
      return [name, json];
    }),
  );
}
