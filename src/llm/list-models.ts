import type { LlmProvider } from '../config/llm.js';
import { OutboundRefused } from '../outbound/refused.js';

export type KeyCheck = { ok: true; models: number } | { ok: false; error: string };

const TIMEOUT_MS = 10_000;

function request(
  provider: LlmProvider,
  baseUrl: string,
  apiKey: string,
): { url: string; headers: Record<string, string> } {
  switch (provider) {
    case 'openai':
      return { url: `${baseUrl}/models`, headers: { authorization: `Bearer ${apiKey}` } };
    case 'anthropic':
      return {
        url: `${baseUrl}/models?limit=1000`,
        headers: { 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' },
      };
    case 'google':
      // The key goes in a header, not the query string, so it never lands in an access log.
      return { url: `${baseUrl}/models?pageSize=1000`, headers: { 'x-goog-api-key': apiKey } };
  }
}

/**
 * Checks a provider key by listing the provider's models. Every failure of the provider
 * (refused, timed out, rejected key, unexpected body) is an {ok:false, error} in words; only a
 * URL the outbound address policy refuses is thrown (OutboundRefused, a 400 for the caller).
 */
export async function checkProviderKey(
  fetchImpl: typeof fetch,
  provider: LlmProvider,
  baseUrl: string,
  apiKey: string,
  timeoutMs = TIMEOUT_MS,
): Promise<KeyCheck> {
  const { url, headers } = request(provider, baseUrl, apiKey);
  let response: Response;
  try {
    response = await fetchImpl(url, { headers, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
  } catch (err) {
    if (err instanceof OutboundRefused) throw err;
    const name = (err as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError')
      return { ok: false, error: `${provider} did not answer within ${timeoutMs / 1000} s` };
    return { ok: false, error: `could not reach ${provider} at ${new URL(url).origin}` };
  }
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel();
    return { ok: false, error: `${provider} rejected the key (HTTP ${response.status})` };
  }
  if (!response.ok) {
    await response.body?.cancel();
    return { ok: false, error: `${provider} answered HTTP ${response.status}` };
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    return { ok: false, error: `${provider} answered with something that is not JSON` };
  }
  const list = (body as { data?: unknown; models?: unknown }).data ?? (body as { models?: unknown }).models;
  if (!Array.isArray(list)) return { ok: false, error: `${provider} answered without a model list` };
  return { ok: true, models: list.length };
}
