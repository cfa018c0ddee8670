import { and, eq, isNull, lt, or } from 'drizzle-orm';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Account } from '../accounts/accounts.js';
import { hashToken, looksLikeToken, type TokenKind } from '../accounts/tokens.js';
import { accounts, apiTokens } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';

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

export function caller(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new AppError('unauthorized', 'this endpoint needs Authorization: Bearer <token>');
  return request.auth;
}

async function authenticate(deps: Deps, header: string | undefined): Promise<AuthContext> {
  if (!header) throw new AppError('unauthorized', 'missing Authorization header; send Authorization: Bearer <token>');
  const match = /^Bearer +(\S+)\s*$/i.exec(header);
  if (!match) throw new AppError('unauthorized', 'malformed Authorization header; expected Bearer <token>');
  const secret = match[1]!;
  if (!secret.startsWith('tk_')) throw new AppError('unauthorized', 'the bearer credential is not an emend token (tk_...)');
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
  const last = row.token.lastUsedAt?.getTime() ?? 0;
  if (now.getTime() - last > LAST_USED_GRANULARITY_MS) {
    const stale = new Date(now.getTime() - LAST_USED_GRANULARITY_MS);
    await deps.db
      .update(apiTokens)
      .set({ lastUsedAt: now })
      .where(and(eq(apiTokens.id, row.token.id), or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, stale))));
  }
  return { account: row.account, tokenId: row.token.id, tokenKind: row.token.kind as TokenKind };
}

export const authPlugin = fp(async (app: FastifyInstance, { deps }: { deps: Deps }) => {
  app.decorateRequest('auth', null);
  app.addHook('onRequest', async (request) => {
    if (request.is404) return;
    const access = request.routeOptions.config.access ?? 'any';
    if (access === 'public') return;
    const auth = await authenticate(deps, request.headers.authorization);
    if (access === 'full' && auth.tokenKind === 'demo') {
      throw new AppError('forbidden', 'demo tokens can create and read tasks only; sign up for a full token');
    }
    if (access === 'admin' && (!auth.account.isAdmin || auth.tokenKind === 'demo')) {
      throw new AppError('forbidden', 'this endpoint needs an admin account');
    }
    request.auth = auth;
  });
});
