import { and, eq, isNull, lt, lte, or, sql } from 'drizzle-orm';
import { webhookDeliveries, webhookEndpoints } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { storableText } from '../db/storable.js';
import { dueDeliveries } from './deliveries.js';
import { type WebhookEndpoint, signingSecretOf } from './endpoints.js';
import { PING_EVENT } from './events.js';
import { signedHeaders } from './sign.js';

type AttemptDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'outbound' | 'secretKey' | 'metrics' | 'log'>;

/** What one POST came to. */
interface Outcome {
  ok: boolean;
  retry: boolean;
  status: number | null;
  error: string | null;
  retryAfterMs?: number;
  durationMs: number;
}

const MAX_WAIT_MS = 6 * 3_600_000;
/** An attempt holds its delivery for twice its timeout and this much more; then a sweep may try again. */
const LOCK_SLACK_MS = 5_000;

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(value: string | null, now: Date): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}

/** The wait before attempt n+1 after n failures: base × 4^(n−1), at most 6 h, ±20 % jitter. */
export function backoffMs(base: number, failures: number, random = Math.random): number {
  const wait = Math.min(MAX_WAIT_MS, base * 4 ** Math.max(0, failures - 1));
  return Math.round(wait * (0.8 + 0.4 * random()));
}

/** Claims a due pending delivery for one attempt; undefined when it is not due, done, or held by another attempt. */
async function claim(deps: AttemptDeps, id: string) {
  const now = deps.clock.now();
  const [row] = await deps.db
    .update(webhookDeliveries)
    .set({
      attempts: sql`${webhookDeliveries.attempts} + 1`,
      lockedUntil: new Date(now.getTime() + 2 * deps.config.webhooks.timeoutMs + LOCK_SLACK_MS),
    })
    .where(
      and(
        eq(webhookDeliveries.id, id),
        eq(webhookDeliveries.status, 'pending'),
        lte(webhookDeliveries.nextAttemptAt, now),
        or(isNull(webhookDeliveries.lockedUntil), lt(webhookDeliveries.lockedUntil, now)),
      ),
    )
    .returning();
  if (!row) return undefined;
  const [endpoint] = await deps.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, row.endpointId));
  return endpoint ? { delivery: row, endpoint } : undefined;
}

/** One signed POST through the outbound address policy, bounded by the configured timeout. */
async function post(deps: AttemptDeps, endpoint: WebhookEndpoint, id: string, body: string): Promise<Outcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'emend-webhooks/1',
    ...signedHeaders(signingSecretOf(deps, endpoint), id, deps.clock.now(), body),
  };
  try {
    const res = await deps.outbound.fetchFor('url')(endpoint.url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(deps.config.webhooks.timeoutMs),
    });
    // The answer is read (to its end, within the timeout) only to free the connection.
    await res.arrayBuffer().catch(() => undefined);
    const ok = res.status >= 200 && res.status < 300;
    const retry = res.status === 429 || res.status >= 500;
    const after = retry ? retryAfterMs(res.headers.get('retry-after'), deps.clock.now()) : undefined;
    return {
      ok,
      retry,
      status: res.status,
      error: ok ? null : `the endpoint answered ${res.status}`,
      ...(after !== undefined ? { retryAfterMs: after } : {}),
      durationMs: elapsed(),
    };
  } catch (err) {
    const e = err as Error;
    const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError';
    const reason = timedOut ? `no answer within ${deps.config.webhooks.timeoutMs} ms` : e.message;
    // A URL the address policy refuses now will be refused on every retry too.
    const refused = e.name === 'OutboundRefused';
    return { ok: false, retry: !refused, status: null, error: storableText(reason), durationMs: elapsed() };
  }
}

/**
 * One attempt of a delivery: claimed, signed, POSTed, and its outcome recorded. A success ends
 * it and ends the endpoint's failing streak; a network error, a timeout, a 5xx or a 429 is
 * retried after the back-off (or the endpoint's Retry-After) until the retry window closes;
 * any other answer fails it at once. An endpoint whose attempts have all failed for the
 * configured days is disabled, with the reason shown to the account. Returns when the next
 * attempt is due, if there is one.
 */
