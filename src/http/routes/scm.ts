import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { chosenHost, connectScm, disconnectScm } from '../../workspaces/scm-connection.js';
import { OAUTH_SESSION_TOKEN_NAME, authenticateSession, createSession } from '../../accounts/sessions.js';
import { createPersonalToken } from '../../accounts/token-store.js';
import { AppError } from '../../errors.js';
import { completeLogin, loginAuthorizeUrl } from '../../accounts/scm-sign-in.js';
import { type ConnectState, readState } from '../../workspaces/scm-oauth.js';
import { browserHolds, confirmConnect, finishConnect, startConnect } from '../../workspaces/scm-oauth-connect.js';
import { hostLabel } from '../../scm/hosts.js';
import { deleteTriggers, triggersLeaving } from '../../triggers/repo-triggers.js';
import { caller } from '../auth.js';
import { STATUS_OF } from '../errors.js';
import { errorResponses } from '../errors.js';
import { ScmHostId, Url, described } from '../schema-parts.js';
import { flowCookie, sessionSecretOf, setSessionCookie } from '../session-cookie.js';
import { confirmPage, errorPage, sendPage } from './oauth-pages.js';
import { claimCallback } from './github-app.js';
import { recordAudit } from '../../audit/record.js';
import { announceDeliveries } from '../../webhooks/deliveries.js';
import { auditActor, auditWithin, audited } from '../audit.js';

/** The browser's half of a sign-in state (src/accounts/scm-sign-in.ts): Lax, as the host sends the browser back cross-site. */
const LOGIN_COOKIE = 'emend_oauth_login';
/** The browser's half of a connection's state (src/workspaces/scm-oauth-connect.ts); Lax for the same reason. */
const CONNECT_COOKIE = 'emend_oauth_connect';

/** The workspace this browser's control-panel session acts in, if it holds a live one. */
async function sessionWorkspaceOf(deps: Deps, request: FastifyRequest): Promise<string | undefined> {
  const secret = sessionSecretOf(request);
  if (!secret) return undefined;
  try {
    return (await authenticateSession(deps, secret)).workspace.id;
  } catch {
    return undefined;
  }
}

/**
 * The callback of a connection. Refused before anything is traded when the browser is signed in to
 * the panel as another account than the one that started it; connected at once in the browser that
 * started it; anywhere else, a page with a confirmation code for the starting account.
 */
