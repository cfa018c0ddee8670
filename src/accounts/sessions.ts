import { createHash, randomBytes } from 'node:crypto';
import { and, eq, gt, lte, sql } from 'drizzle-orm';
import { accounts, apiTokens, webSessions, workspaceMembers, workspaces } from '../db/schema.js';
import { liveWorkspaceJoin, memberJoin } from '../workspaces/workspaces.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { type AuthContext, callerColumns, liveCaller } from './authenticate.js';

/**
 * Control-panel sessions. The browser holds a random 256-bit secret (in a cookie, see
 * src/http/session-cookie.ts); the database holds its SHA-256 only, with the API token the session
 * acts as. A session lives 12 hours or until its token expires, whichever is sooner, and dies
 * with its token (revoked or expired token: the session is refused).
 */
export const SESSION_TTL_MS = 12 * 3_600_000;

const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Starts a session acting as `tokenId`; returns the cookie secret (shown to nobody but the browser). */
export async function createSession(
  deps: Pick<Deps, 'db' | 'clock'>,
  auth: { accountId: string; tokenId: string; tokenExpiresAt: Date | null },
) {
  const now = deps.clock.now();
  let expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  if (auth.tokenExpiresAt && auth.tokenExpiresAt < expiresAt) expiresAt = auth.tokenExpiresAt;
  const secret = randomBytes(32).toString('base64url');
  // Sweep this account's dead sessions while here, so the table does not grow without bound.
  await deps.db
    .delete(webSessions)
    .where(and(eq(webSessions.accountId, auth.accountId), lte(webSessions.expiresAt, now)));
  await deps.db.insert(webSessions).values({
    idHash: hashSecret(secret),
    accountId: auth.accountId,
    tokenId: auth.tokenId,
    createdAt: now,
    expiresAt,
  });
  return { secret, expiresAt };
}

/** The caller a session secret stands for; invalid_token when the session or its token is dead. */
export async function authenticateSession(deps: Pick<Deps, 'db' | 'clock'>, secret: string): Promise<AuthContext> {
  const dead = () =>
    new AppError(
      'invalid_token',
      'your control-panel session has ended (signed out, expired, or its token was revoked); sign in again',
    );
  if (!SECRET_SHAPE.test(secret)) throw dead();
  const now = deps.clock.now();
  const [row] = await deps.db
    .select(callerColumns)
    .from(webSessions)
    .innerJoin(apiTokens, eq(apiTokens.id, webSessions.tokenId))
    .innerJoin(accounts, eq(accounts.id, webSessions.accountId))
    // The workspace the panel switched to, else the token's.
    .leftJoin(
      workspaceMembers,
      memberJoin(webSessions.accountId, sql`coalesce(${webSessions.workspaceId}, ${apiTokens.workspaceId})`),
    )
    .leftJoin(workspaces, liveWorkspaceJoin)
    .where(and(eq(webSessions.idHash, hashSecret(secret)), gt(webSessions.expiresAt, now)))
    .limit(1);
  const auth = row && (await liveCaller(deps, row, now));
  if (!auth) throw dead();
  return auth;
}

/** Points a session at another workspace of its account's (the panel's switcher); the caller checks membership. */
export async function switchSessionWorkspace(deps: Pick<Deps, 'db'>, secret: string, workspaceId: string) {
  await deps.db
    .update(webSessions)
    .set({ workspaceId })
    .where(eq(webSessions.idHash, hashSecret(secret)));
}

/** Ends a session; returns its token's id (a token issued for the session is revoked with it by the caller). */
export async function deleteSession(deps: Pick<Deps, 'db'>, secret: string) {
  const [row] = await deps.db
    .delete(webSessions)
    .where(eq(webSessions.idHash, hashSecret(secret)))
    .returning({ tokenId: webSessions.tokenId });
  return row;
}
