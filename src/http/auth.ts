import { and, eq, isNull, lt, or } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Account } from '../accounts/accounts.js';
import { hashToken, looksLikeToken, type TokenKind } from '../accounts/tokens.js';
import { accounts, apiTokens } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { authenticateSession, checkSameOrigin, clearSessionCookie, sessionSecretOf } from './session.js';

/**
 * Who may call a route: `public` (no token), `any` (demo tokens too), `full` (full tokens
 * only: minting tokens, keys, BYOK), `admin` (full tokens of admin accounts).
 */
export type AccessLevel = 'public' | 'any' | 'full' | 'admin';

export interface AuthContext {
  account: Account;
  tokenId: string;
  tokenKind: TokenKind;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: AccessLevel;
  }
  interface FastifyRequest {
    auth: AuthContext | null;
  }
}

// last_used_at is a hint, not an audit trail: writing it once a minute keeps reads read-only.
const LAST_USED_GRANULARITY_MS = 60_000;

/** Notes that a token was used (at most once a minute, see above). */
export async function touchToken(deps: Pick<Deps, 'db'>, token: { id: string; lastUsedAt: Date | null }, now: Date) {
  const last = token.lastUsedAt?.getTime() ?? 0;
  if (now.getTime() - last > LAST_USED_GRANULARITY_MS) {
    const stale = new Date(now.getTime() - LAST_USED_GRANULARITY_MS);
    await deps.db
      .update(apiTokens)
      .set({ lastUsedAt: now })
      .where(and(eq(apiTokens.id, token.id), or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, stale))));
  }
}

export function caller(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new AppError('unauthorized', 'this endpoint needs Authorization: Bearer <token>');
  return request.auth;
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
 * Checks an emend token secret exactly as a Bearer credential is checked (also for starting a
 * control-panel session with it); answers the caller and the token's expiry.
 */
export async function authenticateToken(
  deps: Pick<Deps, 'db' | 'clock'>,
  secret: string,
): Promise<{ auth: AuthContext; expiresAt: Date | null }> {
  if (!secret.startsWith('tk_')) throw new AppError('unauthorized', 'not an emend token (tk_...)');
  // Built only when thrown: an Error captures a stack trace, which is not free on every request.
  const invalid = () => new AppError('invalid_token', 'the token is unknown, revoked or expired');
  if (!looksLikeToken(secret)) throw invalid();
  const rows = await deps.db
    .select({ token: apiTokens, account: accounts })
    .from(apiTokens)
    .innerJoin(accounts, eq(accounts.id, apiTokens.accountId))
    .where(eq(apiTokens.tokenHash, hashToken(secret)))
    .limit(1);
  const row = rows[0];
  const now = deps.clock.now();
  if (!row || row.token.revokedAt || (row.token.expiresAt && row.token.expiresAt <= now)) throw invalid();
  await touchToken(deps, row.token, now);
  return {
    auth: { account: row.account, tokenId: row.token.id, tokenKind: row.token.kind as TokenKind },
    expiresAt: row.token.expiresAt,
  };
}

/**
 * Bearer first, exactly as before; a request without an Authorization header may instead carry
 * a control-panel session cookie (src/http/session.ts). A dead session clears its cookie, and a
 * cookie-authenticated request that changes state must come from the panel's own origin.
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
    request.auth = auth;
  });
});