export async function attemptDelivery(deps: AttemptDeps, id: string): Promise<{ next?: Date } | undefined> {
  const claimed = await claim(deps, id);
  if (!claimed) return undefined;
  const { delivery, endpoint } = claimed;
  if (delivery.payload === null || !endpoint.enabled) {
    await finish(deps, delivery.id, 'failed', { error: endpoint.enabled ? 'payload expired' : 'endpoint disabled' });
    return undefined;
  }
  const outcome = await post(deps, endpoint, delivery.id, delivery.payload);
  const now = deps.clock.now();
  deps.metrics.webhookDeliveries.inc({ outcome: outcome.ok ? 'success' : outcome.retry ? 'retry' : 'failure' });
  deps.metrics.webhookDeliverySeconds.observe(outcome.durationMs / 1000);
  const last = { status: outcome.status, error: outcome.error, durationMs: outcome.durationMs };
  if (outcome.ok) {
    await finish(deps, delivery.id, 'succeeded', last);
    await deps.db.update(webhookEndpoints).set({ failingSince: null }).where(eq(webhookEndpoints.id, endpoint.id));
    return undefined;
  }
  await noteFailure(deps, endpoint, now);
  const wait = outcome.retryAfterMs ?? backoffMs(deps.config.webhooks.retryBaseMs, delivery.attempts);
  const next = new Date(now.getTime() + wait);
  const windowEnds = delivery.createdAt.getTime() + deps.config.webhooks.retryForMs;
  if (!outcome.retry || delivery.eventType === PING_EVENT || next.getTime() > windowEnds) {
    await finish(deps, delivery.id, 'failed', last);
    return undefined;
  }
  await deps.db
    .update(webhookDeliveries)
    .set({
      nextAttemptAt: next,
      lockedUntil: null,
      lastStatusCode: last.status,
      lastError: last.error,
      lastDurationMs: last.durationMs,
    })
    .where(eq(webhookDeliveries.id, delivery.id));
  return { next };
}

async function finish(
  deps: AttemptDeps,
  id: string,
  status: 'succeeded' | 'failed',
  last: { status?: number | null; error?: string | null; durationMs?: number },
) {
  await deps.db
    .update(webhookDeliveries)
    .set({
      status,
      lockedUntil: null,
      nextAttemptAt: null,
      finishedAt: deps.clock.now(),
      lastStatusCode: last.status ?? null,
      lastError: last.error ?? null,
      lastDurationMs: last.durationMs ?? null,
    })
    .where(eq(webhookDeliveries.id, id));
}

/** Starts or continues the endpoint's failing streak; a streak of the configured days disables it. */
async function noteFailure(deps: AttemptDeps, endpoint: WebhookEndpoint, now: Date) {
  const since = endpoint.failingSince ?? now;
  const days = Math.round(deps.config.webhooks.disableAfterMs / 86_400_000);
  const disable = now.getTime() - since.getTime() >= deps.config.webhooks.disableAfterMs;
  await deps.db
    .update(webhookEndpoints)
    .set({
      failingSince: sql`coalesce(${webhookEndpoints.failingSince}, ${now})`,
      ...(disable
        ? {
            enabled: false,
            disabledReason: `every delivery failed for ${days} days (since ${since.toISOString()}); fix the endpoint and enable it again`,
          }
        : {}),
    })
    .where(eq(webhookEndpoints.id, endpoint.id));
  if (disable) deps.log.warn({ endpoint: endpoint.id }, 'webhook endpoint disabled after failing for days');
}

/** A delivery job: one attempt, and the next one queued for when it is due. */
export async function runDeliveryJob(deps: AttemptDeps & Pick<Deps, 'queue'>, id: string): Promise<void> {
  const result = await attemptDelivery(deps, id);
  if (result?.next) await deps.queue.enqueueDelivery(id, result.next);
}

/**
 * Queues again the deliveries that are due but have no job: lost between a commit and its
 * announcement, or held by a worker that died mid-attempt (its lock has run out). `graceMs`
 * leaves jobs that are merely late to their own consumers.
 */
export async function requeueDueDeliveries(deps: Pick<Deps, 'db' | 'clock' | 'queue'>, graceMs: number) {
  for (const id of await dueDeliveries(deps, graceMs)) await deps.queue.enqueueDelivery(id);
}
