import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { Deps } from '../../deps.js';
import { runDeliveryJob } from '../../webhooks/attempt.js';
import { announceDeliveries, getDelivery, listDeliveries, recordPing, redeliver } from '../../webhooks/deliveries.js';
import { createEndpoint, deleteEndpoint, listEndpoints, updateEndpoint } from '../../webhooks/endpoints.js';
import { WEBHOOK_EVENTS } from '../../webhooks/events.js';
import { caller } from '../auth.js';
import { errorResponses } from '../errors.js';
import { getOwnList } from '../own-list.js';
import { IdParams, StringEnum, described, isoOrNull } from '../schema-parts.js';
import type { WebhookDelivery as DeliveryRow } from '../../webhooks/deliveries.js';
import type { WebhookEndpoint as EndpointRow } from '../../webhooks/endpoints.js';
import { audited } from '../audit.js';

// The webhook resources' wire shapes (WebhookEndpoint, WebhookDelivery) and their presenters.

const WebhookEvent = StringEnum(WEBHOOK_EVENTS);

export const WebhookEndpoint = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    url: Type.String({ format: 'uri' }),
    events: Type.Array(WebhookEvent),
    description: Type.String(),
    enabled: Type.Boolean(),
    disabled_reason: Type.Union([Type.String(), Type.Null()], {
      description: 'why the service disabled the endpoint (failing for days); null otherwise',
    }),
    failing_since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'WebhookEndpoint' },
);

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'the webhook-id header of every attempt' }),
    event_id: Type.String({ format: 'uuid' }),
    event: Type.String({ description: 'the event type, or ping' }),
    status: StringEnum(['pending', 'succeeded', 'failed'] as const),
    attempts: Type.Integer({ minimum: 0 }),
    next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_response_code: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    duration_ms: Type.Union([Type.Integer(), Type.Null()], { description: 'of the last attempt' }),
    payload_kept: Type.Boolean({ description: 'payloads are kept 7 days; only those can be redelivered' }),
    created_at: Type.String({ format: 'date-time' }),
    finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'WebhookDelivery' },
);

/** An endpoint without its signing secret (WebhookEndpoint). */
export function webhookEndpointJson(e: EndpointRow) {
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    description: e.description,
    enabled: e.enabled,
    disabled_reason: e.disabledReason,
    failing_since: isoOrNull(e.failingSince),
    created_at: e.createdAt.toISOString(),
  };
}

/** One delivery of an event to an endpoint (WebhookDelivery). */
export function webhookDeliveryJson(d: DeliveryRow) {
  return {
    id: d.id,
    event_id: d.eventId,
    event: d.eventType,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: isoOrNull(d.nextAttemptAt),
    last_response_code: d.lastStatusCode,
    last_error: d.lastError,
    duration_ms: d.lastDurationMs,
    payload_kept: d.payload !== null,
    created_at: d.createdAt.toISOString(),
    finished_at: isoOrNull(d.finishedAt),
  };
}

/** These resources' named schemas, for src/http/components.ts. */
export const webhookSchemas = [WebhookEndpoint, WebhookDelivery];

const Url = Type.String({
  minLength: 1,
  maxLength: 2000,
  format: 'uri',
  description: 'https (http when the operator allows it); must pass the outbound address policy',
});
const Events = Type.Array(WebhookEvent, { minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true });
const Description = Type.String({ maxLength: 500 });

const DeliveryParams = Type.Object({
  id: Type.String({ format: 'uuid' }),
  delivery_id: Type.String({ format: 'uuid' }),
});

