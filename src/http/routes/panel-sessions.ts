import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { type SessionRecord, endSession, listSessions } from '../../accounts/sessions.js';
import type { Deps } from '../../deps.js';
import { caller } from '../auth.js';
import { errorResponses } from '../errors.js';
import { IdParams, Nullable, Uuid, described } from '../schema-parts.js';
import { sessionSecretOf } from '../session-cookie.js';
import { audited } from '../audit.js';

const PanelSession = Type.Object({
  id: Uuid({ description: 'the session’s id (never its secret, which only the browser holds)' }),
  created_at: Type.String({ format: 'date-time', description: 'when it was signed in' }),
  expires_at: Type.String({
    format: 'date-time',
    description: 'when it ends by itself (12 hours, or its token’s expiry if sooner)',
  }),
  user_agent: Nullable(Type.String({ description: 'the browser’s User-Agent at sign-in, clipped to 300 characters' })),
  client_address: Nullable(
    Type.String({ description: 'the address it signed in from, as the trusted-proxy rules read it' }),
  ),
  workspace_id: Uuid({ description: 'the workspace it acts in' }),
  current: Type.Boolean({ description: 'true for the session this request came with' }),
});

const sessionJson = (s: SessionRecord) => ({
  id: s.id,
  created_at: s.createdAt.toISOString(),
  expires_at: s.expiresAt.toISOString(),
  user_agent: s.userAgent,
  client_address: s.clientAddress,
  workspace_id: s.workspaceId,
  current: s.current,
});

/**
 * A person's own control-panel sessions: listed (GET /v1/me/sessions) and ended one by one
 * (DELETE /v1/me/sessions/{id}), from the panel or with a token. An owner ends a member's at once
 * with POST /v1/workspaces/{id}/members/{account_id}/sign-out (src/http/routes/workspaces.ts).
 */
export const panelSessionRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/me/sessions',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'listSessions',
        summary: 'Your live control-panel sessions, newest first',
        response: {
          200: described(
            'your live sessions (ended, expired and revoked-token ones are not listed)',
            Type.Array(PanelSession),
          ),
          ...errorResponses(401, 403),
        },
      },
    },
    async (request) =>
      (await listSessions(deps, caller(request).account.id, sessionSecretOf(request))).map(sessionJson),
  );

  app.delete(
    '/me/sessions/:id',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'endSession',
        summary:
          'End one of your control-panel sessions (a token a code-host sign-in issued for it is revoked with it)',
        params: IdParams,
        response: { 204: Type.Null({ description: 'ended' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await audited(deps, request, (d) => endSession(d, caller(request).account.id, request.params.id), {
        action: 'session.ended',
        targets: { session_id: request.params.id },
      });
      return reply.status(204).send(null);
    },
  );
};
