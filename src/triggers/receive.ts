import { and, count, eq, gt } from 'drizzle-orm';
import { repoTriggers, triggerDeliveries } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { DeliveryHeaders } from '../scm/deliveries.js';
import { type ScmHost, hostById } from '../scm/hosts.js';
import { decide, eventKey } from './decide.js';
import { type RepoTrigger, triggerSecret } from './repo-triggers.js';

/**
 * The public receiving route's work (POST /v1/hooks/{host}/{id}): verify the delivery the host's
 * way, record it, and queue what it asks for. No code-host call happens before the answer: the
 * host waits on it (GitHub gives up after 10 s), and a forged delivery must cost nothing but a
 * lookup and a hash.
 */

/** Deliveries one trigger takes in a minute; a host redelivering in a loop, or a flood, gets 429. */
export const DELIVERIES_PER_MINUTE = 120;
/** A delivery's body at most (GitHub caps payloads at 25 MB; comments and reviews are far smaller). */
export const DELIVERY_MAX_BYTES = 1024 * 1024;

export interface IncomingDelivery {
  host: string;
  triggerId: string;
  headers: DeliveryHeaders;
  body: Buffer;
}

export type Received =
  | { outcome: 'accepted'; delivery: string }
  | { outcome: 'duplicate'; delivery: string }
  | { outcome: 'ignored'; delivery: string; reason: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function receiveDelivery(
  deps: Pick<Deps, 'db' | 'config' | 'secretKey' | 'clock' | 'log' | 'queue'>,
  d: IncomingDelivery,
): Promise<Received> {
  const host = hostById(deps.config, d.host);
  const [trigger] =
    host && UUID.test(d.triggerId)
      ? await deps.db
          .select()
          .from(repoTriggers)
          .where(and(eq(repoTriggers.id, d.triggerId), eq(repoTriggers.host, d.host)))
      : [];
  if (!host || !trigger) {
    // A hook left behind on a repository no longer enabled (or a guess): refused, and said in the log.
    deps.log.warn({ host: d.host, trigger: d.triggerId }, 'delivery for no enabled repository refused');
    throw new AppError('not_found', `no repository has triggers at ${d.host}/${d.triggerId}`);
  }
  if (!host.kind.verifyDelivery(d.headers, d.body, triggerSecret(deps, trigger))) {
    deps.log.warn({ host: d.host, trigger: trigger.id }, 'delivery with a missing or wrong signature refused');
    throw new AppError(
      'unauthorized',
      `the delivery is not signed with this repository's secret (${host.kind.productName}'s way)`,
    );
  }
  const deliveryId = host.kind.deliveryId(d.headers);
  const event = host.kind.deliveryEvent(d.headers);
  if (!deliveryId || !event) throw new AppError('bad_request', 'the delivery carries no delivery id or event header');
  return recordDelivery(deps, host, trigger, { deliveryId, event, body: d.body });
}

/** A verified delivery for a trigger: rate-limited per trigger, recorded once, and queued unless ignored. */
export async function recordDelivery(
  deps: Pick<Deps, 'db' | 'clock' | 'log' | 'queue'>,
  host: ScmHost,
  trigger: RepoTrigger,
  d: { deliveryId: string; event: string; body: Buffer | object },
): Promise<Received> {
  const { deliveryId, event } = d;
  const now = deps.clock.now();
  const [recent] = await deps.db
    .select({ n: count() })
    .from(triggerDeliveries)
    .where(
      and(
        eq(triggerDeliveries.triggerId, trigger.id),
        gt(triggerDeliveries.receivedAt, new Date(now.getTime() - 60_000)),
      ),
    );
  if (recent!.n >= DELIVERIES_PER_MINUTE)
    throw new AppError('rate_limited', `at most ${DELIVERIES_PER_MINUTE} deliveries a minute per repository`, 60);

  const payload = Buffer.isBuffer(d.body) ? parseBody(d.body) : d.body;
  const read = host.kind.readEvent(event, payload);
  const decision = 'ignored' in read ? read : decide(trigger, read);
  const key = 'ignored' in read ? null : eventKey(read);
  const id = newId();
  const ignored = 'ignored' in decision ? decision.ignored : undefined;
  const [row] = await deps.db
    .insert(triggerDeliveries)
    .values({
      id,
      triggerId: trigger.id,
      deliveryId,
      event,
      eventKey: key,
      status: ignored ? 'ignored' : 'received',
      reason: ignored ?? null,
      payload: ignored ? null : (payload as object),
      receivedAt: now,
      doneAt: ignored ? now : null,
    })
    .onConflictDoNothing()
    .returning({ id: triggerDeliveries.id });
  if (!row) return { outcome: 'duplicate', delivery: deliveryId };
  if (ignored) {
    deps.log.info({ trigger: trigger.id, delivery: deliveryId, event, reason: ignored }, 'delivery ignored');
    return { outcome: 'ignored', delivery: deliveryId, reason: ignored };
  }
  // Recorded first: a job lost here is found again by the sweep (deliveries still `received`).
  await deps.queue
    .enqueueTrigger({ delivery: id })
    .catch((err) => deps.log.warn({ err, delivery: id }, 'trigger job not queued; the sweep will'));
  return { outcome: 'accepted', delivery: deliveryId };
}

export function parseBody(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new AppError('bad_request', 'the delivery body is not JSON (register the hook with content type JSON)');
  }
}
