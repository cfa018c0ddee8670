import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { createPersonalToken, listTokens, revokeToken } from '../../accounts/token-store.js';
import { TOKEN_SCOPES } from '../../db/access-vocabulary.js';
import { AppError } from '../../errors.js';
import { scopesForNewToken } from '../../workspaces/access.js';
import { membershipOf } from '../../workspaces/workspaces.js';
import type { Deps } from '../../deps.js';
import { caller } from '../auth.js';
import { errorResponses } from '../errors.js';
import { getOwnList } from '../own-list.js';
import { IdParams, Nullable, StringEnum, Timestamp, Uuid, described, isoOrNull } from '../schema-parts.js';
import type { apiTokens } from '../../db/schema.js';
import { audited } from '../audit.js';

// The token resource's wire shape (TokenRecord) and its presenter.

export const TokenRecord = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    kind: StringEnum(['full', 'demo'] as const),
    workspace_id: Uuid({ description: 'the workspace the token acts in' }),
    scopes: Nullable(
      Type.Array(StringEnum(TOKEN_SCOPES), {
        description: 'what the token may do; null: all its owner’s role in the workspace allows',
      }),
    ),
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
    workspace_id: t.workspaceId,
    scopes: t.scopes,
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
            workspace_id: Type.Optional(
              Uuid({ description: 'the workspace it acts in (one of yours); default: the calling token’s' }),
            ),
            scopes: Type.Optional(
              Type.Array(StringEnum(TOKEN_SCOPES), {
                maxItems: TOKEN_SCOPES.length,
                description:
                  'narrower than your role (docs/teams.md); default: the calling token’s (all your role allows for an unscoped one)',
              }),
            ),
          },
          {
            additionalProperties: false,
            examples: [{ name: 'ci', expires_in_days: 90, scopes: ['tasks:read', 'tasks:write'] }],
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
      const auth = caller(request);
      const workspaceId = body.workspace_id ?? auth.workspace.id;
      // Another workspace of the caller's: its role there bounds the token; the minting token's scopes bound it too.
      if (workspaceId !== auth.workspace.id && !(await membershipOf(deps.db, auth.account.id, workspaceId)))
        throw new AppError('not_found', `no workspace ${workspaceId}`);
      const scopes = scopesForNewToken(auth.scopes, body.scopes);
      const { record, secret } = await audited(
        deps,
        request,
        (d) =>
          createPersonalToken(
            d,
            { accountId: auth.account.id, workspaceId, scopes },
            body.name ?? '',
            body.expires_in_days,
          ),
        ({ record }) => ({
          action: 'token.minted',
          workspaceId,
          targets: { token_id: record.id },
          detail: { name: record.name, scopes: record.scopes, expires_at: record.expiresAt?.toISOString() ?? null },
        }),
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
    list: (d, auth) => listTokens(d, auth.account.id),
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
    async (request) =>
      tokenJson(
        await audited(
          deps,
          request,
          (d) => revokeToken(d, caller(request).account.id, request.params.id),
          (row) => ({ action: 'token.revoked', workspaceId: row.workspaceId, targets: { token_id: row.id } }),
        ),
      ),
  );
};
