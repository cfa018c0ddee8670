import { type FastifyPluginAsyncTypebox, Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { desc, eq } from 'drizzle-orm';
import { TRIGGER_DELIVERY_STATUSES, triggerDeliveries } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { DELIVERY_MAX_BYTES, receiveDelivery } from '../../triggers/receive.js';
import { receiveAppDelivery } from '../../triggers/receive-app.js';
import { receiveGroupDelivery } from '../../triggers/receive-group.js';
import { groupBotFor, groupHookUrl } from '../../workspaces/group-bots.js';
import { hostById } from '../../scm/hosts.js';
import { appHookUrl } from '../../scm/github/app.js';
import {
  MAX_CI_ROUNDS,
  type RepoTrigger,
  TRIGGER_DEFAULTS,
  type TriggerChange,
  TRIGGER_EVENTS,
  disableTrigger,
  enableTrigger,
  getTrigger,
  hookUrl,
} from '../../triggers/repo-triggers.js';
import { caller } from '../auth.js';
import { RepoQuery, deleteForRepo, repoOfQuery } from '../repo-query.js';
import { errorResponses } from '../errors.js';
import { StringEnum, Url, described } from '../schema-parts.js';
import { auditWithin } from '../audit.js';

const Timestamp = Type.String({ format: 'date-time' });
const RECENT_DELIVERIES = 20;

const TriggerEvent = StringEnum(TRIGGER_EVENTS);

/** What a host hears back from a delivery route: accepted (202), a redelivery or ignored (200), or refused. */
const deliveryAnswers = (accepted: string) => ({
  200: described(
    'a redelivery (nothing new) or an event that starts nothing (the reason says why)',
    Type.Object({
      outcome: StringEnum(['duplicate', 'ignored'] as const),
      delivery: Type.String(),
      reason: Type.Optional(Type.String()),
    }),
  ),
  202: described(accepted, Type.Object({ outcome: StringEnum(['accepted'] as const), delivery: Type.String() })),
  ...errorResponses(400, 401, 404, 413, 429),
});

const Trigger = Type.Object({
  repo: Type.String({ description: 'the repository, normalised' }),
  host: Type.String({ description: 'the code host (its id on this server)' }),
  hook_url: Url({ description: 'where the host delivers events: the host must be able to reach it' }),
  mention: Type.String({ description: 'a comment mentioning this starts a task' }),
  label: Type.String({ description: 'this label, added to an issue, starts a task' }),
  events: Type.Array(TriggerEvent, {
    description:
      'comments: mentions in comments on issues and on emend’s pull requests; labels: the label on an issue; ' +
      'reviews: line comments and reviews requesting changes, mentioning emend, on its pull requests',
  }),
  ci_rounds: Type.Integer({
    minimum: 0,
    maximum: MAX_CI_ROUNDS,
    description:
      'automatic CI follow-ups per pull request emend opened: when its checks fail, a follow-up fixes them, at most ' +
      'this many times (0: off; docs/triggers.md, "CI follow-ups")',
  }),
  recent_deliveries: Type.Array(
    Type.Object({
      delivery_id: Type.String({ description: "the host's delivery id" }),
      event: Type.String({ description: "the host's event name" }),
      status: StringEnum(TRIGGER_DELIVERY_STATUSES),
      reason: Type.Union([Type.String(), Type.Null()], { description: 'why it was ignored, answered or failed' }),
      task_id: Type.Union([Type.String(), Type.Null()], { description: 'the task it started' }),
      received_at: Timestamp,
    }),
    { description: `the last ${RECENT_DELIVERIES}, newest first` },
  ),
  created_at: Timestamp,
  updated_at: Timestamp,
});

/** Per-repository triggers (docs/triggers.md) and the public route the code hosts deliver to. */
export const triggerRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const repoOf = (raw: string) => repoOfQuery(deps.config, raw);

  /** The app's and group bots' triggers are delivered by their one webhook, not a hook of their own. */
  const hookUrlOf = async (t: RepoTrigger) => {
    if (t.hookId !== null) return hookUrl(deps.config, t.host, t.id);
    const bot = hostById(deps.config, t.host)?.app
      ? undefined
      : await groupBotFor(deps, t.workspaceId, t.host, t.repoOwner);
    return bot ? groupHookUrl(deps.config, t.host, bot.id) : appHookUrl(deps.config, t.host);
  };

  const triggerJson = async (t: RepoTrigger) => {
    const recent = await deps.db
      .select()
      .from(triggerDeliveries)
      .where(eq(triggerDeliveries.triggerId, t.id))
      .orderBy(desc(triggerDeliveries.receivedAt), desc(triggerDeliveries.id))
      .limit(RECENT_DELIVERIES);
    return {
      repo: t.repo,
      host: t.host,
      hook_url: await hookUrlOf(t),
      mention: t.mention,
      label: t.label,
      events: t.events as (typeof TRIGGER_EVENTS)[number][],
      ci_rounds: t.ciRounds,
      recent_deliveries: recent.map((d) => ({
        delivery_id: d.deliveryId,
        event: d.event,
        status: d.status,
        reason: d.reason,
        task_id: d.taskId,
        received_at: d.receivedAt.toISOString(),
      })),
      created_at: t.createdAt.toISOString(),
      updated_at: t.updatedAt.toISOString(),
    };
  };

  app.get(
    '/me/repos/triggers',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'getRepoTriggers',
        summary: "A repository's triggers: what starts a task from the code host, and the latest deliveries",
        querystring: RepoQuery,
        response: { 200: described('the triggers', Trigger), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => triggerJson(await getTrigger(deps, caller(request).workspace.id, repoOf(request.query.repo))),
  );

  app.put(
    '/me/repos/triggers',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'enableRepoTriggers',
        summary:
          'Turn triggers on for a repository (a webhook is registered on it with your code-host connection), or change them',
        querystring: RepoQuery,
        body: Type.Object(
          {
            mention: Type.Optional(
              Type.String({ minLength: 2, maxLength: 40, description: `default "${TRIGGER_DEFAULTS.mention}"` }),
            ),
            label: Type.Optional(
              Type.String({ minLength: 1, maxLength: 50, description: `default "${TRIGGER_DEFAULTS.label}"` }),
            ),
            events: Type.Optional(
              Type.Array(TriggerEvent, { minItems: 1, maxItems: 3, description: 'default: all three' }),
            ),
            ci_rounds: Type.Optional(
              Type.Integer({
                minimum: 0,
                maximum: MAX_CI_ROUNDS,
                description: `automatic CI follow-ups per pull request, 0 (off) to ${MAX_CI_ROUNDS}; default ${TRIGGER_DEFAULTS.ciRounds}`,
              }),
            ),
          },
          {
            additionalProperties: false,
            description: 'fields left out keep their value (or take the default)',
            examples: [
              { mention: '@emend', label: 'emend', events: ['comments', 'labels', 'reviews'], ci_rounds: 2 },
              { ci_rounds: 0 },
            ],
          },
        ),
        response: {
          200: described('changed', Trigger),
          201: described('turned on: the webhook is registered', Trigger),
          ...errorResponses(400, 401, 403, 409, 412, 502),
        },
      },
    },
    async (request, reply) => {
      const repo = repoOf(request.query.repo);
      // A new trigger's webhook is registered on the code host first; the row and its record then
      // commit together (or the hook is removed again).
      const { ci_rounds: ciRounds, ...options } = request.body ?? {};
      const audit = auditWithin(deps, request, (change: TriggerChange) => ({
        action: 'triggers.changed',
        targets: { repo: repo.url, trigger_id: change.trigger.id },
        detail: { created: change.created, fields: Object.keys(request.body ?? {}) },
      }));
      const { trigger, created } = await enableTrigger(
        deps,
        caller(request).workspace.id,
        repo,
        { ...options, ...(ciRounds !== undefined ? { ciRounds } : {}) },
        audit.within,
      );
      await audit.announce();
      return reply.status(created ? 201 : 200).send(await triggerJson(trigger));
    },
  );

  deleteForRepo(app, deps, {
    url: '/me/repos/triggers',
    operationId: 'disableRepoTriggers',
    summary: "Turn a repository's triggers off: its webhook is removed from the code host",
    answer: 'turned off',
    // The row and its record go in one transaction; the webhook is removed from the host after.
    remove: disableTrigger,
    action: 'triggers.removed',
  });

  // The receiving route reads its body as bytes: the signature is over the bytes as sent.
  await app.register(async (scope) => {
    const hooks = scope.withTypeProvider<TypeBoxTypeProvider>();
    // JSON only, as emend registers its hooks (GitHub could be set to send forms): anything else is
    // 415 before the signature is even looked at.
    hooks.removeAllContentTypeParsers();
    hooks.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: DELIVERY_MAX_BYTES },
      (_req, body, done) => done(null, body),
    );
    hooks.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => {
      // No body at all is no delivery, whatever the content type says: the signature check answers it.
      if (body.length === 0) return done(null, undefined);
      done(new AppError('unsupported_media_type', 'a delivery must be sent as application/json'), undefined);
    });
    hooks.post(
      '/hooks/:host/:id',
      {
        config: { access: 'public', rawBody: true },
        bodyLimit: DELIVERY_MAX_BYTES,
        schema: {
          tags: ['triggers'],
          operationId: 'receiveHostEvent',
          // Public: the code host proves itself with the trigger's secret, not a token.
          security: [],
          summary:
            "Where a code host delivers a repository's events (GitHub, GitLab, Gitea/Forgejo webhooks), verified the host's way",
          description:
            'Public: the host signs each delivery (X-Hub-Signature-256, X-Gitea-Signature) or sends the secret ' +
            '(X-Gitlab-Token). The body is the host’s JSON payload, read as sent. Answers before any call to the host.',
          params: Type.Object({
            host: Type.String({ maxLength: 100, description: 'the code host’s id on this server' }),
            id: Type.String({ maxLength: 100, description: 'the trigger (from hook_url)' }),
          }),
          response: deliveryAnswers('recorded and queued'),
        },
      },
      async (request, reply) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const received = await receiveDelivery(deps, {
          host: request.params.host,
          triggerId: request.params.id,
          headers: request.headers,
          body,
        });
        return reply.status(received.outcome === 'accepted' ? 202 : 200).send(received);
      },
    );
    hooks.post(
      '/hooks/:host/groups/:id',
      {
        config: { access: 'public', rawBody: true },
        bodyLimit: DELIVERY_MAX_BYTES,
        schema: {
          tags: ['triggers'],
          operationId: 'receiveGroupEvent',
          security: [],
          summary:
            "Where a GitLab group's or Gitea organisation's webhook delivers its repositories' events, verified the host's way",
          description:
            'Public: the host sends the secret (X-Gitlab-Token) or signs each delivery (X-Gitea-Signature) with the ' +
            'group bot’s secret. Events go to the triggers of the workspace that registered the bot, on the ' +
            'repository they name. Answers before any call to the host.',
          params: Type.Object({
            host: Type.String({ maxLength: 100, description: 'the code host’s id on this server' }),
            id: Type.String({ maxLength: 100, description: 'the group bot (from hook_url)' }),
          }),
          response: deliveryAnswers('recorded and queued'),
        },
      },
      async (request, reply) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const received = await receiveGroupDelivery(deps, {
          host: request.params.host,
          botId: request.params.id,
          headers: request.headers,
          body,
        });
        return reply.status(received.outcome === 'accepted' ? 202 : 200).send(received);
      },
    );
    hooks.post(
      '/apps/:host/webhook',
      {
        config: { access: 'public', rawBody: true },
        bodyLimit: DELIVERY_MAX_BYTES,
        schema: {
          tags: ['triggers'],
          operationId: 'receiveAppEvent',
          security: [],
          summary: "Where GitHub delivers the events of emend's GitHub App, for every repository it is installed on",
          description:
            'Public: GitHub signs each delivery with the app’s webhook secret (X-Hub-Signature-256). Installation ' +
            'events record, suspend or remove an installation; repository events go to the triggers of the ' +
            'workspace that claimed the installation. Answers before any call to the host.',
          params: Type.Object({
            host: Type.String({ maxLength: 100, description: 'the code host’s id on this server' }),
          }),
          response: deliveryAnswers('recorded (and queued when it asks for work)'),
        },
      },
      async (request, reply) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const received = await receiveAppDelivery(deps, { host: request.params.host, headers: request.headers, body });
        return reply.status(received.outcome === 'accepted' ? 202 : 200).send(received);
      },
    );
  });
};
