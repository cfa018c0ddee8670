import { z } from 'zod';
import { STEPS, type StepDescriptor } from '../../src/step-contract/index.js';
import type { RegistryStep, StepRegistry } from '../../src/steps/step.js';

/**
 * A step the contract does not have (its six names are fixed), added the way any new step is:
 * a descriptor entry, a function, a registration. Nothing else in src/ learns of it: the
 * runner, the gates, the skips and the rework read the descriptor.
 */

// The descriptor entry: a check of the fixer's change, for fix tasks, that calls no model.
export const CheckerOutput = z.object({ checked: z.number().int(), verdict: z.boolean() });
export const CHECKER = {
  name: 'checker',
  kinds: {
    fix: { output: CheckerOutput, component: 'CheckerOutput' },
    scaffold: { skip: 'a scaffold task has no change to check' },
  },
  model: false,
} as const satisfies StepDescriptor;
/** The contract's pipeline with the checker after the fixer. */
export const WITH_CHECKER = STEPS.flatMap((s): StepDescriptor[] => (s.name === 'fixer' ? [s, CHECKER] : [s]));

// The function: passes the change from the fixer's second round on, sending the first one back.
export const checkerStep: RegistryStep = async (payload) => {
  const checked = payload.kind === 'fix' ? (payload.outputs.fixer?.files_changed.length ?? 0) : 0;
  const verdict = payload.task.retryCount > 0;
  return { output: { checked, verdict }, patch: { passed: verdict } };
};

// The registration: the checker beside the other steps' functions.
export const withChecker = (steps: StepRegistry): StepRegistry => ({ ...steps, checker: checkerStep });
