import type { LanguageModel } from 'ai';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { languageModel } from '../../src/llm/providers.js';
import { type Provider, type ScriptedModel, startScriptedModel } from '../support/scripted-model/server.js';

export const KEYS: Record<Provider, string> = {
  openai: 'sk-scripted-openai-key',
  anthropic: 'sk-ant-scripted-anthropic-key',
  google: 'AIza-scripted-google-key',
};

export const PROVIDERS: Provider[] = ['openai', 'anthropic', 'google'];

/** The production client for a provider (src/llm/providers.ts), pointed at the double. */
export function clientFor(
  model: ScriptedModel,
  provider: Provider,
  apiKey = KEYS[provider],
  modelId?: string,
): LanguageModel {
  const defaults: Record<Provider, string> = {
    openai: 'gpt-4.1',
    anthropic: 'claude-sonnet-4-5',
    google: 'gemini-2.5-pro',
  };
  return languageModel(
    { provider, model: modelId ?? defaults[provider], apiKey, baseUrl: model.urls[provider] },
    fetch,
  );
}

/** A double for the whole describe block (accepting the three KEYS), its records emptied before each test. */
export function useScriptedModel(): () => ScriptedModel {
  let model: ScriptedModel;
  beforeAll(async () => {
    model = await startScriptedModel({ validKeys: Object.values(KEYS) });
  });
  afterAll(async () => {
    await model.close();
  });
  beforeEach(() => {
    model.calls.length = 0;
    model.requests.length = 0;
  });
  return () => model;
}
