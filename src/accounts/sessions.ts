import { createHash, randomBytes } from 'node:crypto';
import { type SQL, and, desc, eq, gt, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import { accounts, apiTokens, webSessions, workspaceMembers, workspaceSso, workspaces } from '../db/schema.js';
import { ssoRefusal, ssoRequiredMessage } from '../workspaces/sso-settings.js';
import { liveWorkspaceJoin, memberJoin } from '../workspaces/workspaces.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { type AuthContext, callerColumns, liveCaller } from './authenticate.js';

/**
 * Control-panel sessions. The browser holds a random 256-bit secret (in a cookie, see
 * src/http/session-cookie.ts); the database holds its SHA-256 only, with the API token the session
 * acts as. A session lives 12 hours or until its token expires, whichever is sooner, and dies
 * with its token (revoked or expired token: the session is refused).
 */
export const SESSION_TTL_MS = 12 * 3_600_000;

/** A User-Agent kept for a person to tell sessions apart: more says nothing more and costs a row. */
const USER_AGENT_CHARS = 300;

const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Starts a session acting as `tokenId`; returns the cookie secret (shown to nobody but the browser). */
export async function createSession(
  deps: Pick<Deps, 'db' | 'clock'>,
  auth: {
    accountId: string;
    tokenId: string;
    tokenExpiresAt: Date | null;
    /** The OpenID issuer of a single sign-on, and the workspace it opens in (src/accounts/oidc-sign-in.ts). */
    sso?: { issuer: string; workspaceId: string };
  },
  client: { userAgent?: string; address?: string } = {},
) {
  const now = deps.clock.now();
  let expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  if (auth.tokenExpiresAt && auth.tokenExpiresAt < expiresAt) expiresAt = auth.tokenExpiresAt;
  const secret = randomBytes(32).toString('base64url');
  const id = newId();
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
    id,
    userAgent: client.userAgent?.slice(0, USER_AGENT_CHARS) || null,
    clientAddress: client.address?.slice(0, 64) || null,
    ssoIssuer: auth.sso?.issuer ?? null,
    workspaceId: auth.sso?.workspaceId ?? null,
  });
  return { secret, expiresAt, id };
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
    .select({
      ...callerColumns,
      sessionId: webSessions.id,
      ssoIssuer: webSessions.ssoIssuer,
      sso: { issuer: workspaceSso.issuer, required: workspaceSso.required },
    })
    .from(webSessions)
    .innerJoin(apiTokens, eq(apiTokens.id, webSessions.tokenId))
    .innerJoin(accounts, eq(accounts.id, webSessions.accountId))
    // The workspace the panel switched to, else the token's.
    .leftJoin(
      workspaceMembers,
      memberJoin(webSessions.accountId, sql`coalesce(${webSessions.workspaceId}, ${apiTokens.workspaceId})`),
    )
    .leftJoin(workspaces, liveWorkspaceJoin)
    .leftJoin(workspaceSso, eq(workspaceSso.workspaceId, workspaces.id))
    .where(and(eq(webSessions.idHash, hashSecret(secret)), gt(webSessions.expiresAt, now)))
    .limit(1);
  const auth = row && (await liveCaller(deps, row, now));
  if (!auth) throw dead();
  // A workspace that requires single sign-on admits only sessions signed in through its issuer.
  if (row.sso?.required && row.sso.issuer !== row.ssoIssuer)
    throw new AppError('forbidden', ssoRequiredMessage(row.sso.issuer, auth.workspace.id));
  return { ...auth, sessionId: row.sessionId };
}

/**
 * Points a session at another workspace of its account's (the panel's switcher); the caller checks
 * membership. A workspace that requires single sign-on takes only a session signed in through it.
 */
export async function switchSessionWorkspace(deps: Pick<Deps, 'db'>, secret: string, workspaceId: string) {
  const [session] = await deps.db
    .select({ ssoIssuer: webSessions.ssoIssuer })
    .from(webSessions)
    .where(eq(webSessions.idHash, hashSecret(secret)));
  const refusal = await ssoRefusal(deps, workspaceId, session?.ssoIssuer ?? null);
  if (refusal) throw new AppError('forbidden', refusal);
  await deps.db
    .update(webSessions)
    .set({ workspaceId })
    .where(eq(webSessions.idHash, hashSecret(secret)));
}

/** The name of the token a code-host sign-in issues for its session; ending the session revokes it. */
export const OAUTH_SESSION_TOKEN_NAME = 'control panel (GitHub sign-in)';
/** The same for a single sign-on through an OpenID provider. */
export const OIDC_SESSION_TOKEN_NAME = 'control panel (single sign-on)';
/** Tokens a sign-in issued for its session alone: they end with it. */
const SIGN_IN_TOKEN_NAMES = [OAUTH_SESSION_TOKEN_NAME, OIDC_SESSION_TOKEN_NAME];

/**
 * Ends the sessions `where` picks, with the token a code-host sign-in issued for each (any other
 * token stays: it was minted by a person and outlives the panel). Answers how many ended.
 */
