import { and, desc, eq, isNull } from 'drizzle-orm';
import type { TokenScope } from '../db/access-vocabulary.js';
import { apiTokens } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { insertToken } from './accounts.js';

/** A full token of the account's, acting in `workspaceId` (with `scopes`, or all the account's role there allows). */
export async function createPersonalToken(
  deps: Pick<Deps, 'db' | 'clock'>,
  owner: { accountId: string; workspaceId: string; scopes?: TokenScope[] | null },
  name: string,
  expiresInDays?: number,
) {
  const now = deps.clock.now();
  const expiresAt = expiresInDays ? new Date(now.getTime() + expiresInDays * 86_400_000) : null;
  return insertToken(deps.db, owner, 'full', name, now, expiresAt);
}

export async function listTokens(deps: Pick<Deps, 'db'>, accountId: string) {
  return deps.db
    .select()
    .from(apiTokens)
    .where(eq(apiTokens.accountId, accountId))
    .orderBy(desc(apiTokens.createdAt))
    .limit(500);
}

/** Revokes one of the caller's tokens; revoking twice is harmless and answers the first revocation. */
export async function revokeToken(deps: Pick<Deps, 'db' | 'clock'>, accountId: string, tokenId: string) {
  await deps.db
    .update(apiTokens)
    .set({ revokedAt: deps.clock.now() })
    .where(and(eq(apiTokens.id, tokenId), eq(apiTokens.accountId, accountId), isNull(apiTokens.revokedAt)));
  const [row] = await deps.db
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.id, tokenId), eq(apiTokens.accountId, accountId)));
  if (!row) throw new AppError('not_found', `no token ${tokenId}`);
  return row;
}
