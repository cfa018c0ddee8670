import { APICallError } from 'ai';

/** A provider failure worth another try: rate limits, server errors, dropped connections, timeouts. */
export function isTransient(err: unknown): boolean {
  if (APICallError.isInstance(err)) {
    const s = err.statusCode;
    return s === undefined ? err.isRetryable : s === 408 || s === 409 || s === 429 || s >= 500;
  }
  const e = err as { name?: string; message?: string; code?: string; cause?: { code?: string } };
  if (e?.name === 'TimeoutError') return true;
  const code = e?.code ?? e?.cause?.code;
  return e?.name === 'TypeError' && /fetch failed|terminated|socket/i.test(e.message ?? '')
    ? true
    : ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'UND_ERR_SOCKET'].includes(code ?? '');
}

/** The wait a provider asked for (retry-after-ms, or retry-after in seconds or as a date), in ms. */
export function retryAfterMs(err: unknown, now: number): number | undefined {
  if (!APICallError.isInstance(err) || !err.responseHeaders) return undefined;
  const h = Object.fromEntries(Object.entries(err.responseHeaders).map(([k, v]) => [k.toLowerCase(), v]));
  const ms = Number(h['retry-after-ms']);
  if (h['retry-after-ms'] !== undefined && Number.isFinite(ms)) return Math.max(0, ms);
  const raw = h['retry-after'];
  if (raw === undefined) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

const MAX_WAIT_MS = 60_000;

/** Exponential back-off with jitter, unless the provider said when to come back; capped at a minute. */
export function backoffMs(err: unknown, retry: number, baseMs: number, now = Date.now()): number {
  const asked = retryAfterMs(err, now);
  if (asked !== undefined) return Math.min(asked, MAX_WAIT_MS);
  return Math.min(baseMs * 2 ** retry * (0.5 + Math.random() / 2), MAX_WAIT_MS);
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A provider error in words for the task's log: status and the provider's message, never the key. */
export function describeFailure(provider: string, model: string, err: unknown): string {
  if (APICallError.isInstance(err)) {
    const status = err.statusCode ? `HTTP ${err.statusCode}` : 'no response';
    if (err.statusCode === 401 || err.statusCode === 403)
      return `${provider} rejected the API key for ${model} (${status})`;
    return `${provider} ${model}: ${status}: ${err.message.slice(0, 300)}`;
  }
  const e = err as Error;
  if (e?.name === 'TimeoutError') return `${provider} ${model} did not answer in time`;
  return `${provider} ${model}: ${e?.message?.slice(0, 300) ?? String(err)}`;
}
