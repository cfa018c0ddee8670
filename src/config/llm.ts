import { z } from 'zod';
import { MODEL_STEPS, type ModelStep } from '../step-contract/names.js';
import { BILLING_PLAN_NAMES, type BillingPlanName } from './billing-plans.js';
import { type Env, type VariableSchema, decimal, integer, onOff, oneOf, read, refuse, text, url } from './env.js';

export const LLM_PROVIDERS = ['openai', 'anthropic', 'google'] as const;
export type LlmProvider = (typeof LLM_PROVIDERS)[number];

/** A context window setting's bounds (EMEND_MODEL_CONTEXT_<STEP>, a key's context_window), in tokens. */
export const CONTEXT_WINDOW_MIN = 1_024;
export const CONTEXT_WINDOW_MAX = 10_000_000;

export interface LlmConfig {
  /** The provider managed calls use when a step names none; default: the first with a managed key. */
  provider: LlmProvider | undefined;
  /** Per-step model, as `provider:model` or `model` (EMEND_MODEL_PLANNER …). */
  models: Partial<Record<ModelStep, { provider?: LlmProvider; model: string }>>;
  /** Per-step context window in tokens, input and output together (EMEND_MODEL_CONTEXT_PLANNER …). */
  contextWindows: Partial<Record<ModelStep, number>>;
  /** One call, from request to last byte. */
  timeoutMs: number;
  /** Retries after a 429, a 5xx or a dropped connection. */
  maxRetries: number;
  /** First back-off; doubles each retry unless the provider says when to come back. */
  retryBaseMs: number;
  /** Whether the locator asks the model to re-rank its deterministic shortlist. */
  rerank: boolean;
  /** Per-task spending limits by plan. */
  taskBudgets: Record<BillingPlanName, { tokens: number; usd: number }>;
  /** Extra or overriding prices, USD per million tokens: {"model-prefix": [input, output]}. */
  prices: Record<string, [number, number]>;
  /**
   * Sampling temperature of each step's calls: EMEND_MODEL_TEMPERATURE_<STEP>, else
   * EMEND_MODEL_TEMPERATURE, else 0 (providers default to 1.0, which varies edits run to run).
   */
  temperatures: Record<ModelStep, number>;
}

/** The operator's own provider keys (managed mode) and the providers' API addresses. */
export const providerKeys = (env: Env) => ({
  openai: text(env, 'OPENAI_API_KEY'),
  anthropic: text(env, 'ANTHROPIC_API_KEY'),
  google: text(env, 'GOOGLE_GENERATIVE_AI_API_KEY'),
});

export const providerBaseUrls = (env: Env) => ({
  openai: read(env, 'OPENAI_BASE_URL', url('OPENAI_BASE_URL'), 'https://api.openai.com/v1'),
  anthropic: read(env, 'ANTHROPIC_BASE_URL', url('ANTHROPIC_BASE_URL'), 'https://api.anthropic.com/v1'),
  google: read(env, 'GOOGLE_BASE_URL', url('GOOGLE_BASE_URL'), 'https://generativelanguage.googleapis.com/v1beta'),
});

/** `provider:model` or `model`: a colon after one of the providers names it; any other is part of the model (llama3.1:8b). */
const stepModel: VariableSchema<{ provider?: LlmProvider; model: string }> = z.string().transform((raw, ctx) => {
  const colon = raw.indexOf(':');
  const head = colon > 0 ? raw.slice(0, colon) : '';
  const provider = LLM_PROVIDERS.find((p) => p === head);
  const model = provider ? raw.slice(colon + 1) : raw;
  if (!/^[^\s:][^\s]*$/.test(model)) return refuse(ctx, `expected "provider:model" or "model", got "${raw}"`);
  return { provider, model };
});

// Any non-negative JSON number (z.number() would refuse the Infinity that 1e400 parses to, which was taken).
const price = z.custom<number>((n) => typeof n === 'number' && n >= 0);
const pricePair = z.tuple([price, price]);

