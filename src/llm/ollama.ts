import { type ContextWindow, OFFICIAL_BASE_URLS } from './context-window.js';
import { callDeadline } from './deadline.js';
import type { ModelChoice } from './model-choice.js';

const PROBE_TIMEOUT_MS = 10_000;

/**
 * An Ollama server whose context for the model could not be confirmed: refused before any call,
 * because its OpenAI-compatible endpoint ignores a requested num_ctx and drops the start of a
 * longer prompt (the system prompt first) without an error.
 */
export class OllamaContextUnconfirmed extends Error {
  override name = 'OllamaContextUnconfirmed';
}

/** The server root: an OpenAI-compatible base ends in /v1, Ollama's own API is beside it under /api. */
const rootOf = (baseUrl: string) => baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');

async function getJson(
  fetchImpl: typeof fetch,
  url: string,
  signal: AbortSignal,
  body?: unknown,
): Promise<Record<string, unknown> | undefined> {
  const deadline = callDeadline(signal, PROBE_TIMEOUT_MS);
  try {
    const init: RequestInit = body
      ? { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
      : {};
    const r = await fetchImpl(url, { ...init, signal: deadline.signal });
    if (!r.ok) return undefined;
    const json: unknown = await r.json();
    return json && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
  } catch {
    // Not an Ollama answer (or no answer): the model call itself reports an unreachable server.
    if (signal.aborted) throw signal.reason;
    return undefined;
  } finally {
    deadline.done();
  }
}

/** `num_ctx` from a Modelfile's parameters as /api/show lists them ("num_ctx   32768\nstop ..."). */
function modelfileNumCtx(show: Record<string, unknown> | undefined): number | undefined {
  const params = show?.parameters;
  if (typeof params !== 'string') return undefined;
  const m = /^\s*num_ctx\s+(\d+)\s*$/m.exec(params);
  return m ? Number(m[1]) : undefined;
}

/** The context a loaded model runs with, as /api/ps reports it (newer servers). */
function loadedContext(ps: Record<string, unknown> | undefined, model: string): number | undefined {
  const models = Array.isArray(ps?.models) ? (ps.models as Record<string, unknown>[]) : [];
  const same = (name: unknown) => name === model || name === `${model}:latest`;
  const hit = models.find((m) => same(m.name) || same(m.model));
  return typeof hit?.context_length === 'number' ? hit.context_length : undefined;
}

/**
 * The choice with the window an Ollama server actually gives the model, when its base URL is
 * Ollama's (GET /api/version answers); other servers are returned as they are. The server's
 * context is confirmed by the model's Modelfile num_ctx (/api/show) or, for a loaded model,
 * by /api/ps; the window is then the smaller of it and any stated one. Unconfirmed: refused.
 */
export async function withOllamaContext(
  choice: ModelChoice,
  fetchImpl: typeof fetch,
  signal: AbortSignal,
): Promise<ModelChoice> {
  // Ollama is reached through the OpenAI-compatible provider (docs/configuration.md, "Models").
  if (choice.provider !== 'openai' || choice.baseUrl.replace(/\/+$/, '') === OFFICIAL_BASE_URLS.openai) return choice;
  const root = rootOf(choice.baseUrl);
  const version = await getJson(fetchImpl, `${root}/api/version`, signal);
  if (typeof version?.version !== 'string') return choice;
  // `name` for servers older than 0.5, which did not read `model` there.
  const confirmed =
    modelfileNumCtx(
      await getJson(fetchImpl, `${root}/api/show`, signal, { model: choice.model, name: choice.model }),
    ) ?? loadedContext(await getJson(fetchImpl, `${root}/api/ps`, signal), choice.model);
  if (confirmed === undefined) {
    throw new OllamaContextUnconfirmed(
      `${choice.baseUrl} is an Ollama server (${version.version}); its OpenAI-compatible endpoint ignores a ` +
        `requested context size and silently drops the start of a longer prompt, and the context it gives ` +
        `${choice.model} could not be confirmed. Give the model a context in a Modelfile ` +
        `(PARAMETER num_ctx ${choice.contextWindow?.tokens ?? 32_768}, then ollama create), which /api/show reports, or start Ollama with ` +
        `OLLAMA_CONTEXT_LENGTH and keep the model loaded so /api/ps reports it`,
    );
  }
  const stated = choice.contextWindow;
  const window: ContextWindow =
    stated && stated.tokens <= confirmed ? stated : { tokens: confirmed, source: 'ollama server' };
  return { ...choice, contextWindow: window };
}
