import type { Clock } from '../clock.js';
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

/** What a server says about the context it gives a model: not Ollama, or Ollama and the context it confirms. */
type Probe = { ollama: false } | { ollama: true; version: string; confirmed: number | undefined };

async function probe(root: string, model: string, fetchImpl: typeof fetch, signal: AbortSignal): Promise<Probe> {
  const version = await getJson(fetchImpl, `${root}/api/version`, signal);
  if (typeof version?.version !== 'string') return { ollama: false };
  // `name` for servers older than 0.5, which did not read `model` there.
  const confirmed =
    modelfileNumCtx(await getJson(fetchImpl, `${root}/api/show`, signal, { model, name: model })) ??
    loadedContext(await getJson(fetchImpl, `${root}/api/ps`, signal), model);
  return { ollama: true, version: version.version, confirmed };
}

function applyProbe(choice: ModelChoice, found: Probe): ModelChoice {
  if (!found.ollama) return choice;
  if (found.confirmed === undefined) {
    throw new OllamaContextUnconfirmed(
      `${choice.baseUrl} is an Ollama server (${found.version}); its OpenAI-compatible endpoint ignores a ` +
        `requested context size and silently drops the start of a longer prompt, and the context it gives ` +
        `${choice.model} could not be confirmed. Give the model a context in a Modelfile ` +
        `(PARAMETER num_ctx ${choice.contextWindow?.tokens ?? 32_768}, then ollama create), which /api/show ` +
        `reports, or start Ollama with OLLAMA_CONTEXT_LENGTH and keep the model loaded so /api/ps reports it`,
    );
  }
  const stated = choice.contextWindow;
  const window: ContextWindow =
    stated && stated.tokens <= found.confirmed ? stated : { tokens: found.confirmed, source: 'ollama server' };
  return { ...choice, contextWindow: window };
}

// Ollama is reached through the OpenAI-compatible provider (docs/configuration.md, "Models").
const mayBeOllama = (choice: ModelChoice) =>
  choice.provider === 'openai' && choice.baseUrl.replace(/\/+$/, '') !== OFFICIAL_BASE_URLS.openai;

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
  if (!mayBeOllama(choice)) return choice;
  return applyProbe(choice, await probe(rootOf(choice.baseUrl), choice.model, fetchImpl, signal));
}

export type OllamaContext = typeof withOllamaContext;

/** How long a server's answer about a model's context is reused: an operator's Modelfile change shows within it. */
export const OLLAMA_PROBE_TTL_MS = 5 * 60_000;

/**
 * withOllamaContext with the server's answers kept per base URL and model for a few minutes, so
 * every model step of every task does not probe the same server again (two or three requests, and
 * a 404 from each non-Ollama OpenAI-compatible server). An unconfirmed context is not kept: the
 * operator may be fixing it. Concurrent first calls share one probe.
 */
export function cachedOllamaContext(clock: Clock, ttlMs = OLLAMA_PROBE_TTL_MS): OllamaContext {
  const known = new Map<string, { at: number; found: Promise<Probe> }>();
  return async (choice, fetchImpl, signal) => {
    if (!mayBeOllama(choice)) return choice;
    const root = rootOf(choice.baseUrl);
    const key = `${root}\u0000${choice.model}`;
    const now = clock.now().getTime();
    let entry = known.get(key);
    if (!entry || now - entry.at >= ttlMs) {
      const found = probe(root, choice.model, fetchImpl, signal);
      entry = { at: now, found };
      known.set(key, entry);
      const forget = () => {
        if (known.get(key) === entry) known.delete(key);
      };
      found.then((p) => p.ollama && p.confirmed === undefined && forget(), forget);
    }
    return applyProbe(choice, await entry.found);
  };
}
