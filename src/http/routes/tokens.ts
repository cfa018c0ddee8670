import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { createPersonalToken, listTokens, revokeToken } from '../../accounts/token-store.js';
import type { Deps } from '../../deps.js';
import { caller } from '../auth.js';
import { errorResponses } from '../errors.js';
import { getOwnList } from '../own-list.js';
import { IdParams, Nullable, StringEnum, Timestamp, Uuid, described, isoOrNull } from '../schema-parts.js';
import type { apiTokens } from '../../db/schema.js';

// The token resource's wire shape (TokenRecord) and its presenter.

export const TokenRecord = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    kind: StringEnum(['full', 'demo'] as const),
    last4: Type.String(),
    created_at: Timestamp,
    last_used_at: Nullable(Timestamp),
    expires_at: Nullable(Timestamp),
    revoked_at: Nullable(Timestamp),
  },
  { $id: 'TokenRecord' },
);

/** A token without its secret (TokenRecord). */
export function tokenJson(t: typeof apiTokens.$inferSelect) {
  return {
    id: t.id,
    name: t.name,
    kind: t.kind,
    last4: t.last4,
    created_at: t.createdAt.toISOString(),
    last_used_at: isoOrNull(t.lastUsedAt),
    expires_at: isoOrNull(t.expiresAt),
    revoked_at: isoOrNull(t.revokedAt),
  };
}

/** This resource's named schemas, for src/http/components.ts. */
export const tokenSchemas = [TokenRecord];

export const tokenRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/me/tokens',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'createToken',
        summary: 'Issue a personal access token; the secret is in this response only',
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ maxLength: 100 })),
            expires_in_days: Type.Optional(
              Type.Integer({ minimum: 1, maximum: 3650, description: 'default: never expires' }),
            ),
          },
          {
            additionalProperties: false,
            examples: [{ name: 'ci', expires_in_days: 90 }],
            description: 'optional; an empty body makes an unnamed token that never expires',
          },
        ),
        response: {
          201: described(
            'the new token; its secret is shown this once',
            Type.Intersect([
              Type.Ref('TokenRecord'),
              Type.Object({ token: Type.String({ description: 'the secret, shown once' }) }),
            ]),
          ),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      const body = (request.body ?? {}) as typeof request.body;
      const { record, secret } = await createPersonalToken(
        deps,
        caller(request).account.id,
        body.name ?? '',
        body.expires_in_days,
      );
      return reply.status(201).send({ ...tokenJson(record), token: secret });
    },
  );

  getOwnList(app, deps, {
    url: '/me/tokens',
    tag: 'account',
    operationId: 'listTokens',
    summary: 'Your tokens, without secrets',
    answer: 'your tokens, without secrets',
    item: 'TokenRecord',
    list: listTokens,
    present: tokenJson,
  });

  app.delete(
    '/me/tokens/:id',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'revokeToken',
        summary: 'Revoke a token',
        params: IdParams,
        response: {
          200: described('the token, revoked', Type.Ref('TokenRecord')),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => tokenJson(await revokeToken(deps, caller(request).account.id, request.params.id)),
  );
};