export const webhookRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const full = { access: 'full' } as const;

  app.post(
    '/me/webhooks',
    {
      config: full,
      schema: {
        tags: ['webhooks'],
        operationId: 'createWebhook',
        summary: 'Add a webhook endpoint; its signing secret is in this answer only',
        body: Type.Object(
          { url: Url, events: Events, description: Type.Optional(Description) },
          {
            additionalProperties: false,
            examples: [
              { url: 'https://ci.example.com/hooks/emend', events: ['task.done', 'task.failed'], description: 'CI' },
            ],
          },
        ),
        response: {
          201: described(
            'the endpoint, with its signing secret (shown this once)',
            Type.Intersect([
              Type.Ref('WebhookEndpoint'),
              Type.Object({ secret: Type.String({ description: 'whsec_…: shown once; sign-checks every delivery' }) }),
            ]),
          ),
          ...errorResponses(400, 401, 403, 409),
        },
      },
    },
    async (request, reply) => {
      // The endpoint's id, URL and events, never its signing secret.
      const { endpoint, secret } = await audited(
        deps,
        request,
        (d) => createEndpoint(d, caller(request).workspace.id, request.body),
        ({ endpoint: e }) => ({
          action: 'webhook.created',
          targets: { webhook_id: e.id },
          detail: { url: e.url, events: e.events },
        }),
      );
      return reply.status(201).send({ ...webhookEndpointJson(endpoint), secret });
    },
  );

  getOwnList(app, deps, {
    url: '/me/webhooks',
    tag: 'webhooks',
    operationId: 'listWebhooks',
    summary: 'Your webhook endpoints (never their secrets)',
    answer: 'your webhook endpoints',
    item: 'WebhookEndpoint',
    list: (d, auth) => listEndpoints(d, auth.workspace.id),
    present: webhookEndpointJson,
  });

  app.patch(
    '/me/webhooks/:id',
    {
      config: full,
      schema: {
        tags: ['webhooks'],
        operationId: 'updateWebhook',
        summary: 'Change an endpoint: url, events, description, enabled',
        params: IdParams,
        body: Type.Object(
          {
            url: Type.Optional(Url),
            events: Type.Optional(Events),
            description: Type.Optional(Description),
            enabled: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false, examples: [{ enabled: true }, { events: ['task.done'] }] },
        ),
        response: {
          200: described('the endpoint as changed', Type.Ref('WebhookEndpoint')),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) =>
      webhookEndpointJson(
        await audited(
          deps,
          request,
          (d) => updateEndpoint(d, caller(request).workspace.id, request.params.id, request.body),
          (e) => ({
            action: 'webhook.changed',
            targets: { webhook_id: e.id },
            detail: { fields: Object.keys(request.body ?? {}), url: e.url, events: e.events, enabled: e.enabled },
          }),
        ),
      ),
  );

  app.delete(
    '/me/webhooks/:id',
    {
      config: full,
      schema: {
        tags: ['webhooks'],
        operationId: 'deleteWebhook',
        summary: 'Delete an endpoint and its delivery history',
        params: IdParams,
        response: { 204: Type.Null({ description: 'deleted' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await audited(deps, request, (d) => deleteEndpoint(d, caller(request).workspace.id, request.params.id), {
        action: 'webhook.removed',
        targets: { webhook_id: request.params.id },
      });
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/me/webhooks/:id/test',
    {
      config: full,
      schema: {
        tags: ['webhooks'],
        operationId: 'pingWebhook',
        summary: 'Send a signed ping now and answer how it went (one attempt, not retried)',
        params: IdParams,
        response: {
          200: described('the ping delivery, after its first attempt', Type.Ref('WebhookDelivery')),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      // The ping's delivery row and its record commit together; the attempt is made after.
      const id = await audited(
        deps,
        request,
        (d) => recordPing(d, caller(request).workspace.id, request.params.id),
        (delivery) => ({ action: 'webhook.tested', targets: { webhook_id: request.params.id, delivery_id: delivery } }),
      );
      await runDeliveryJob(deps, id);
      return webhookDeliveryJson((await getDelivery(deps, id))!);
    },
  );

  app.get(
    '/me/webhooks/:id/deliveries',
    {
      config: full,
      schema: {
        tags: ['webhooks'],
        operationId: 'listWebhookDeliveries',
        summary: "An endpoint's last 100 deliveries, newest first",
        params: IdParams,
        response: {
          200: described("the endpoint's deliveries, newest first", Type.Array(Type.Ref('WebhookDelivery'))),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) =>
      (await listDeliveries(deps, caller(request).workspace.id, request.params.id)).map(webhookDeliveryJson),
  );

  app.post(
    '/me/webhooks/:id/deliveries/:delivery_id/redeliver',
    {
      config: full,
      schema: {
        tags: ['webhooks'],
        operationId: 'redeliverWebhook',
        summary: 'Send a delivery’s payload again, as a new delivery (payloads are kept 7 days)',
        params: DeliveryParams,
        response: {
          202: described('the delivery, queued again', Type.Ref('WebhookDelivery')),
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const { id, delivery_id } = request.params;
      // The new delivery row and its record commit together; it is queued after.
      const row = await audited(
        deps,
        request,
        (d) => redeliver(d, caller(request).workspace.id, id, delivery_id),
        (made) => ({ action: 'webhook.redelivered', targets: { webhook_id: id, delivery_id, redelivery_id: made.id } }),
      );
      await announceDeliveries(deps, [row.id]);
      return reply.status(202).send(webhookDeliveryJson(row));
    },
  );
};
