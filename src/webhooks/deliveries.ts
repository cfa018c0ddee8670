import { and, desc, eq, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client.js';
import { webhookDeliveries, webhookEndpoints } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { getEndpoint } from './endpoints.js';
import { type DeliveredEvent, PING_EVENT, subscriptionOf } from './events.js';

export type WebhookDelivery = typeof webhookDeliveries.$inferSelect;

/** Deliveries listed per endpoint. */
export const DELIVERY_LIST_LIMIT = 100;

/** The body every delivery of an event carries: Standard Webhooks' type/timestamp/data, and the event's id. */
export function eventBody(id: string, type: string, at: Date, data: Record<string, unknown>): string {
  return JSON.stringify({ id, type, timestamp: at.toISOString(), data });
}

/**
 * Records an event for every enabled endpoint of the account that subscribes to it, in the
 * caller's transaction: the event exists exactly when the change that caused it does, so a
 * crash between the two loses nothing (the worker's sweep sends what was recorded). Returns
 * the deliveries to wake the queue for once the transaction has committed.
 */
export async function recordEvent(
  tx: Tx | Db,
  now: Date,
  workspaceId: string,
  type: DeliveredEvent,
  data: Record<string, unknown>,
): Promise<string[]> {
  const endpoints = await tx
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.workspaceId, workspaceId),
        eq(webhookEndpoints.enabled, true),
        sql`${webhookEndpoints.events} @> ${JSON.stringify([subscriptionOf(type)])}::jsonb`,
      ),
    );
  if (endpoints.length === 0) return [];
  const eventId = newId();
  const payload = eventBody(eventId, type, now, data);
  const rows = endpoints.map((e) => ({
    id: newId(),
    endpointId: e.id,
    workspaceId,
    eventId,
    eventType: type,
    payload,
    status: 'pending',
    nextAttemptAt: now,
    createdAt: now,
  }));
  await tx.insert(webhookDeliveries).values(rows);
  return rows.map((r) => r.id);
}

/** Wakes the delivery queue for deliveries just recorded; a failure here is healed by the worker's sweep. */
export async function announceDeliveries(deps: Pick<Deps, 'queue' | 'log'>, ids: string[]): Promise<void> {
  for (const id of ids)
    await deps.queue.enqueueDelivery(id).catch((err) => deps.log.warn({ err, delivery: id }, 'webhook not queued'));
}

/** A ping for one endpoint (POST …/test): one attempt, not retried. */
export async function recordPing(deps: Pick<Deps, 'db' | 'clock'>, workspaceId: string, endpointId: string) {
  const endpoint = await getEndpoint(deps, workspaceId, endpointId);
  const now = deps.clock.now();
  const id = newId();
  const eventId = newId();
  const payload = eventBody(eventId, PING_EVENT, now, { endpoint_id: endpoint.id });
  await deps.db.insert(webhookDeliveries).values({
    id,
    endpointId: endpoint.id,
    workspaceId,
    eventId,
    eventType: PING_EVENT,
    payload,
    status: 'pending',
    nextAttemptAt: now,
    createdAt: now,
  });
  return id;
}

/** A new delivery of an old one's payload (a new webhook-id: the receiver is asked to take it again). */
export async function redeliver(
  deps: Pick<Deps, 'db' | 'clock'>,
  workspaceId: string,
  endpointId: string,
  deliveryId: string,
): Promise<WebhookDelivery> {
  await getEndpoint(deps, workspaceId, endpointId);
  const [old] = await deps.db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.endpointId, endpointId)));
  if (!old) throw new AppError('not_found', `no delivery ${deliveryId} of webhook endpoint ${endpointId}`);
  if (old.payload === null)
    throw new AppError(
      'conflict',
      `delivery ${deliveryId}'s payload is no longer kept (7 days); it cannot be sent again`,
    );
  const now = deps.clock.now();
  const [row] = await deps.db
    .insert(webhookDeliveries)
    .values({
      id: newId(),
      endpointId,
      workspaceId,
      eventId: old.eventId,
      eventType: old.eventType,
      payload: old.payload,
      status: 'pending',
      nextAttemptAt: now,
      createdAt: now,
    })
    .returning();
  return row!;
}

export async function listDeliveries(
  deps: Pick<Deps, 'db'>,
  workspaceId: string,
  endpointId: string,
): Promise<WebhookDelivery[]> {
  await getEndpoint(deps, workspaceId, endpointId);
  return deps.db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.endpointId, endpointId))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(DELIVERY_LIST_LIMIT);
}

export async function getDelivery(deps: Pick<Deps, 'db'>, id: string): Promise<WebhookDelivery | undefined> {
  const [row] = await deps.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
  return row;
}

/**
 * Pending deliveries whose attempt is due and not held by a live attempt: those whose queue job
 * was lost (a crash after the commit, a worker killed mid-attempt). Sending one twice is
 * harmless: an attempt claims its delivery first.
 */
export async function dueDeliveries(deps: Pick<Deps, 'db' | 'clock'>, graceMs: number, limit = 500) {
  const now = deps.clock.now();
  const rows = await deps.db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.status, 'pending'),
        lte(webhookDeliveries.nextAttemptAt, new Date(now.getTime() - graceMs)),
        or(isNull(webhookDeliveries.lockedUntil), lt(webhookDeliveries.lockedUntil, now)),
      ),
    )
    .limit(limit);
  return rows.map((r) => r.id);
}

/** Drops payloads older than the configured time; the rows stay for the history. */
export async function dropOldPayloads(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<void> {
  const before = new Date(deps.clock.now().getTime() - deps.config.webhooks.keepPayloadMs);
  await deps.db
    .update(webhookDeliveries)
    .set({ payload: null })
    .where(and(lt(webhookDeliveries.createdAt, before), sql`${webhookDeliveries.payload} is not null`));
}
