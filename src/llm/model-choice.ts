import type { LlmProvider } from '../config/llm.js';
import type { ContextWindow } from './context-window.js';

/** Which model a step calls, with which key, where. The key never leaves the worker. */
export interface ModelChoice {
  provider: LlmProvider;
  model: string;
  apiKey: string;
  baseUrl: string;
  /** managed: the operator's key (the task is charged); byok: the account's own key (cost 0). */
  source: 'managed' | 'byok';
  /**
   * Whose address baseUrl is: the operator's (the environment's provider URLs, trusted) or the
   * account's own saved base_url, which is reached only through the outbound address policy.
   */
  endpoint: 'operator' | 'account';
  /** A window the operator or the key's owner stated; otherwise contextWindowOf() finds a default. */
  contextWindow?: ContextWindow;
}

/** The task cannot call any model; the message says which key to set. */
export class NoModelKey extends Error {
  override name = 'NoModelKey';
}