async function endSessionsWhere(deps: Pick<Deps, 'db' | 'clock'>, where: SQL | undefined): Promise<number> {
  const ended = await deps.db.delete(webSessions).where(where).returning({ tokenId: webSessions.tokenId });
  if (ended.length > 0)
    await deps.db
      .update(apiTokens)
      .set({ revokedAt: deps.clock.now() })
      .where(
        and(
          inArray(
            apiTokens.id,
            ended.map((e) => e.tokenId),
          ),
          inArray(apiTokens.name, SIGN_IN_TOKEN_NAMES),
          isNull(apiTokens.revokedAt),
        ),
      );
  return ended.length;
}

/** Ends the session of this cookie secret (signing out); whether there was one. */
export async function deleteSession(deps: Pick<Deps, 'db' | 'clock'>, secret: string): Promise<boolean> {
  return (await endSessionsWhere(deps, eq(webSessions.idHash, hashSecret(secret)))) > 0;
}

/** A live session as its account sees it (GET /v1/me/sessions). */
export interface SessionRecord {
  id: string;
  createdAt: Date;
  expiresAt: Date;
  userAgent: string | null;
  clientAddress: string | null;
  /** The workspace the session acts in: the one the panel switched to, else its token's. */
  workspaceId: string;
  current: boolean;
}

/** The token is live: not revoked, not expired. A session of a dead token is dead too. */
const liveToken = (now: Date) =>
  and(isNull(apiTokens.revokedAt), or(isNull(apiTokens.expiresAt), gt(apiTokens.expiresAt, now)));

/** The account's live sessions, newest first; `currentSecret` (the caller's own cookie) marks its own. */
export async function listSessions(
  deps: Pick<Deps, 'db' | 'clock'>,
  accountId: string,
  currentSecret: string | undefined,
): Promise<SessionRecord[]> {
  const now = deps.clock.now();
  const current = currentSecret === undefined ? undefined : hashSecret(currentSecret);
  const rows = await deps.db
    .select({
      idHash: webSessions.idHash,
      id: webSessions.id,
      createdAt: webSessions.createdAt,
      expiresAt: webSessions.expiresAt,
      userAgent: webSessions.userAgent,
      clientAddress: webSessions.clientAddress,
      workspaceId: sql<string>`coalesce(${webSessions.workspaceId}, ${apiTokens.workspaceId})`,
    })
    .from(webSessions)
    .innerJoin(apiTokens, eq(apiTokens.id, webSessions.tokenId))
    .where(and(eq(webSessions.accountId, accountId), gt(webSessions.expiresAt, now), liveToken(now)))
    .orderBy(desc(webSessions.createdAt), desc(webSessions.id));
  return rows.map(({ idHash, ...row }) => ({ ...row, current: idHash === current }));
}

/** Ends one of the account's sessions by its public id; not_found for another account's or an unknown one. */
export async function endSession(deps: Pick<Deps, 'db' | 'clock'>, accountId: string, id: string): Promise<void> {
  const ended = await endSessionsWhere(deps, and(eq(webSessions.accountId, accountId), eq(webSessions.id, id)));
  if (ended === 0) throw new AppError('not_found', `no session ${id} of yours`);
}

/**
 * What a workspace's owner ends of a member's at once: every panel session of theirs acting in the
 * workspace (switched to it, or opened with a token of it), and every live token of theirs for the
 * workspace. Their sessions and tokens in other workspaces are theirs and those owners' (docs/decisions.md).
 */
export async function signOutMember(
  deps: Pick<Deps, 'db' | 'clock'>,
  workspaceId: string,
  accountId: string,
): Promise<{ sessions: number; tokens: number }> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const theirTokens = tx
      .select({ id: apiTokens.id })
      .from(apiTokens)
      .where(and(eq(apiTokens.accountId, accountId), eq(apiTokens.workspaceId, workspaceId)));
    const ended = await tx
      .delete(webSessions)
      .where(
        and(
          eq(webSessions.accountId, accountId),
          or(
            eq(webSessions.workspaceId, workspaceId),
            and(isNull(webSessions.workspaceId), inArray(webSessions.tokenId, theirTokens)),
          ),
        ),
      )
      .returning({ tokenId: webSessions.tokenId });
    // Their tokens for this workspace, and the sign-in tokens of the sessions ended (a session switched
    // here acts with a token of another workspace, issued for that session alone).
    const signInTokens = ended.map((e) => e.tokenId);
    const revoked = await tx
      .update(apiTokens)
      .set({ revokedAt: now })
      .where(
        and(
          eq(apiTokens.accountId, accountId),
          liveToken(now),
          or(
            eq(apiTokens.workspaceId, workspaceId),
            signInTokens.length
              ? and(inArray(apiTokens.id, signInTokens), inArray(apiTokens.name, SIGN_IN_TOKEN_NAMES))
              : sql`false`,
          ),
        ),
      )
      .returning({ id: apiTokens.id });
    return { sessions: ended.length, tokens: revoked.length };
  });
}
