import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { Deps } from '../../deps.js';
import { connectScm, disconnectScm } from '../../scm/account-scm.js';
import { authorizeUrl, completeOAuth } from '../../scm/oauth.js';
import { caller } from '../auth.js';
import { errorResponses } from '../schemas.js';

const Connection = Type.Object({ scm: Type.Union([Type.String(), Type.Null()], { description: 'the login on the code host; null when not connected' }) });

export const scmRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/me/scm',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        summary: 'Connect your code-host account with a token (checked against the host, stored encrypted, never returned)',
        body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 500, description: 'a personal access token with repo scope' }) }, { additionalProperties: false }),
        response: { 200: Connection, ...errorResponses(400, 401, 403, 502) },
      },
    },
    async (request) => ({ scm: await connectScm(deps, caller(request).account.id, request.body.token) }),
  );

  app.delete(
    '/me/scm',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        summary: 'Disconnect your code-host account (the stored token is deleted)',
        response: { 200: Type.Object({ scm: Type.Null(), disconnected: Type.Boolean({ description: 'false when nothing was connected' }) }), ...errorResponses(401, 403) },
      },
    },
    async (request) => ({ scm: null, disconnected: await disconnectScm(deps, caller(request).account.id) }),
  );

  app.get(
    '/auth/scm/start',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        summary: 'Start connecting your code-host account through OAuth: open authorize_url in a browser',
        response: { 200: Type.Object({ authorize_url: Type.String() }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => ({ authorize_url: authorizeUrl(deps, caller(request).account.id) }),
  );

  app.get(
    '/auth/scm/callback',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        summary: 'Where the code host sends the browser back after approval; connects the account named by state',
        security: [],
        querystring: Type.Object({ code: Type.String({ minLength: 1, maxLength: 500 }), state: Type.String({ minLength: 1, maxLength: 1000 }) }),
        response: { 200: Type.Object({ ok: Type.Boolean(), scm: Type.String() }), ...errorResponses(400, 404, 502) },
      },
    },
    async (request) => ({ ok: true, scm: (await completeOAuth(deps, request.query.code, request.query.state)).login }),
  );
};
