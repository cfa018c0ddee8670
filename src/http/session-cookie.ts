import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';

/**
 * The control-panel session's cookie: the browser holds the session secret (src/accounts/sessions.ts)
 * in an HttpOnly, SameSite=Strict cookie, and a cookie-authenticated request that changes state
 * must come from the panel's own origin.
 */
export const SESSION_COOKIE = 'emend_session';

/**
 * The cookie of a browser-bound flow through a code host (OAuth connect and sign-in, the GitHub
 * App's install and manifest): Lax, as the host sends the browser back cross-site.
 */
export const flowCookie = (deps: Pick<Deps, 'config'>) => ({
  path: '/',
  httpOnly: true,
  sameSite: 'lax' as const,
  secure: deps.config.baseUrl.startsWith('https:'),
});

/** Cookie attributes: Secure when the service is served over https (EMEND_BASE_URL). */
export function cookieOptions(deps: Pick<Deps, 'config'>, expires?: Date) {
  return {
    httpOnly: true,
    sameSite: 'strict' as const,
    path: '/',
    secure: deps.config.baseUrl.startsWith('https:'),
    ...(expires ? { expires } : {}),
  };
}

/** The session secret a request carries, if any (parsed by @fastify/cookie). */
export const sessionSecretOf = (request: FastifyRequest): string | undefined =>
  request.cookies?.[SESSION_COOKIE] || undefined;

export function setSessionCookie(deps: Pick<Deps, 'config'>, reply: FastifyReply, secret: string, expiresAt: Date) {
  reply.setCookie(SESSION_COOKIE, secret, cookieOptions(deps, expiresAt));
}

export function clearSessionCookie(deps: Pick<Deps, 'config'>, reply: FastifyReply) {
  reply.clearCookie(SESSION_COOKIE, cookieOptions(deps));
}

/** The methods a cookie-authenticated request must send from the panel's own origin (checkSameOrigin). */
export const STATE_CHANGING: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const originOf = (value: string | undefined) => {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    return url.origin === 'null' ? undefined : url.origin;
  } catch {
    return undefined;
  }
};

/**
 * CSRF defence for cookie-authenticated requests, on top of SameSite=Strict: a request that
 * changes state must say it comes from this service's own pages (Origin, or Referer when a
 * browser sends no Origin), matching the address it was sent to or EMEND_BASE_URL.
 */
export function checkSameOrigin(deps: Pick<Deps, 'config'>, request: FastifyRequest) {
  if (!STATE_CHANGING.has(request.method)) return;
  const from = originOf(request.headers.origin) ?? originOf(request.headers.referer);
  const own = new Set([originOf(deps.config.baseUrl), originOf(`${request.protocol}://${request.host}`)]);
  if (!from || !own.has(from)) {
    throw new AppError(
      'forbidden',
      'a request signed in with the control-panel cookie must come from the control panel itself (Origin header missing or from another site)',
    );
  }
}
