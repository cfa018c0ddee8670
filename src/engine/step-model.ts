import type { BillingPlanName } from '../config/billing-plans.js';
import type { Deps } from '../deps.js';
import { ModelClient, type ModelClientOptions } from '../llm/client.js';
import { chooseModel } from '../workspaces/model-credentials.js';
import { languageModel } from '../llm/providers.js';
import { SpendStopped, UsageMeter } from '../llm/usage.js';
import type { Task } from '../tasks/service.js';
import { type ModelStep, isModelStep } from '../step-contract/names.js';
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
  let stopped: string | undefined;
  const check = async (usd: number) => {
    if (stopped === undefined && billed) stopped = await billed(usd);
    if (stopped !== undefined) throw new SpendStopped(stopped);
  };
  // Under BYOK the provider bills the caller: the spend limits count managed spend only.
  const spend = billed && !task.byok ? { before: () => check(0), after: check } : undefined;
  // The model chosen (and a BYOK key decrypted) once for the step, its attempts included.
  let chosen: Promise<Omit<ModelClientOptions, 'meter' | 'temperature'>> | undefined;
  const choose = () => {
    chosen ??= chooseModel(deps, task, step as ModelStep).then(async (picked) => {
      const limit = deps.config.llm.taskBudgets[billingPlan];
      // An account's own base_url is a user-given URL: reached only through the address policy.
      const fetchImpl = picked.endpoint === 'account' ? deps.outbound.fetchFor('base_url') : deps.fetch;
      const choice = await deps.ollamaContext(picked, fetchImpl, signal);
      const secrets = await taskSecrets(deps, task);
      return {
        choice,
        step,
        model: languageModel(choice, fetchImpl),
        config: deps.config.llm,
        spend,
        // The provider bills a BYOK caller directly: only the token limit guards their key.
        budget: {
          tokens: limit.tokens,
          usd: task.byok ? Number.POSITIVE_INFINITY : limit.usd,
          spentTokens: task.tokensTotal,
          spentUsd: task.costUsd,
        },
        signal,
        secrets,
        log: (message: string, data?: Record<string, unknown>) =>
          deps.log.info({ task: task.id, step, ...data }, message),
      };
    });
    return chosen;
  };
  const clientOf = (own: UsageMeter, temperature: number): Promise<ModelClient> => {
    if (!isModelStep(step)) return Promise.reject(new Error(`the ${step} step does not call a model`));
    return choose().then((options) => new ModelClient({ ...options, meter: own, temperature }));
  };
  let client: Promise<ModelClient> | undefined;
  return {
    /** Why a spend limit stopped this step's model calls, once one has. */
    stopped: () => stopped,
    client: () => {
      client ??= clientOf(meter, deps.config.llm.temperatures[step as ModelStep]);
      return client;
    },
    /**
     * One attempt's model (docs/agent.md, "Attempts"): the step's model at another temperature, its
     * calls in a meter of their own whose use is the step's too (the budget and the spend limits
     * count every attempt).
     */
    attempt: (temperature: number) => {
      const own = new UsageMeter(meter);
      let made: Promise<ModelClient> | undefined;
      return {
        meter: own,
        client: () => {
          made ??= clientOf(own, temperature);
          return made;
        },
      };
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
