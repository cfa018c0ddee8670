import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { Deps } from '../../deps.js';
import { chosenHost, connectScm, disconnectScm } from '../../accounts/scm-connection.js';
import { createSession } from '../../accounts/sessions.js';
import { createPersonalToken } from '../../accounts/token-store.js';
import { AppError } from '../../errors.js';
import { authorizeUrl, completeLogin, completeOAuth, loginAuthorizeUrl, readState } from '../../accounts/scm-oauth.js';
import { caller } from '../auth.js';
import { STATUS_OF } from '../errors.js';
import { ScmHostId, Url, described, errorResponses } from '../schemas.js';
import { setSessionCookie } from '../session-cookie.js';
import { OAUTH_SESSION_TOKEN_NAME } from './session.js';

/** The browser's half of a sign-in state (src/accounts/scm-oauth.ts): Lax, as the host sends the browser back cross-site. */
const LOGIN_COOKIE = 'emend_oauth_login';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A sign-in that went wrong is shown to a person in a browser, not to a program: a small page. */
function errorPage(message: string) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in failed · emend</title></head><body><main><h1>Sign-in failed</h1><p>${escapeHtml(message)}</p><p><a href="/app/">Back to the control panel</a></p></main></body></html>`;
}

const HostId = ScmHostId();

const Connection = Type.Object({
  scm: Type.String({ description: 'the login on the code host' }),
  host: Type.String({ description: 'the id of the code host' }),
});

const HostQuery = Type.Object({ host: Type.Optional(HostId) }, { additionalProperties: false });

export const scmRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/me/scm',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'connectScm',
        summary:
          'Connect your code-host account with a token (checked against the host, stored encrypted, never returned)',
        body: Type.Object(
          {
            token: Type.String({
              minLength: 1,
              maxLength: 500,
              description:
                'a personal access token: `repo` scope on GitHub, `api` on GitLab, `write:repository` and `read:user` on Gitea',
            }),
            host: Type.Optional(HostId),
          },
          { additionalProperties: false, examples: [{ token: 'ghp_…' }, { token: 'glpat-…', host: 'gitlab' }] },
        ),
        response: {
          200: described('the connection, with the login on the code host', Connection),
          ...errorResponses(400, 401, 403, 502),
        },
      },
    },
    async (request) => {
      const host = chosenHost(deps, request.body.host);
      return { scm: await connectScm(deps, caller(request).account.id, request.body.token, host), host: host.id };
    },
  );

  app.delete(
    '/me/scm',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'disconnectScm',
        summary: 'Disconnect your account on a code host (the stored token is deleted)',
        querystring: HostQuery,
        response: {
          200: described(
            'the account is no longer connected to that host',
            Type.Object({
              scm: Type.Null(),
              host: Type.String({ description: 'the id of the code host' }),
              disconnected: Type.Boolean({ description: 'false when nothing was connected' }),
            }),
          ),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const host = chosenHost(deps, request.query.host);
      return { scm: null, host: host.id, disconnected: await disconnectScm(deps, caller(request).account.id, host) };
    },
  );

  app.get(
    '/auth/scm/start',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'startScmOAuth',
        summary: 'Start connecting your code-host account through OAuth: open authorize_url in a browser',
        querystring: HostQuery,
        response: {
          200: described('the code host address to send the browser to', Type.Object({ authorize_url: Url() })),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => ({ authorize_url: authorizeUrl(deps, caller(request).account.id, request.query.host) }),
  );

  app.get(
    '/auth/scm/callback',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'finishScmOAuth',
        summary:
          'Where the code host sends the browser back after approval; connects the account named by state, or finishes a control-panel sign-in',
        description:
          'A connection answers JSON. A sign-in (started at /v1/auth/scm/login) sets the session cookie and redirects to /app/, or shows an error page (404 when no emend account is connected to that host user).',
        security: [],
        querystring: Type.Object({
          code: Type.String({ minLength: 1, maxLength: 500 }),
          state: Type.String({ minLength: 1, maxLength: 1000 }),
        }),
        response: {
          200: described(
            'the account is connected',
            Type.Object({ ok: Type.Boolean(), scm: Type.String(), host: Type.String() }),
          ),
          302: Type.Null({ description: 'a sign-in succeeded: to /app/' }),
          ...errorResponses(400, 404, 502),
        },
      },
    },
    async (request, reply) => {
      const { code, state } = request.query;
      const claims = readState(deps, state);
      if (claims.loginNonce === undefined)
        return { ok: true, scm: (await completeOAuth(deps, code, state)).login, host: claims.host.id };
      const secure = deps.config.baseUrl.startsWith('https:');
      reply.clearCookie(LOGIN_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure });
      try {
        if (request.cookies[LOGIN_COOKIE] !== claims.loginNonce) {
          throw new AppError(
            'bad_request',
            'this sign-in was started in another browser or has already been used; start it again from the control panel',
          );
        }
        const { account } = await completeLogin(deps, claims.host, code);
        const { record } = await createPersonalToken(deps, account.id, OAUTH_SESSION_TOKEN_NAME);
        const session = await createSession(deps, {
          accountId: account.id,
          tokenId: record.id,
          tokenExpiresAt: record.expiresAt,
        });
        setSessionCookie(deps, reply, session.secret, session.expiresAt);
        return reply.redirect('/app/', 302);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        // Not the JSON the schema describes: a page for the person in the browser.
        const raw = reply as unknown as FastifyReply;
        return raw
          .status(STATUS_OF[err.code])
          .type('text/html; charset=utf-8')
          .header(
            'content-security-policy',
            "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
          )
          .header('cache-control', 'no-store')
          .send(errorPage(err.message));
      }
    },
  );

  app.get(
    '/auth/scm/login',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'signInWithScm',
        summary: 'Sign in to the control panel with the code host: redirects the browser to the host’s authorize page',
        description:
          'The host sends the browser back to /v1/auth/scm/callback, which signs in the account connected to that host user (a full token named "control panel (GitHub sign-in)" is issued for the session and revoked at sign-out) and redirects to /app/. 404 when no OAuth app is configured.',
        security: [],
        querystring: HostQuery,
        response: { 302: Type.Null({ description: 'to the code host' }), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      const { url, nonce } = loginAuthorizeUrl(deps, request.query.host);
      reply.setCookie(LOGIN_COOKIE, nonce, {
        path: '/',
        httpOnly: true,
        sameSite: 'lax',
        secure: deps.config.baseUrl.startsWith('https:'),
        maxAge: 600,
      });
      return reply.redirect(url, 302);
    },
  );
};
