import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { Deps } from '../../deps.js';
import {
  type GroupBot,
  type GroupBotChange,
  groupHookUrl,
  listGroupBots,
  registerGroupBot,
  removeGroupBot,
} from '../../workspaces/group-bots.js';
import { auditWithin } from '../audit.js';
import { caller } from '../auth.js';
import { errorResponses } from '../errors.js';
import { ScmHostId, Url, described } from '../schema-parts.js';

const Timestamp = Type.String({ format: 'date-time' });
const GroupPath = Type.String({
  minLength: 1,
  maxLength: 500,
  description: 'the GitLab group’s full path (`acme` or `acme/tools`) or the Gitea organisation’s name',
});

const Bot = Type.Object({
  host: Type.String({ description: 'the code host (its id on this server)' }),
  group: Type.String({ description: 'the group or organisation, as the host spells it' }),
  bot: Type.String({ description: 'the bot user emend acts as on the group’s repositories' }),
  hook_url: Url({ description: 'where the group’s webhook delivers its repositories’ events' }),
  created_at: Timestamp,
  updated_at: Timestamp,
});

const botJson = (deps: Deps, b: GroupBot) => ({
  host: b.host,
  group: b.groupPath,
  bot: b.botLogin,
  hook_url: groupHookUrl(deps.config, b.host, b.id),
  created_at: b.createdAt.toISOString(),
  updated_at: b.updatedAt.toISOString(),
});

/** GitLab groups' and Gitea organisations' bots (docs/code-host.md): one registration for all their repositories. */
export const groupBotRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/me/scm/groups',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'registerGroupBot',
        summary:
          "Register a GitLab group's or Gitea organisation's bot: emend acts as it on the group's repositories and " +
          'registers one webhook on the group',
        description:
          'The token is checked against the host (its user, that it sees the group), stored encrypted and never ' +
          'returned. GitLab: a group access token (api scope, Maintainer or Owner role); Gitea: a token of a bot ' +
          'account that owns the organisation (write:repository, write:organization, read:user). The same ' +
          'workspace registering again replaces the token and keeps the webhook.',
        body: Type.Object(
          {
            host: Type.Optional(ScmHostId()),
            group: GroupPath,
            token: Type.String({ minLength: 1, maxLength: 500, description: 'the bot’s token' }),
          },
          { additionalProperties: false, examples: [{ host: 'gitlab', group: 'acme', token: 'glpat-…' }] },
        ),
        response: {
          200: described('the token was replaced', Bot),
          201: described('registered: the group’s webhook is on', Bot),
          ...errorResponses(400, 401, 403, 409, 502),
        },
      },
    },
    async (request, reply) => {
      // The bot's hook is made on the code host first; recorded in the transaction that stores the
      // bot (or its new token). Names only, never its token.
      const audit = auditWithin(deps, request, ({ bot }: GroupBotChange) => ({
        action: 'group_bot.added',
        targets: { group_bot_id: bot.id },
        detail: { host: bot.host, group: bot.groupPath },
      }));
      const { bot, created } = await registerGroupBot(deps, caller(request).workspace.id, request.body, audit.within);
      await audit.announce();
      return reply.status(created ? 201 : 200).send(botJson(deps, bot));
    },
  );

  app.get(
    '/me/scm/groups',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'listGroupBots',
        summary: "The workspace's group and organisation bots (never their tokens)",
        response: {
          200: described('the bots', Type.Object({ groups: Type.Array(Bot) })),
          ...errorResponses(401, 403),
        },
      },
    },
    async (request) => ({
      groups: (await listGroupBots(deps, caller(request).workspace.id)).map((b) => botJson(deps, b)),
    }),
  );

  app.delete(
    '/me/scm/groups',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'removeGroupBot',
        summary: "Remove a group's bot: its webhook is removed from the group (with the bot's token), then the token",
        querystring: Type.Object(
          { host: Type.Optional(ScmHostId()), group: GroupPath },
          { additionalProperties: false },
        ),
        response: {
          200: described('removed', Type.Object({ deleted: Type.Boolean() })),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      // Recorded in the transaction that removes the bot; its group's hook is removed after.
      const audit = auditWithin<GroupBot>(deps, request, {
        action: 'group_bot.removed',
        detail: { host: request.query.host, group: request.query.group },
      });
      await removeGroupBot(deps, caller(request).workspace.id, request.query.host, request.query.group, audit.within);
      await audit.announce();
      return { deleted: true };
    },
  );
};
