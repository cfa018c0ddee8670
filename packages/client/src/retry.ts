/**
 * When a call is sent again. A 429 with Retry-After was refused before anything happened, so
 * any call may wait and repeat it. A broken connection (or a 503 with Retry-After) may have
 * left the request half done, so only idempotent calls repeat it: GET, HEAD, PUT, DELETE, and a
 * POST carrying an Idempotency-Key (the server replays the first answer instead of acting twice).
 */
import { retryAfterSeconds } from './errors.js';

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const realSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export interface RetryPolicy {
  /** Repeats after the first attempt (0: never repeat). */
  retries: number;
  /** The longest Retry-After the client waits for; a longer one is returned to the caller as the error. */
  maxWaitMs: number;
  /** First back-off after a network error; doubles each time, up to 8 times that. */
  baseDelayMs: number;
  sleep: Sleep;
}

export const DEFAULT_RETRY: Omit<RetryPolicy, 'sleep'> = { retries: 3, maxWaitMs: 60_000, baseDelayMs: 250 };

const SAFE_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

export const isIdempotent = (request: Request) =>
  SAFE_METHODS.has(request.method) || request.headers.has('idempotency-key');

/** Exponential back-off with jitter (half fixed, half random), so many clients do not retry in step. */
export function backoffMs(attempt: number, baseMs: number): number {
  const ms = baseMs * 2 ** Math.min(attempt, 3);
  return ms / 2 + Math.random() * (ms / 2);
}

/** How long to wait before repeating a call that got this answer; undefined: do not repeat. */
function waitFor(response: Response, idempotent: boolean, maxWaitMs: number): number | undefined {
  if (response.status !== 429 && !(response.status === 503 && idempotent)) return undefined;
  const seconds = retryAfterSeconds(response.headers.get('retry-after'));
  if (seconds === undefined || seconds * 1000 > maxWaitMs) return undefined;
  return seconds * 1000;
}

type FetchLike = (input: Request, init?: RequestInit) => Promise<Response>;

/** A fetch that repeats a call as the module comment says; each attempt sends a copy of the request. */
export function retryingFetch(fetchFn: FetchLike, policy: RetryPolicy): FetchLike {
  return async (request, init) => {
    const idempotent = isIdempotent(request);
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= policy.retries;
      let response: Response;
      try {
        response = await fetchFn(request.clone(), init);
      } catch (err) {
        if (request.signal.aborted || !idempotent || last) throw err;
        await policy.sleep(backoffMs(attempt, policy.baseDelayMs), request.signal);
        continue;
      }
      const wait = last ? undefined : waitFor(response, idempotent, policy.maxWaitMs);
      if (wait === undefined) return response;
      await response.body?.cancel();
      await policy.sleep(wait, request.signal);
    }
  };
}
