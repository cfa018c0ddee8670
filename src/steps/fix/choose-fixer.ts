import type { FixStep } from '../step.js';
import { agentFixerStep } from './agent/agent-fixer.js';
import { fixerStep } from './fixer.js';
import type { ValidatorContextOf } from './validator.js';

/**
 * The fixer step: the pipeline's one-shot fixer, or the agent (docs/agent.md), as the task stores
 * it (decided when it was created: its own choice, else the account's default, else the
 * operator's EMEND_FIXER, within what its plan offers). Both take the same inputs and give the
 * same output, so the validator, the gates and the pr step do not know which ran. The agent's
 * commands run in the environment the validator builds, from the same context (the account's
 * test command and settings).
 */
export function chosenFixerStep(validatorContext?: ValidatorContextOf): FixStep<'fixer'> {
  const pipeline = fixerStep();
  const agent = agentFixerStep(validatorContext);
  return (payload, helpers) => (payload.task.fixer === 'agent' ? agent(payload, helpers) : pipeline(payload, helpers));
}
