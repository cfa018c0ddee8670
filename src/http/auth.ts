import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { type AuthContext, authenticateToken } from '../accounts/authenticate.js';
import { authenticateSession } from '../accounts/sessions.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { recordAudit } from '../audit/record.js';
import { announceDeliveries } from '../webhooks/deliveries.js';
import { type Act, authorize } from '../workspaces/access.js';
import { auditActor } from './audit.js';
import { actOf } from './route-acts.js';
import { checkSameOrigin, clearSessionCookie, sessionSecretOf } from './session-cookie.js';

/**
 * Who may call a route: `public` (no token), `any` (demo tokens too), `full` (full tokens
 * only: minting tokens, keys, BYOK), `admin` (full tokens of admin accounts).
 */
export type AccessLevel = 'public' | 'any' | 'full' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: AccessLevel;
    /** The route reads its body as bytes (a code host's signed delivery): no JSON parsing, no refusal of a body. */
    rawBody?: boolean;
  }
  interface FastifyRequest {
    auth: AuthContext | null;
  }
}

export function caller(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new AppError('unauthorized', 'this endpoint needs Authorization: Bearer <token>');
  return request.auth;
}

/**
 * The workspace a route's path names (/v1/workspaces/{id}/…): the caller's own; any other is not
 * found, so a token cannot learn whether another workspace exists.
 */
export function workspaceInPath(auth: AuthContext, id: string): AuthContext['workspace'] {
  if (id !== auth.workspace.id)
    throw new AppError('not_found', `no workspace ${id} for this token (it acts in ${auth.workspace.id})`);
  return auth.workspace;
}

async function authenticate(deps: Deps, header: string | undefined): Promise<AuthContext> {
  if (!header) throw new AppError('unauthorized', 'missing Authorization header; send Authorization: Bearer <token>');
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  if (!match) throw new AppError('unauthorized', 'malformed Authorization header; expected Bearer <token>');
  const secret = match[1]!;
  if (!secret.startsWith('tk_'))
    throw new AppError('unauthorized', 'the bearer credential is not an emend token (tk_...)');
  return (await authenticateToken(deps, secret)).auth;
}

/**
 * Bearer first, exactly as before; a request without an Authorization header may instead carry
 * a control-panel session cookie (src/http/session-cookie.ts, src/accounts/sessions.ts). A dead
 * session clears its cookie, and a cookie-authenticated request that changes state must come from the panel's own origin.
 */
async function authenticateRequest(deps: Deps, request: FastifyRequest, reply: FastifyReply): Promise<AuthContext> {
  const session = request.headers.authorization === undefined ? sessionSecretOf(request) : undefined;
  if (session === undefined) return authenticate(deps, request.headers.authorization);
  let auth: AuthContext;
  try {
    auth = await authenticateSession(deps, session);
  } catch (err) {
    clearSessionCookie(deps, reply);
    throw err;
  }
  checkSameOrigin(deps, request);
  return auth;
}

/**
 * A refused act is an audit row too (decision `denied`, the gate's act, the route and why): its
 * own transaction, since nothing else happened. Failing to record it does not change the 403.
 */
async function recordRefusal(deps: Deps, request: FastifyRequest, auth: AuthContext, act: Act, err: unknown) {
  try {
    const { deliveries } = await deps.db.transaction((tx) =>
      recordAudit(tx, deps, {
        workspaceId: auth.workspace.id,
        action: act,
        decision: 'denied',
        actor: auditActor(request, auth),
        detail: {
          route: `${request.method} ${request.routeOptions.url ?? ''}`,
          reason: err instanceof AppError ? err.message : 'refused',
        },
      }),
    );
    await announceDeliveries(deps, deliveries);
  } catch (recordErr) {
    request.log.error({ err: recordErr }, 'audit: the refusal was not recorded');
  }
}

export const authPlugin = fp(async (app: FastifyInstance, { deps }: { deps: Deps }) => {
  app.decorateRequest('auth', null);
  app.addHook('onRequest', async (request, reply) => {
    if (request.is404) return;
    const access = request.routeOptions.config.access ?? 'any';
    if (access === 'public') return;
    const auth = await authenticateRequest(deps, request, reply);
    if (access === 'full' && auth.tokenKind === 'demo') {
      throw new AppError('forbidden', 'demo tokens can create and read tasks only; sign up for a full token');
    }
    if (access === 'admin' && (!auth.account.isAdmin || auth.tokenKind === 'demo')) {
      throw new AppError('forbidden', 'this endpoint needs an admin account');
    }
    // The caller's role in the workspace and the token's scopes: one gate for every route.
    const act = actOf(request.method, request.routeOptions.url ?? '');
    if (!act) throw new AppError('forbidden', 'this endpoint is not open to workspace members');
    try {
      authorize(auth, act);
    } catch (err) {
      await recordRefusal(deps, request, auth, act, err);
      throw err;
    }
    request.auth = auth;
  });
});
