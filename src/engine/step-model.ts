import type { BillingPlanName } from '../config/billing-plans.js';
import type { Deps } from '../deps.js';
import { ModelClient } from '../llm/client.js';
import { chooseModel } from '../workspaces/model-credentials.js';
import { languageModel } from '../llm/providers.js';
import { SpendStopped, UsageMeter } from '../llm/usage.js';
import type { Task } from '../tasks/service.js';
import { isModelStep } from '../step-contract/names.js';
import { taskSecrets } from './task-secrets.js';

/**
 * One step's model, made on first use: the key is chosen (and a BYOK key decrypted) only
 * inside the worker and only when the step actually calls a model. `spent` reports what the
 * step's calls used, for the step's log record and the task's totals. The client is given every
 * secret the service knows for the task, read when it is made, and redacts them from each request.
 * `billed` (the runner's) records each call's cost where the spend limits count it and says when a
 * cap stops the task: the call that reached it finishes, no other starts, and `stopped()` says why.
 */
export function stepModel(
  deps: Deps,
  task: Task,
  step: string,
  billingPlan: BillingPlanName,
  signal: AbortSignal,
  billed?: (usd: number) => Promise<string | undefined>,
) {
  const meter = new UsageMeter();
  let client: Promise<ModelClient> | undefined;
  let stopped: string | undefined;
  const check = async (usd: number) => {
    if (stopped === undefined && billed) stopped = await billed(usd);
    if (stopped !== undefined) throw new SpendStopped(stopped);
  };
  // Under BYOK the provider bills the caller: the spend limits count managed spend only.
  const spend = billed && !task.byok ? { before: () => check(0), after: check } : undefined;
  return {
    /** Why a spend limit stopped this step's model calls, once one has. */
    stopped: () => stopped,
    client: () => {
      if (!isModelStep(step)) return Promise.reject(new Error(`the ${step} step does not call a model`));
      client ??= chooseModel(deps, task, step).then(async (chosen) => {
        const limit = deps.config.llm.taskBudgets[billingPlan];
        // An account's own base_url is a user-given URL: reached only through the address policy.
        const fetchImpl = chosen.endpoint === 'account' ? deps.outbound.fetchFor('base_url') : deps.fetch;
        const choice = await deps.ollamaContext(chosen, fetchImpl, signal);
        const secrets = await taskSecrets(deps, task);
        return new ModelClient({
          choice,
          step,
          model: languageModel(choice, fetchImpl),
          config: deps.config.llm,
          meter,
          spend,
          temperature: deps.config.llm.temperatures[step],
          // The provider bills a BYOK caller directly: only the token limit guards their key.
          budget: {
            tokens: limit.tokens,
            usd: task.byok ? Number.POSITIVE_INFINITY : limit.usd,
            spentTokens: task.tokensTotal,
            spentUsd: task.costUsd,
          },
          signal,
          secrets,
          log: (message, data) => deps.log.info({ task: task.id, step, ...data }, message),
        });
      });
      return client;
    },
    spent: (byok: boolean) => {
      const output: Record<string, unknown> = {};
      if (meter.calls > 0) {
        output.model_calls = meter.calls;
        if (meter.malformed > 0) output.malformed_answers = meter.malformed;
      }
      return { tokens: meter.tokens, costUsd: byok ? 0 : meter.costUsd, output };
    },
    meter,
  };
}