/** EMEND_MODEL_PRICES: a JSON object of model prefix → [input, output] USD per million tokens. */
const prices: VariableSchema<Record<string, [number, number]>> = z.string().transform((raw, ctx) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return refuse(ctx, 'expected JSON like {"llama3.1": [0, 0]}');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    return refuse(ctx, 'expected a JSON object of model → [input, output] USD per million tokens');
  const out: Record<string, [number, number]> = {};
  for (const [model, pair] of Object.entries(parsed)) {
    const checked = pricePair.safeParse(pair);
    if (!checked.success) return refuse(ctx, `${model}: expected [input, output] USD per million tokens`);
    out[model] = checked.data;
  }
  return out;
});

/** A temperature between 0 and 2 (the widest range the providers accept; Anthropic stops at 1). */
const temperature = decimal(2);

/** Per-task budgets; generous enough for a fix with retries, small enough to stop a runaway loop. */
const BUDGET_DEFAULTS: Record<BillingPlanName, { tokens: number; usd: number }> = {
  free: { tokens: 300_000, usd: 1.5 },
  pro: { tokens: 1_000_000, usd: 5 },
  scale: { tokens: 2_000_000, usd: 10 },
  demo: { tokens: 150_000, usd: 0.5 },
};

/** Which models the thinking steps use, and how calls to them behave (docs/configuration.md). */
export function llmConfig(env: Env): LlmConfig {
  const provider = read(
    env,
    'EMEND_LLM_PROVIDER',
    oneOf(LLM_PROVIDERS, (raw) => `expected ${LLM_PROVIDERS.join(', ')}, got "${raw}"`),
  );
  const models: LlmConfig['models'] = {};
  const contextWindows: LlmConfig['contextWindows'] = {};
  for (const step of MODEL_STEPS) {
    const m = read(env, `EMEND_MODEL_${step.toUpperCase()}`, stepModel);
    if (m) models[step] = m;
    const window = read(
      env,
      `EMEND_MODEL_CONTEXT_${step.toUpperCase()}`,
      integer(CONTEXT_WINDOW_MIN, CONTEXT_WINDOW_MAX),
    );
    if (window !== undefined) contextWindows[step] = window;
  }
  const taskBudgets = Object.fromEntries(
    BILLING_PLAN_NAMES.map((billingPlan) => {
      const name = billingPlan.toUpperCase();
      const fallback = BUDGET_DEFAULTS[billingPlan];
      return [
        billingPlan,
        {
          tokens: read(env, `EMEND_TASK_BUDGET_TOKENS_${name}`, integer(1_000, 1_000_000_000), fallback.tokens),
          usd: read(env, `EMEND_TASK_BUDGET_USD_${name}`, decimal(), fallback.usd),
        },
      ];
    }),
  ) as LlmConfig['taskBudgets'];
  return {
    provider,
    models,
    contextWindows,
    timeoutMs: read(env, 'EMEND_LLM_TIMEOUT_S', integer(1, 3_600), 180) * 1000,
    maxRetries: read(env, 'EMEND_LLM_MAX_RETRIES', integer(0, 10), 3),
    retryBaseMs: read(env, 'EMEND_LLM_RETRY_BASE_MS', integer(0, 60_000), 1_000),
    rerank: read(env, 'EMEND_LOCATOR_RERANK', onOff, true),
    taskBudgets,
    prices: read(env, 'EMEND_MODEL_PRICES', prices, {}),
    temperatures: temperatures(env),
  };
}

function temperatures(env: Env): Record<ModelStep, number> {
  const all = read(env, 'EMEND_MODEL_TEMPERATURE', temperature, 0);
  return Object.fromEntries(
    MODEL_STEPS.map((step) => [step, read(env, `EMEND_MODEL_TEMPERATURE_${step.toUpperCase()}`, temperature, all)]),
  ) as Record<ModelStep, number>;
}
