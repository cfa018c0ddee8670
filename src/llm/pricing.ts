import type { LlmProvider } from '../config/llm.js';

/** USD per million tokens, [input, output], as the providers list them (late 2026). */
const LIST_PRICES: Record<string, [number, number]> = {
  'gpt-5-nano': [0.05, 0.4],
  'gpt-5-mini': [0.25, 2],
  'gpt-5': [1.25, 10],
  'gpt-4.1-nano': [0.1, 0.4],
  'gpt-4.1-mini': [0.4, 1.6],
  'gpt-4.1': [2, 8],
  'gpt-4o-mini': [0.15, 0.6],
  'gpt-4o': [2.5, 10],
  'o4-mini': [1.1, 4.4],
  'o3-mini': [1.1, 4.4],
  o3: [2, 8],
  'claude-haiku-4-5': [1, 5],
  'claude-3-5-haiku': [0.8, 4],
  'claude-sonnet-4-5': [3, 15],
  'claude-sonnet-4': [3, 15],
  'claude-3-7-sonnet': [3, 15],
  'claude-opus-4-5': [5, 25],
  'claude-opus-4-1': [15, 75],
  'claude-opus-4': [15, 75],
  'gemini-2.5-flash-lite': [0.1, 0.4],
  'gemini-2.5-flash': [0.3, 2.5],
  'gemini-2.5-pro': [1.25, 10],
  'gemini-2.0-flash': [0.1, 0.4],
};

/**
 * A model we have no price for is charged like a large model rather than for free, so an
 * unknown name can never slip past a task's USD budget. Operators add their own models
 * (a local one at [0, 0]) with EMEND_MODEL_PRICES.
 */
export const FALLBACK_PRICE: [number, number] = [3, 15];

export interface Price {
  input: number;
  output: number;
  /** The table entry that matched, or null for the fallback. */
  matched: string | null;
}

/**
 * The price of a model: the longest table prefix of its id wins, so dated ids
 * (claude-sonnet-4-5-20250929) and provider prefixes (models/gemini-2.5-pro) resolve.
 */
export function priceOf(model: string, overrides: Record<string, [number, number]> = {}): Price {
  const id = model.replace(/^models\//, '').toLowerCase();
  const table = { ...LIST_PRICES, ...overrides };
  let best: string | null = null;
  for (const name of Object.keys(table)) {
    if (
      (id === name || id.startsWith(`${name}-`) || id.startsWith(`${name}@`) || id.startsWith(`${name}:`)) &&
      (!best || name.length > best.length)
    )
      best = name;
  }
  const [input, output] = best ? table[best]! : FALLBACK_PRICE;
  return { input, output, matched: best };
}

export function costUsd(price: Price, inputTokens: number, outputTokens: number): number {
  return (inputTokens * price.input + outputTokens * price.output) / 1_000_000;
}

/** Defaults per provider: a strong model for planning and fixing, a quick one for ranking. */
export const DEFAULT_MODELS: Record<LlmProvider, { strong: string; quick: string }> = {
  openai: { strong: 'gpt-4.1', quick: 'gpt-4.1-mini' },
  anthropic: { strong: 'claude-sonnet-4-5', quick: 'claude-haiku-4-5' },
  google: { strong: 'gemini-2.5-pro', quick: 'gemini-2.5-flash' },
};
