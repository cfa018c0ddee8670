import { eq } from 'drizzle-orm';
import { keyContext } from './provider-keys.js';
import { decryptSecret } from '../secrets/box.js';
import { LLM_PROVIDERS, type LlmProvider } from '../config/llm.js';
import type { ModelStep } from '../step-contract/names.js';
import { providerKeys } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { type ModelChoice, NoModelKey } from '../llm/model-choice.js';
import { DEFAULT_MODELS } from '../llm/pricing.js';

const ENV_NAMES: Record<LlmProvider, string> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  google: 'GOOGLE_GENERATIVE_AI_API_KEY',
};

/** The locator's re-rank is a short, frequent call: a quick model unless configured. */
const defaultModel = (provider: LlmProvider, step: ModelStep) =>
  step === 'locator' ? DEFAULT_MODELS[provider].quick : DEFAULT_MODELS[provider].strong;

/**
 * Chooses the model and key for one step of a task. A BYOK task uses only the account's
 * saved keys (never the operator's); a managed task only the operator's keys from the
 * environment. A step configured for a provider the task has no key for falls back to one
 * it has, with that provider's default model, rather than failing.
 */
export async function chooseModel(
  deps: Pick<Deps, 'db' | 'config' | 'secretKey'>,
  task: { workspaceId: string; byok: boolean },
  step: ModelStep,
): Promise<ModelChoice> {
  const { llm, providerKeys: managed, providerBaseUrls } = deps.config;
  const wanted = llm.models[step];
  const configured = llm.contextWindows[step];
  const stated = (tokens: number | null | undefined, source: 'configuration' | 'key') =>
    tokens ? { contextWindow: { tokens, source } } : {};
  if (task.byok) {
    const saved = await deps.db.select().from(providerKeys).where(eq(providerKeys.workspaceId, task.workspaceId));
    const byProvider = new Map(saved.map((k) => [k.provider as LlmProvider, k]));
    const provider = [wanted?.provider, llm.provider, ...LLM_PROVIDERS].find(
      (p): p is LlmProvider => !!p && byProvider.has(p),
    );
    if (!provider) {
      throw new NoModelKey(
        'this account uses its own model keys (BYOK) but has none saved: add one with POST /v1/me/keys ' +
          '(provider openai, anthropic or google), or turn BYOK off',
      );
    }
    const key = byProvider.get(provider)!;
    const model =
      wanted && (wanted.provider ?? provider) === provider
        ? wanted.model
        : (key.defaultModel ?? defaultModel(provider, step));
    return {
      provider,
      model,
      apiKey: decryptSecret(deps.secretKey, key.keyEnc, keyContext(task.workspaceId, provider)),
      baseUrl: key.baseUrl ?? providerBaseUrls[provider],
      source: 'byok',
      endpoint: key.baseUrl ? 'account' : 'operator',
      // The operator's per-step setting first, then the window the key's owner gave.
      ...(configured ? stated(configured, 'configuration') : stated(key.contextWindow, 'key')),
    };
  }
  const provider = [wanted?.provider, llm.provider, ...LLM_PROVIDERS].find(
    (p): p is LlmProvider => !!p && !!managed[p],
  );
  if (!provider) {
    const names = LLM_PROVIDERS.map((p) => ENV_NAMES[p]).join(', ');
    throw new NoModelKey(
      `no model key is configured for managed runs: the operator sets one of ${names}; or the account saves ` +
        `its own key (POST /v1/me/keys) and turns BYOK on`,
    );
  }
  const model = wanted && (wanted.provider ?? provider) === provider ? wanted.model : defaultModel(provider, step);
  return {
    provider,
    model,
    apiKey: managed[provider]!,
    baseUrl: providerBaseUrls[provider],
    source: 'managed',
    endpoint: 'operator',
    ...stated(configured, 'configuration'),
  };
}
