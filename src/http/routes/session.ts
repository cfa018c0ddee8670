import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { authenticateToken } from '../../accounts/authenticate.js';
import { authenticateSession, createSession, deleteSession } from '../../accounts/sessions.js';
import { ssoRefusal } from '../../workspaces/sso-settings.js';
import { audited } from '../audit.js';
import { errorResponses } from '../errors.js';
import { described, StringEnum } from '../schema-parts.js';
import { checkSameOrigin, clearSessionCookie, sessionSecretOf, setSessionCookie } from '../session-cookie.js';

const SessionSummary = Type.Object({
  id: Type.String({ description: 'the account id' }),
  email: Type.String(),
  name: Type.String(),
  plan: Type.String({ description: '`demo` for a demo token' }),
  token_kind: StringEnum(['full', 'demo'] as const),
  expires_at: Type.String({ description: 'when the session ends (12 hours, or the token’s expiry if sooner)' }),
});

const originOf = (value: string) => {
  try {
    return new URL(value).origin;
  } catch {
    return 'invalid';
  }
};

/**
 * Control-panel sign-in: POST /auth/session trades a token for an HttpOnly session cookie
 * (the token itself never reaches the page's storage), DELETE /auth/session signs out.
 */
export const sessionRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/auth/session',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'createSession',
        summary: 'Sign in to the control panel with a token: sets the HttpOnly session cookie emend_session',
        description:
          'The token is checked exactly as a Bearer token is (full and demo tokens). The session lasts 12 hours or until the token expires, and ends when the token is revoked. A request from a browser on another site (a foreign Origin header) is refused.',
        security: [],
        body: Type.Object(
          { token: Type.String({ minLength: 1, maxLength: 200 }) },
          { additionalProperties: false, examples: [{ token: 'tk_…' }] },
        ),
        response: {
          200: described('signed in: the session cookie is set', SessionSummary),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      // A foreign page must not sign a visitor in to someone else's account (login CSRF).
      const origin = request.headers.origin;
      if (
        origin !== undefined &&
        ![originOf(deps.config.baseUrl), `${request.protocol}://${request.host}`].includes(originOf(origin))
      ) {
        throw new AppError(
          'forbidden',
          'sign-in must come from the control panel itself (the Origin header names another site)',
        );
      }
      const { auth, expiresAt: tokenExpiresAt } = await authenticateToken(deps, request.body.token.trim());
      const sso = await ssoRefusal(deps, auth.workspace.id, null);
      if (sso) throw new AppError('forbidden', sso);
      const session = await audited(
        deps,
        request,
        (d) =>
          createSession(
            d,
            { accountId: auth.account.id, tokenId: auth.tokenId, tokenExpiresAt },
            { userAgent: request.headers['user-agent'], address: request.ip },
          ),
        (s) => ({ action: 'session.signed_in', targets: { session_id: s.id } }),
        auth,
      );
      setSessionCookie(deps, reply, session.secret, session.expiresAt);
      reply.header('cache-control', 'no-store');
      return {
        id: auth.account.id,
        email: auth.account.email,
        name: auth.account.name,
        plan: auth.tokenKind === 'demo' ? 'demo' : auth.workspace.plan,
        token_kind: auth.tokenKind,
        expires_at: session.expiresAt.toISOString(),
      };
    },
  );

  app.delete(
    '/auth/session',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'deleteSession',
        summary: 'Sign out of the control panel: ends the session and clears its cookie',
        description: 'Harmless without a session. A token issued by a code-host sign-in is revoked with its session.',
        security: [],
        response: {
          200: described(
            'signed out: the session cookie is cleared',
            Type.Object({ signed_out: Type.Boolean({ description: 'false when there was no session' }) }),
          ),
          // A session cookie sent from another origin is refused (checkSameOrigin).
          ...errorResponses(403),
        },
      },
    },
    async (request, reply) => {
      const secret = sessionSecretOf(request);
      if (secret) checkSameOrigin(deps, request);
      // Who is signing out, while the session still says (a dead one is recorded by nobody: it ended already).
      const auth = secret ? await authenticateSession(deps, secret).catch(() => null) : null;
      const ended = !secret
        ? false
        : auth
          ? await audited(
              deps,
              request,
              (d) => deleteSession(d, secret),
              { action: 'session.signed_out', targets: { session_id: auth.sessionId ?? '' } },
              auth,
            )
          : await deleteSession(deps, secret);
      clearSessionCookie(deps, reply);
      return { signed_out: ended };
    },
  );

  app.get(
    '/auth/methods',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'listSignInMethods',
        summary: 'How one can sign in to the control panel here',
        security: [],
        response: {
          200: described(
            'the ways to sign in here',
            Type.Object({
              token: Type.Boolean({ description: 'always true: paste a token' }),
              demo: Type.Boolean({
                description:
                  'a demo token for an email (POST /v1/demo/token); false when the operator turned demos off',
              }),
              oauth: Type.Boolean({ description: 'sign in with the code host (the operator configured an OAuth app)' }),
              sso: Type.Boolean({
                description:
                  'single sign-on through the server’s OpenID provider (/v1/auth/oidc/login); a workspace’s own is reached by its email domain whatever this says',
              }),
            }),
          ),
        },
      },
    },
    async () => ({
      token: true,
      demo: deps.config.demoTokens,
      oauth: deps.config.scmHosts.some((h) => h.oauth),
      sso: deps.config.oidc !== undefined,
    }),
  );
};
