import type { LlmProvider } from '../config/llm.js';

/** Where the providers themselves answer: a model behind any other address may be a small local one. */
export const OFFICIAL_BASE_URLS: Record<LlmProvider, string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
  google: 'https://generativelanguage.googleapis.com/v1beta',
};

/** Input + output tokens per model family, as the providers list them (late 2026); longest prefix wins. */
const KNOWN_WINDOWS: Record<string, number> = {
  'gpt-4o': 128_000,
  'gpt-4.1': 1_047_576,
  'gpt-5': 400_000,
  o3: 200_000,
  'o3-mini': 200_000,
  'o4-mini': 200_000,
  claude: 200_000,
  gemini: 1_048_576,
};

/** A model we know nothing about, at the provider's own address: that provider's usual window. */
const PROVIDER_WINDOWS: Record<LlmProvider, number> = { openai: 128_000, anthropic: 200_000, google: 1_048_576 };

/**
 * A model we know nothing about behind another address (Ollama, vLLM, a gateway): small on purpose,
 * so a prompt that would not fit fails loudly rather than being cut by the server. The operator
 * states the real window with EMEND_MODEL_CONTEXT_<STEP> or the key's context_window.
 */
export const UNKNOWN_MODEL_WINDOW = 8_192;

export interface ContextWindow {
  tokens: number;
  /** Where the number came from, for the error that names it. */
  source: 'configuration' | 'key' | 'known model' | 'provider default' | 'unknown model' | 'ollama server';
}

function knownWindow(model: string): number | undefined {
  const id = model.replace(/^models\//, '').toLowerCase();
  let best: string | undefined;
  for (const name of Object.keys(KNOWN_WINDOWS)) {
    const matches = id === name || id.startsWith(`${name}-`) || id.startsWith(`${name}.`);
    if (matches && (!best || name.length > best.length)) best = name;
  }
  return best ? KNOWN_WINDOWS[best] : undefined;
}

/**
 * The window a step's model works in: the configured one (the step's EMEND_MODEL_CONTEXT_<STEP>,
 * else the BYOK key's context_window), else the known model's (also behind a gateway, which serves
 * the same model), else the provider's usual window at its own address, else a small default.
 */
export function contextWindowOf(choice: {
  provider: LlmProvider;
  model: string;
  baseUrl: string;
  contextWindow?: ContextWindow;
}): ContextWindow {
  if (choice.contextWindow) return choice.contextWindow;
  const known = knownWindow(choice.model);
  if (known) return { tokens: known, source: 'known model' };
  const official = choice.baseUrl.replace(/\/+$/, '') === OFFICIAL_BASE_URLS[choice.provider];
  if (official) return { tokens: PROVIDER_WINDOWS[choice.provider], source: 'provider default' };
  return { tokens: UNKNOWN_MODEL_WINDOW, source: 'unknown model' };
}

/**
 * The prompt and the answer it asks for do not fit the model's window. Thrown before the call:
 * no request is sent, nothing is billed, and it is never retried (the same prompt would not fit
 * again). Servers that silently drop the prompt's start (Ollama) would otherwise answer without
 * the system prompt.
 */
export class ContextWindowExceeded extends Error {
  override name = 'ContextWindowExceeded';
}

export function checkFits(
  step: string,
  model: string,
  window: ContextWindow,
  promptTokens: number,
  outputTokens: number,
): void {
  if (promptTokens + outputTokens <= window.tokens) return;
  const n = (v: number) => v.toLocaleString('en');
  throw new ContextWindowExceeded(
    `the ${step} prompt does not fit ${model}'s context window: prompt ≈ ${n(promptTokens)} tokens + ` +
      `output ${n(outputTokens)} > window ${n(window.tokens)} (${window.source}); not sent, never truncated. ` +
      (window.source === 'ollama server'
        ? "The Ollama server gives the model this context: raise the model's num_ctx there (a Modelfile)"
        : `If the model's window is larger, set EMEND_MODEL_CONTEXT_${step.toUpperCase()} or the key's context_window`),
  );
}
