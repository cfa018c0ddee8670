import type { StepHelpers } from '../step.js';

type Log = (message: string, data?: Record<string, unknown>) => void;

/**
 * A step's log with its `setup output` records (already redacted and throttled by
 * src/environments/setup-output.ts) also reported as the step's progress (`helpers.report`: the
 * runner appends them to the task's log as `running` rows of the step, the validator or the agent
 * fixer setting up its work tree), `{setup_output}`, so they reach the task's SSE stream while
 * setup runs. The reports are made in order, one after the other; `drain` waits for the last, so
 * none lands after the step's own `done` or `failed` row.
 */
export function setupOutputToTaskLog(helpers: StepHelpers): { log: Log; drain(): Promise<void> } {
  let chain: Promise<unknown> = Promise.resolve();
  const log: Log = (message, data) => {
    helpers.log(message, data);
    if (message !== 'setup output' || typeof data?.text !== 'string') return;
    const output = { setup_output: data.text };
    chain = chain
      .then(() => helpers.report(output))
      .catch((err: unknown) => helpers.log('setup output not written to the task log', { error: String(err) }));
  };
  return { log, drain: () => chain.then(() => {}) };
}
