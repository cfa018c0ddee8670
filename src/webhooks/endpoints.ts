import { and, count, desc, eq } from 'drizzle-orm';
import { webhookEndpoints } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { decryptSecret, encryptSecret } from '../secrets/box.js';
import type { WebhookEvent } from './events.js';
import { newSigningSecret } from './sign.js';

/** Endpoints per account. */
export const MAX_ENDPOINTS = 10;

export type WebhookEndpoint = typeof webhookEndpoints.$inferSelect;

type EndpointDeps = Pick<Deps, 'db' | 'clock' | 'secretKey' | 'outbound' | 'config'>;

const secretContext = (workspaceId: string, endpointId: string) => `webhook:${workspaceId}:${endpointId}`;

/** The endpoint's signing secret, decrypted for signing a delivery. */
export const signingSecretOf = (deps: Pick<Deps, 'secretKey'>, e: WebhookEndpoint) =>
  decryptSecret(deps.secretKey, e.secretEnc, secretContext(e.workspaceId, e.id));

/**
 * An endpoint URL as it is stored: https (http only when the operator allows it), no
 * credentials, and an address the outbound policy lets the service reach now; every delivery
 * is checked again on the address it connects to.
 */
async function checkUrl(deps: EndpointDeps, raw: string): Promise<string> {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new AppError('bad_request', 'url: not a URL');
  }
  const allowed = deps.config.webhooks.allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!allowed.includes(u.protocol))
    throw new AppError(
      'bad_request',
      `url: must be ${deps.config.webhooks.allowHttp ? 'http or https' : 'https (the operator can allow http)'}`,
    );
  if (u.username || u.password) throw new AppError('bad_request', 'url: credentials do not belong in the URL');
  if (u.hash) throw new AppError('bad_request', 'url: a fragment is never sent; leave it out');
  await deps.outbound.check('url', u.href);
  return u.href;
}

function checkEvents(events: readonly WebhookEvent[]): WebhookEvent[] {
  const unique = [...new Set(events)];
  if (unique.length === 0) throw new AppError('bad_request', 'events: name at least one event');
  return unique;
}

export interface CreateEndpointInput {
  url: string;
  events: WebhookEvent[];
  description?: string;
}

/** Creates an endpoint; the secret is returned here and never again. */
export async function createEndpoint(
  deps: EndpointDeps,
  workspaceId: string,
  input: CreateEndpointInput,
): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const url = await checkUrl(deps, input.url);
  const events = checkEvents(input.events);
  const id = newId();
  const secret = newSigningSecret();
  const endpoint = await deps.db.transaction(async (tx) => {
    const [n] = await tx
      .select({ n: count() })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.workspaceId, workspaceId));
    if ((n?.n ?? 0) >= MAX_ENDPOINTS)
      throw new AppError('conflict', `an account has at most ${MAX_ENDPOINTS} webhook endpoints; delete one first`);
    const [row] = await tx
      .insert(webhookEndpoints)
      .values({
        id,
        workspaceId,
        url,
        events,
        description: input.description ?? '',
        secretEnc: encryptSecret(deps.secretKey, secret, secretContext(workspaceId, id)),
        createdAt: deps.clock.now(),
      })
      .returning();
    return row!;
  });
  return { endpoint, secret };
}

export async function listEndpoints(deps: Pick<Deps, 'db'>, workspaceId: string): Promise<WebhookEndpoint[]> {
  return deps.db
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.workspaceId, workspaceId))
    .orderBy(desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id));
}

export async function getEndpoint(deps: Pick<Deps, 'db'>, workspaceId: string, id: string): Promise<WebhookEndpoint> {
  const [row] = await deps.db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.workspaceId, workspaceId)));
  if (!row) throw new AppError('not_found', `no webhook endpoint ${id}`);
  return row;
}

export interface UpdateEndpointInput {
  url?: string;
  events?: WebhookEvent[];
  description?: string;
  enabled?: boolean;
}

/** Changes an endpoint; enabling it again clears the reason the service disabled it and its failing streak. */
export async function updateEndpoint(
  deps: EndpointDeps,
  workspaceId: string,
  id: string,
  input: UpdateEndpointInput,
): Promise<WebhookEndpoint> {
  await getEndpoint(deps, workspaceId, id);
  const set: Partial<typeof webhookEndpoints.$inferInsert> = {};
  if (input.url !== undefined) set.url = await checkUrl(deps, input.url);
  if (input.events !== undefined) set.events = checkEvents(input.events);
  if (input.description !== undefined) set.description = input.description;
  if (input.enabled !== undefined) {
    set.enabled = input.enabled;
    if (input.enabled) Object.assign(set, { disabledReason: null, failingSince: null });
  }
  if (Object.keys(set).length === 0) return getEndpoint(deps, workspaceId, id);
  const [row] = await deps.db
    .update(webhookEndpoints)
    .set(set)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.workspaceId, workspaceId)))
    .returning();
  if (!row) throw new AppError('not_found', `no webhook endpoint ${id}`);
  return row;
}

/** Deletes an endpoint and, by the schema's cascade, its deliveries (pending ones are never sent). */
export async function deleteEndpoint(deps: Pick<Deps, 'db'>, workspaceId: string, id: string): Promise<void> {
  const gone = await deps.db
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.workspaceId, workspaceId)))
    .returning({ id: webhookEndpoints.id });
  if (gone.length === 0) throw new AppError('not_found', `no webhook endpoint ${id}`);
}
