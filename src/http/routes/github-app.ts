import { createHash, randomBytes } from 'node:crypto';
import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import {
  appHost,
  claimSignInUrl,
  finishClaim,
  installationsOf,
  releaseInstallation,
  startInstall,
} from '../../workspaces/app-claim.js';
import { recordAudit } from '../../audit/record.js';
import { announceDeliveries } from '../../webhooks/deliveries.js';
import { auditActor, auditWithin } from '../audit.js';
import { caller } from '../auth.js';
import { STATUS_OF, errorResponses } from '../errors.js';
import { browserHolds } from '../../workspaces/scm-oauth-connect.js';
import { flowCookie } from '../session-cookie.js';
import { ScmHostId, Url, described } from '../schema-parts.js';
import { appCreatedPage, errorPage, manifestPage, sendPage } from './oauth-pages.js';
import { appManifest, convertManifest, manifestCreateUrl } from '../../workspaces/app-manifest.js';
import { type ClaimState, readManifestState, readState, signedState } from '../../workspaces/scm-oauth.js';
import { chosenHost } from '../../workspaces/scm-connection.js';

/** The browser's half of an installation's state: Lax, as GitHub sends the browser back cross-site. */
export const INSTALL_COOKIE = 'emend_app_install';
/** The browser's half of the manifest flow's state. */
const MANIFEST_COOKIE = 'emend_app_manifest';

const Timestamp = Type.String({ format: 'date-time' });

const Installation = Type.Object({
  host: Type.String({ description: 'the code host (its id on this server)' }),
  installation_id: Type.String({ description: "the host's id of the installation" }),
  account: Type.String({ description: 'the user or organisation the app is installed on' }),
  account_type: Type.String({ description: 'User or Organization' }),
  claimed_as: Type.Union([Type.String(), Type.Null()], { description: 'the host login of the admin who claimed it' }),
  claimed_at: Type.Union([Timestamp, Type.Null()]),
  suspended: Type.Boolean({
    description: 'suspended on the host: its repositories’ tasks stop until it is unsuspended',
  }),
});

/**
 * The claim's callback (the app's sign-in, arriving at /v1/auth/scm/callback): in the browser that
 * started the installation only; anything else claims nothing. A person is in that browser: the
 * answer is the panel's account page (naming the account claimed) or a page saying what went wrong.
 */
export async function claimCallback(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  state: ClaimState,
  code: string,
) {
  const held = request.cookies[INSTALL_COOKIE];
  if (held !== undefined) reply.clearCookie(INSTALL_COOKIE, flowCookie(deps));
  try {
    if (!browserHolds(state, held))
      throw new AppError(
        'forbidden',
        'this installation was started in another browser (or its claim was finished already); nothing was ' +
          'claimed: start it again from emend',
      );
    // The code host confirms the claim first; the claim is then stored and recorded in one
    // transaction, as the person who started it in this browser.
    let deliveries: string[] = [];
    const claimed = await finishClaim(deps, state.host, state, code, async (tx, made) => {
      ({ deliveries } = await recordAudit(tx, deps, {
        workspaceId: state.workspaceId,
        action: 'app.installation_claimed',
        actor: { ...auditActor(request, null), accountId: state.accountId },
        targets: { host: made.host, installation_id: String(made.installationId) },
        detail: { account: made.account, claimed_as: made.claimedAs },
      }));
    });
    await announceDeliveries(deps, deliveries);
    request.log.info(
      { host: claimed.host, installation: claimed.installationId, account: claimed.account, as: claimed.claimedAs },
      'GitHub App installation claimed',
    );
    return reply.redirect(`/app/account?claimed=${encodeURIComponent(claimed.account)}`, 302);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return sendPage(reply, STATUS_OF[err.code], errorPage(err.message));
  }
}

