import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModel } from 'ai';
import type { ModelChoice } from './model-choice.js';

/**
 * The AI SDK model for a choice. OpenAI goes through chat completions rather than the
 * Responses API: it is what OpenAI-compatible servers (Ollama, vLLM, gateways) speak, so one
 * base_url setting covers them all.
 */
export function languageModel(
  choice: Pick<ModelChoice, 'provider' | 'model' | 'apiKey' | 'baseUrl'>,
  fetchImpl: typeof fetch,
): LanguageModel {
  const common = { apiKey: choice.apiKey, baseURL: choice.baseUrl, fetch: fetchImpl };
  switch (choice.provider) {
    case 'openai':
      return createOpenAI(common).chat(choice.model);
    case 'anthropic':
      return createAnthropic(common)(choice.model);
    case 'google':
      return createGoogleGenerativeAI(common)(choice.model);
  }
}
