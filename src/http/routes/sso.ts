import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import {
  OIDC_FLOW_COOKIE,
  OIDC_FLOW_TTL_MS,
  cliCode,
  providerFor,
  startOidcSignIn,
  tokenOfCliCode,
  verifyOidcCallback,
  admitOidcPerson,
} from '../../accounts/oidc-sign-in.js';
import type { AuditAction } from '../../audit/actions.js';
import { recordAudit } from '../../audit/record.js';
import { announceDeliveries } from '../../webhooks/deliveries.js';
import { membershipOf } from '../../workspaces/workspaces.js';
import { checkEmail } from '../../accounts/accounts.js';
import { OIDC_SESSION_TOKEN_NAME, authenticateSession, createSession } from '../../accounts/sessions.js';
import { createPersonalToken } from '../../accounts/token-store.js';
import { WORKSPACE_ROLES } from '../../db/access-vocabulary.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import {
  type SsoSetting,
  checkSsoSetting,
  deleteSsoSetting,
  getSsoSetting,
  putSsoSetting,
} from '../../workspaces/sso-settings.js';
import { auditActor, audited } from '../audit.js';
import { caller, workspaceInPath } from '../auth.js';
import { STATUS_OF, errorResponses } from '../errors.js';
import { IdParams, StringEnum, Timestamp, described } from '../schema-parts.js';
import { flowCookie, sessionSecretOf, setSessionCookie } from '../session-cookie.js';
import { errorPage, sendPage } from './oauth-pages.js';

/** The token `emend login --sso` receives: a person's own, listed and revoked as any other. */
const OIDC_CLI_TOKEN_NAME = 'emend login (single sign-on)';

const MemberRole = StringEnum(WORKSPACE_ROLES.filter((r) => r !== 'owner'));

const SsoRecord = Type.Object(
  {
    issuer: Type.String({ description: 'the OpenID provider’s issuer URL' }),
    client_id: Type.String(),
    client_secret_set: Type.Boolean({ description: 'always true: the secret is kept sealed and never shown' }),
    email_domains: Type.Array(Type.String(), {
      description: 'people whose verified email is in one of these join on their first sign-in',
    }),
    default_role: MemberRole,
    required: Type.Boolean({ description: 'members’ control-panel sessions must come from this provider' }),
    updated_at: Timestamp,
  },
  { $id: 'WorkspaceSso' },
);

export const ssoSchemas = [SsoRecord];

const ssoJson = (s: SsoSetting) => ({
  issuer: s.issuer,
  client_id: s.clientId,
  client_secret_set: true,
  email_domains: s.emailDomains,
  default_role: s.defaultRole,
  required: s.required,
  updated_at: s.updatedAt.toISOString(),
});

/**
 * Single sign-on (docs/teams.md): a workspace's OpenID provider set by its owner, and the browser's
 * sign-in through it or through the server's own (EMEND_OIDC_*).
 */
