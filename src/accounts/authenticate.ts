import { and, eq, isNull, lt, or } from 'drizzle-orm';
import { accounts, apiTokens, workspaceMembers, workspaces } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import type { TokenScope, WorkspaceRole } from '../db/access-vocabulary.js';
import { type Workspace, liveWorkspaceJoin, memberJoin } from '../workspaces/workspaces.js';
import type { Account } from './accounts.js';
import { hashToken, looksLikeToken, type TokenKind } from './token-secrets.js';

/**
 * Who is calling: the account (the person), the workspace the request acts in (the token's, or
 * the one a panel session switched to) with the account's role there, and the token it acts
 * through (a Bearer token or a session's token) with its scopes (null: all the role allows).
 */
export interface AuthContext {
  account: Account;
  workspace: Workspace;
  role: WorkspaceRole;
  scopes: TokenScope[] | null;
  tokenId: string;
  tokenKind: TokenKind;
  /** The control-panel session (its public id) the request came with; absent for a Bearer token. */
  sessionId?: string;
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

type TokenRow = typeof apiTokens.$inferSelect;

/** A token row read with its account and the account's membership of the workspace it acts in. */
export interface CallerRow {
  token: TokenRow;
  account: Account;
  /** Null when the account is no longer a member, or the workspace is deleted. */
  workspace: Workspace | null;
  role: WorkspaceRole | null;
}

/** The columns of a CallerRow (joined with memberJoin and liveWorkspaceJoin). */
export const callerColumns = {
  token: apiTokens,
  account: accounts,
  workspace: workspaces,
  role: workspaceMembers.role,
};

/**
 * The caller a token row stands for, when the token is live (not revoked, not expired) and its
 * account still a member of the workspace it acts in (the token's, or a panel session's choice);
 * its use is noted. Bearer tokens and panel sessions both come through here.
 */
export async function liveCaller(deps: Pick<Deps, 'db'>, row: CallerRow, now: Date): Promise<AuthContext | undefined> {
  const { token, account, workspace, role } = row;
  if (token.revokedAt || (token.expiresAt && token.expiresAt <= now)) return undefined;
  if (!workspace || !role) return undefined;
  await touchToken(deps, token, now);
  return {
    account,
    workspace,
    role,
    scopes: token.scopes,
    tokenId: token.id,
    tokenKind: token.kind as TokenKind,
  };
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
    .select(callerColumns)
    .from(apiTokens)
    .innerJoin(accounts, eq(accounts.id, apiTokens.accountId))
    .leftJoin(workspaceMembers, memberJoin(apiTokens.accountId, apiTokens.workspaceId))
    .leftJoin(workspaces, liveWorkspaceJoin)
    .where(eq(apiTokens.tokenHash, hashToken(secret)))
    .limit(1);
  const row = rows[0];
  const auth = row && (await liveCaller(deps, row, deps.clock.now()));
  if (!auth) throw invalid();
  return { auth, expiresAt: row.token.expiresAt };
}