/** A GitHub App per GitHub host: installing it on an account and claiming the installation for a workspace. */
export const gitHubAppRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const HostParams = Type.Object({ host: ScmHostId() });

  app.get(
    '/apps/:host/install',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'startAppInstall',
        summary:
          "Install the host's GitHub App on an account and claim it for this workspace: open install_url in a browser",
        description:
          'GitHub returns the browser to the app’s setup URL (/v1/apps/{host}/setup), where the person signs in with the ' +
          'app; they must administer the account it was installed on. 404 when the host has no app.',
        params: HostParams,
        response: {
          200: described('the host’s install page to send the browser to', Type.Object({ install_url: Url() })),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const who = caller(request);
      const { url, browserNonce } = startInstall(deps, request.params.host, {
        workspaceId: who.workspace.id,
        accountId: who.account.id,
      });
      reply.setCookie(INSTALL_COOKIE, browserNonce, { ...flowCookie(deps), maxAge: 600 });
      return { install_url: url };
    },
  );

  app.get(
    '/apps/:host/setup',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'appSetup',
        summary: "The GitHub App's setup URL: where GitHub sends the browser after an installation",
        description:
          'Sends the browser on to the app’s sign-in, which claims the installation for the workspace that started it ' +
          '(in that browser only). An installation started on GitHub itself, not from emend, is claimed from the panel.',
        security: [],
        params: HostParams,
        querystring: Type.Object({
          installation_id: Type.Optional(Type.String({ pattern: '^[0-9]{1,20}$' })),
          setup_action: Type.Optional(Type.String({ maxLength: 50 })),
          state: Type.Optional(Type.String({ maxLength: 1000 })),
        }),
        response: {
          302: Type.Null({ description: 'to the app’s sign-in, or to the panel' }),
          ...errorResponses(400, 403, 404),
        },
      },
    },
    async (request, reply) => {
      try {
        const host = appHost(deps, request.params.host);
        const { installation_id: installationId, state } = request.query;
        if (!installationId || !state)
          throw new AppError(
            'bad_request',
            'this installation was not started from emend: start it from emend’s panel (Account → the GitHub host → ' +
              'Install the GitHub App), so emend knows which workspace it is for',
          );
        const claims = readState(deps, state);
        if (claims.kind !== 'install' || claims.host.id !== host.id)
          throw new AppError('bad_request', 'state: not an installation this server started');
        if (!browserHolds(claims, request.cookies[INSTALL_COOKIE]))
          throw new AppError(
            'forbidden',
            'this installation was started in another browser; start it again from emend',
          );
        return reply.redirect(claimSignInUrl(deps, host, { ...claims, installationId }), 302);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        // A page for the person in the browser, not the JSON of an API error.
        return sendPage(reply as unknown as FastifyReply, STATUS_OF[err.code], errorPage(err.message));
      }
    },
  );

  app.get(
    '/apps/installations',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'listAppInstallations',
        summary:
          "The GitHub App installations this workspace claimed: on their accounts' repositories emend acts as the app",
        response: {
          200: described('the installations', Type.Object({ installations: Type.Array(Installation) })),
          ...errorResponses(401, 403),
        },
      },
    },
    async (request) => {
      const rows = await installationsOf(deps, caller(request).workspace.id);
      return {
        installations: rows.map((r) => ({
          host: r.host,
          installation_id: r.installationId,
          account: r.account,
          account_type: r.accountType,
          claimed_as: r.claimedAs,
          claimed_at: r.claimedAt?.toISOString() ?? null,
          suspended: r.suspendedAt !== null,
        })),
      };
    },
  );

  app.delete(
    '/apps/:host/installations/:id',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'releaseAppInstallation',
        summary: 'Give up a claimed installation (the app stays installed on the host; uninstall it there)',
        params: Type.Object({ host: ScmHostId(), id: Type.String({ pattern: '^[0-9]{1,20}$' }) }),
        response: { 204: Type.Null({ description: 'released' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const audit = auditWithin(deps, request, {
        action: 'app.installation_released',
        targets: { host: request.params.host, installation_id: request.params.id },
      });
      await releaseInstallation(
        deps,
        caller(request).workspace.id,
        request.params.host,
        request.params.id,
        audit.within,
      );
      await audit.announce();
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/apps/:host/manifest',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['admin'],
        operationId: 'startAppManifest',
        summary:
          "Create the host's GitHub App in one click (GitHub's manifest flow): a page whose form posts the manifest",
        description:
          'Server administrators only. GitHub returns the browser to /v1/apps/{host}/manifest/callback, which stores the ' +
          'app’s credentials in the data directory; emend acts as the app after a restart. 409 when the host has an app.',
        params: HostParams,
        querystring: Type.Object({
          org: Type.Optional(
            Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9-]{0,38}$', description: 'create it on this organisation' }),
          ),
        }),
        response: { 200: described('the page (text/html)', Type.String()), ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) => {
      const host = chosenHost(deps, request.params.host);
      if (host.kind.kind !== 'github')
        throw new AppError('bad_request', `host: ${host.id} is not a GitHub host; GitHub Apps are GitHub's`);
      if (host.app) throw new AppError('conflict', `${host.id} has a GitHub App already (${host.app.slug})`);
      const browserNonce = randomBytes(18).toString('base64url');
      const state = signedState(deps, host, {
        k: 'manifest',
        u: caller(request).account.id,
        b: createHash('sha256').update(browserNonce).digest('base64url'),
      });
      reply.setCookie(MANIFEST_COOKIE, browserNonce, { ...flowCookie(deps), maxAge: 3600 });
      const page = manifestPage(manifestCreateUrl(host, request.query.org, state), appManifest(deps, host));
      return sendPage(reply as unknown as FastifyReply, 200, page);
    },
  );

  app.get(
    '/apps/:host/manifest/callback',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'finishAppManifest',
        summary: 'Where GitHub sends the browser once the app is created from the manifest: its credentials are stored',
        security: [],
        params: HostParams,
        querystring: Type.Object({
          code: Type.String({ minLength: 1, maxLength: 200 }),
          state: Type.String({ minLength: 1, maxLength: 1000 }),
        }),
        response: { 200: described('a page (text/html)', Type.String()), ...errorResponses(400, 403, 404, 502) },
      },
    },
    async (request, reply) => {
      try {
        const claims = readManifestState(deps, request.query.state);
        const held = request.cookies[MANIFEST_COOKIE];
        reply.clearCookie(MANIFEST_COOKIE, flowCookie(deps));
        if (claims.host.id !== request.params.host || !browserHolds(claims, held))
          throw new AppError('forbidden', 'this app was not created from this browser; nothing was stored');
        const created = await convertManifest(deps, claims.host, request.query.code);
        request.log.info({ host: claims.host.id, app: created.slug }, 'GitHub App created from the manifest');
        return sendPage(
          reply as unknown as FastifyReply,
          200,
          appCreatedPage(created.slug, claims.host.id, created.file),
        );
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        return sendPage(reply as unknown as FastifyReply, STATUS_OF[err.code], errorPage(err.message));
      }
    },
  );
};
