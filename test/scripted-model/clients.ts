import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModel } from 'ai';
import type { Provider, ScriptedModel } from '../support/scripted-model/server.js';

export const KEYS: Record<Provider, string> = {
  openai: 'sk-scripted-openai-key',
  anthropic: 'sk-ant-scripted-anthropic-key',
  google: 'AIza-scripted-google-key',
};

export const PROVIDERS: Provider[] = ['openai', 'anthropic', 'google'];

/** The production client for a provider, pointed at the double, the way src/llm/providers.ts builds it. */
export function clientFor(model: ScriptedModel, provider: Provider, apiKey = KEYS[provider], modelId?: string): LanguageModel {
  switch (provider) {
    case 'openai':
      return createOpenAI({ apiKey, baseURL: model.urls.openai }).chat(modelId ?? 'gpt-4.1');
    case 'anthropic':
      return createAnthropic({ apiKey, baseURL: model.urls.anthropic })(modelId ?? 'claude-sonnet-4-5');
    case 'google':
      return createGoogleGenerativeAI({ apiKey, baseURL: model.urls.google })(modelId ?? 'gemini-2.5-pro');
  }
}