async function connectCallback(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  state: ConnectState,
  code: string,
) {
  const held = request.cookies[CONNECT_COOKIE];
  if (held !== undefined) reply.clearCookie(CONNECT_COOKIE, flowCookie(deps));
  const signedInAs = await sessionWorkspaceOf(deps, request);
  if (signedInAs !== undefined && signedInAs !== state.workspaceId) {
    throw new AppError(
      'forbidden',
      'this connection was started for another emend workspace than the one the control panel in this browser ' +
        'is signed in to; nothing was connected',
    );
  }
  // Connected here, the connection is recorded with it, as the account that started it.
  let deliveries: string[] = [];
  const outcome = await finishConnect(deps, state, code, browserHolds(state, held), async (tx, login) => {
    ({ deliveries } = await recordAudit(tx, deps, {
      workspaceId: state.workspaceId,
      action: 'scm.connected',
      actor: { ...auditActor(request, null), accountId: state.accountId ?? null },
      targets: { host: state.host.id },
      detail: { login, via: 'oauth' },
    }));
  });
  await announceDeliveries(deps, deliveries);
  if (outcome.kind === 'connected') return { ok: true, scm: outcome.login, host: state.host.id };
  // Not the JSON the schema describes: a page for the person in the browser.
  return sendPage(reply as unknown as FastifyReply, 200, confirmPage(hostLabel(state.host), outcome.confirmation));
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
      // The host is asked who the token is first; the connection and its record (never the token)
      // then commit together.
      const audit = auditWithin(deps, request, (login: string) => ({
        action: 'scm.connected',
        targets: { host: host.id },
        detail: { login },
      }));
      const scm = await connectScm(deps, caller(request).workspace.id, request.body.token, host, audit.within);
      await audit.announce();
      return { scm, host: host.id };
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
      const workspaceId = caller(request).workspace.id;
      // The repositories' triggers go with the connection that made their webhooks: the clients that
      // remove those are made now, while the token is stored; the triggers, the connection and the
      // record go in one transaction; the webhooks are removed from the host once it has committed.
      const triggers = await triggersLeaving(deps, workspaceId, host.id);
      const disconnected = await audited(
        deps,
        request,
        async (d) => {
          await deleteTriggers(d.db, triggers.ids);
          return disconnectScm(d, workspaceId, host);
        },
        (gone) => (gone ? { action: 'scm.disconnected', targets: { host: host.id } } : null),
      );
      await triggers.removeHooks();
      return { scm: null, host: host.id, disconnected };
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
    async (request, reply) => {
      const who = caller(request);
      const { url, browserNonce } = await startConnect(
        deps,
        { workspaceId: who.workspace.id, accountId: who.account.id },
        request.query.host,
      );
      reply.setCookie(CONNECT_COOKIE, browserNonce, { ...flowCookie(deps), maxAge: 600 });
      return { authorize_url: url };
    },
  );

  app.post(
    '/auth/scm/confirm',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'confirmScmOAuth',
        summary: 'Finish a code-host connection whose callback reached another browser, with the code it showed',
        description:
          'When the browser that comes back from the code host is not the one that called /v1/auth/scm/start (an API ' +
          'client or the CLI started it), the callback connects nothing: it shows a one-time confirmation code. The ' +
          'account that started the connection sends it here within 10 minutes; five wrong codes end every waiting ' +
          'connection of the account.',
        body: Type.Object(
          {
            confirmation: Type.String({
              minLength: 1,
              maxLength: 64,
              description: 'the code the callback page showed (letter case, spaces and dashes do not matter)',
            }),
          },
          { additionalProperties: false, examples: [{ confirmation: 'K7QM-4XWD' }] },
        ),
        response: {
          200: described('the account is connected', Connection),
          ...errorResponses(400, 401, 403, 502),
        },
      },
    },
    async (request) => {
      const audit = auditWithin(deps, request, (made: { login: string; hostId: string }) => ({
        action: 'scm.connected',
        targets: { host: made.hostId },
        detail: { login: made.login, via: 'oauth' },
      }));
      const { login, hostId } = await confirmConnect(
        deps,
        caller(request).workspace.id,
        request.body.confirmation,
        audit.within,
      );
      await audit.announce();
      return { scm: login, host: hostId };
    },
  );

  app.get(
    '/auth/scm/callback',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'finishScmOAuth',
        summary:
          'Where the code host sends the browser back after approval; connects the account that started it, or finishes a control-panel sign-in',
        description:
          'A connection answers JSON when the browser is the one that called /v1/auth/scm/start (it holds that call’s ' +
          'cookie); any other browser gets a page with a confirmation code for /v1/auth/scm/confirm, and nothing is ' +
          'connected. A browser signed in to the control panel as another account is refused (403). A state is used once. ' +
          'A sign-in (started at /v1/auth/scm/login) sets the session cookie and redirects to /app/, or shows an error ' +
          'page (404 when no emend account is connected to that host user, 409 when several are).',
        security: [],
        querystring: Type.Object({
          code: Type.String({ minLength: 1, maxLength: 500 }),
          state: Type.String({ minLength: 1, maxLength: 1000 }),
        }),
        response: {
          200: described(
            'the account is connected (or, as text/html, the confirmation page)',
            Type.Object({
              ok: Type.Boolean(),
              scm: Type.String(),
              host: Type.String(),
            }),
          ),
          302: Type.Null({
            description:
              'a sign-in succeeded: to /app/; a GitHub App installation was claimed: to /app/account?claimed=ACCOUNT',
          }),
          ...errorResponses(400, 403, 404, 409, 502),
        },
      },
    },
    async (request, reply) => {
      const { code, state } = request.query;
      const claims = readState(deps, state);
      if (claims.kind === 'connect') return connectCallback(deps, request, reply, claims, code);
      if (claims.kind === 'claim') return claimCallback(deps, request, reply, claims, code);
      if (claims.kind === 'install') throw new AppError('bad_request', 'state: an installation’s, not a sign-in’s');
      reply.clearCookie(LOGIN_COOKIE, flowCookie(deps));
      try {
        if (request.cookies[LOGIN_COOKIE] !== claims.loginNonce) {
          throw new AppError(
            'bad_request',
            'this sign-in was started in another browser or has already been used; start it again from the control panel',
          );
        }
        const { account, personalWorkspaceId } = await completeLogin(deps, claims.host, code);
        // The token, the session and the sign-in's audit row (in the personal workspace) together.
        let deliveries: string[] = [];
        const session = await deps.db.transaction(async (tx) => {
          const d = { ...deps, db: tx };
          const { record } = await createPersonalToken(
            d,
            { accountId: account.id, workspaceId: personalWorkspaceId },
            OAUTH_SESSION_TOKEN_NAME,
          );
          const made = await createSession(
            d,
            { accountId: account.id, tokenId: record.id, tokenExpiresAt: record.expiresAt },
            { userAgent: request.headers['user-agent'], address: request.ip },
          );
          const actor = { accountId: account.id, tokenId: record.id, sessionId: made.id, role: 'owner' };
          ({ deliveries } = await recordAudit(tx, deps, {
            workspaceId: personalWorkspaceId,
            action: 'session.signed_in',
            actor: { ...auditActor(request, null), ...actor },
            targets: { session_id: made.id },
            detail: { via: claims.host },
          }));
          return made;
        });
        await announceDeliveries(deps, deliveries);
        setSessionCookie(deps, reply, session.secret, session.expiresAt);
        return reply.redirect('/app/', 302);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        // Not the JSON the schema describes: a page for the person in the browser.
        return sendPage(reply as unknown as FastifyReply, STATUS_OF[err.code], errorPage(err.message));
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
      reply.setCookie(LOGIN_COOKIE, nonce, { ...flowCookie(deps), maxAge: 600 });
      return reply.redirect(url, 302);
    },
  );
};