export const ssoRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const full = { access: 'full' as const };

  app.get(
    '/workspaces/:id/sso',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'getWorkspaceSso',
        summary: 'The workspace’s single sign-on (owner); 404 when it has none',
        params: IdParams,
        response: {
          200: described('the setting, without its secret', Type.Ref('WorkspaceSso')),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (request) => {
      workspaceInPath(caller(request), request.params.id);
      const setting = await getSsoSetting(deps, request.params.id);
      if (!setting) throw new AppError('not_found', `workspace ${request.params.id} has no single sign-on`);
      return ssoJson(setting);
    },
  );

  app.put(
    '/workspaces/:id/sso',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'putWorkspaceSso',
        summary: 'Set the workspace’s single sign-on through an OpenID Connect provider (owner)',
        description:
          'The issuer is https (http only on a loopback host) and passes the outbound address policy. An email domain belongs to one workspace on the server: one taken by another is 409. With `required`, members’ control-panel sessions must come from this provider (their tokens still work for the API: docs/decisions.md).',
        params: IdParams,
        body: Type.Object(
          {
            issuer: Type.String({ minLength: 1, maxLength: 500 }),
            client_id: Type.String({ minLength: 1, maxLength: 500 }),
            client_secret: Type.String({ minLength: 1, maxLength: 2000 }),
            email_domains: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: 50 })),
            default_role: Type.Optional(MemberRole),
            required: Type.Optional(Type.Boolean()),
          },
          {
            additionalProperties: false,
            examples: [
              {
                issuer: 'https://login.example.com',
                client_id: 'emend',
                client_secret: '…',
                email_domains: ['example.com'],
                default_role: 'member',
                required: false,
              },
            ],
          },
        ),
        response: {
          200: described('the setting now', Type.Ref('WorkspaceSso')),
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (request) => {
      const auth = caller(request);
      workspaceInPath(auth, request.params.id);
      if (auth.workspace.personalOf)
        throw new AppError('bad_request', 'a personal workspace has no single sign-on: a team’s workspace has');
      const b = request.body;
      const checked = await checkSsoSetting(deps, {
        issuer: b.issuer,
        clientId: b.client_id,
        clientSecret: b.client_secret,
        emailDomains: b.email_domains ?? [],
        defaultRole: b.default_role ?? 'member',
        required: b.required ?? false,
      });
      const setting = await audited(
        deps,
        request,
        (d) => putSsoSetting(d, request.params.id, checked),
        (saved) => ({
          action: 'sso.set',
          // Never the client secret: names and switches only.
          detail: {
            issuer: saved.issuer,
            client_id: saved.clientId,
            email_domains: saved.emailDomains,
            default_role: saved.defaultRole,
            required: saved.required,
          },
        }),
      );
      return ssoJson(setting);
    },
  );

  app.delete(
    '/workspaces/:id/sso',
    {
      config: full,
      schema: {
        tags: ['workspaces'],
        operationId: 'deleteWorkspaceSso',
        summary: 'Remove the workspace’s single sign-on and its email domains (owner)',
        params: IdParams,
        response: { 204: Type.Null({ description: 'removed' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      workspaceInPath(caller(request), request.params.id);
      const removed = await audited(
        deps,
        request,
        (d) => deleteSsoSetting(d, request.params.id),
        (gone) => (gone ? { action: 'sso.removed' } : null),
      );
      if (!removed) throw new AppError('not_found', `workspace ${request.params.id} has no single sign-on`);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/auth/oidc/login',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'signInWithOidc',
        summary: 'Sign in to the control panel through single sign-on: redirects to the OpenID provider',
        description:
          'The provider is the workspace’s (`workspace`), the one the email’s domain belongs to (`email`), else the server’s own. 404 when there is none.',
        security: [],
        querystring: Type.Object(
          {
            workspace: Type.Optional(Type.String({ format: 'uuid' })),
            cli_port: Type.Optional(
              Type.Integer({ minimum: 1024, maximum: 65535, description: '`emend login --sso`: its loopback port' }),
            ),
            cli_challenge: Type.Optional(
              Type.String({
                pattern: '^[A-Za-z0-9_-]{43}$',
                description: '`emend login --sso`: the S256 challenge of the verifier it will trade the code with',
              }),
            ),
            email: Type.Optional(
              Type.String({
                maxLength: 254,
                description: 'a work email; empty (the panel’s form left blank) is the same as none',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 302: Type.Null({ description: 'to the provider' }), ...errorResponses(400, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const email = request.query.email?.trim() ? checkEmail(request.query.email) : undefined;
      const { cli_port: port, cli_challenge: challenge } = request.query;
      if ((port === undefined) !== (challenge === undefined))
        throw new AppError('bad_request', 'cli_port and cli_challenge: give both (emend login --sso does) or neither');
      const provider = await providerFor(deps, { workspace: request.query.workspace, email });
      const { url, cookie } = await startOidcSignIn(
        deps,
        provider,
        port !== undefined && challenge !== undefined ? { port, challenge } : undefined,
      );
      reply.setCookie(OIDC_FLOW_COOKIE, cookie, { ...flowCookie(deps), maxAge: OIDC_FLOW_TTL_MS / 1000 });
      return reply.redirect(url, 302);
    },
  );

  app.get(
    '/auth/oidc/callback',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'finishOidcSignIn',
        summary: 'Where the OpenID provider sends the browser back: signs in and redirects to /app/',
        description:
          'The browser must hold the cookie /v1/auth/oidc/login set (a sign-in is used once). The id_token is checked (issuer, audience, expiry, signature, nonce). A failure is a page saying why, with the status its error code has.',
        security: [],
        querystring: Type.Object({}, { additionalProperties: true }),
        response: {
          302: Type.Null({ description: 'signed in: to /app/' }),
          ...errorResponses(400, 401, 403, 404, 409, 503),
        },
      },
    },
    async (request, reply) => {
      const cookie = request.cookies[OIDC_FLOW_COOKIE];
      reply.clearCookie(OIDC_FLOW_COOKIE, flowCookie(deps));
      try {
        // A browser already signed in links the new identity to its account (src/accounts/oidc-sign-in.ts).
        const secret = sessionSecretOf(request);
        const signedInAs = secret
          ? await authenticateSession(deps, secret).then(
              (a) => a.account.id,
              () => undefined,
            )
          : undefined;
        const query = request.raw.url?.split('?')[1] ?? '';
        const verified = await verifyOidcCallback(deps, { cookie, query });
        // The person admitted, their token (and session) and the audit rows, in one transaction.
        let deliveries: string[] = [];
        const outcome = await deps.db.transaction(async (tx) => {
          const d = { ...deps, db: tx };
          const person = await admitOidcPerson(d, verified, signedInAs);
          const role = (await membershipOf(tx, person.accountId, person.workspaceId))?.role ?? null;
          const via = { via: 'single sign-on', issuer: person.issuer };
          const record = async (
            action: AuditAction,
            actor: { tokenId: string; sessionId: string | null },
            targets: Record<string, string>,
          ) => {
            const { deliveries: more } = await recordAudit(tx, deps, {
              workspaceId: person.workspaceId,
              action,
              actor: { ...auditActor(request, null), accountId: person.accountId, role, ...actor },
              targets,
              detail: via,
            });
            deliveries = [...deliveries, ...more];
          };
          const name = person.cli ? OIDC_CLI_TOKEN_NAME : OIDC_SESSION_TOKEN_NAME;
          const issued = await createPersonalToken(
            d,
            { accountId: person.accountId, workspaceId: person.workspaceId },
            name,
          );
          if (person.joined)
            await record(
              'member.joined',
              { tokenId: issued.record.id, sessionId: null },
              { account_id: person.accountId },
            );
          if (person.cli) {
            await record(
              'token.minted',
              { tokenId: issued.record.id, sessionId: null },
              { token_id: issued.record.id },
            );
            return { kind: 'cli' as const, cli: person.cli, secret: issued.secret };
          }
          const session = await createSession(
            d,
            {
              accountId: person.accountId,
              tokenId: issued.record.id,
              tokenExpiresAt: issued.record.expiresAt,
              sso: { issuer: person.issuer, workspaceId: person.workspaceId },
            },
            { userAgent: request.headers['user-agent'], address: request.ip },
          );
          await record(
            'session.signed_in',
            { tokenId: issued.record.id, sessionId: session.id },
            { session_id: session.id },
          );
          return { kind: 'panel' as const, session };
        });
        await announceDeliveries(deps, deliveries);
        if (outcome.kind === 'cli') {
          // The command line's token, handed over through its loopback address (cliCode).
          const code = cliCode(deps, outcome.secret, outcome.cli.challenge);
          return reply.redirect(`http://127.0.0.1:${outcome.cli.port}/callback?code=${encodeURIComponent(code)}`, 302);
        }
        const { session } = outcome;
        setSessionCookie(deps, reply, session.secret, session.expiresAt);
        return reply.redirect('/app/', 302);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        request.log.info({ code: err.code, reason: err.message }, 'single sign-on refused');
        return sendPage(reply as unknown as FastifyReply, STATUS_OF[err.code], errorPage(err.message));
      }
    },
  );

  app.post(
    '/auth/oidc/token',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'redeemOidcCliCode',
        summary: '`emend login --sso`: trade the code the sign-in sent to the command’s loopback address for its token',
        description:
          'The verifier is the one whose S256 challenge the command gave /v1/auth/oidc/login; the code lives two minutes. The token is a full token of the person’s, named "emend login (single sign-on)".',
        security: [],
        body: Type.Object(
          {
            code: Type.String({ minLength: 1, maxLength: 2000 }),
            verifier: Type.String({ minLength: 43, maxLength: 128 }),
          },
          {
            additionalProperties: false,
            examples: [
              { code: 'the code from the loopback redirect', verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk' },
            ],
          },
        ),
        response: {
          200: described('the token, shown once', Type.Object({ token: Type.String() })),
          ...errorResponses(400),
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return { token: tokenOfCliCode(deps, request.body.code, request.body.verifier) };
    },
  );
};
