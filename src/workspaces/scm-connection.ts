import { and, asc, eq } from 'drizzle-orm';
import type { Within } from '../db/client.js';
import { scmConnections } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { decryptSecret, encryptSecret } from '../secrets/box.js';
import { type CodeHost, ScmError } from '../scm/code-host.js';
import { type ScmHost, clientOf, defaultHost, hostById, scmHosts } from '../scm/hosts.js';
import { type OAuthToken, requestToken } from '../scm/oauth-token.js';

// The token is bound to its account (AES-GCM associated data); connections made when there was one
// host carry this same context, so they decrypt unchanged after the move to scm_connections.
const context = (workspaceId: string) => `scm-token:${workspaceId}`;
const refreshContext = (workspaceId: string, host: string) => `scm-refresh:${workspaceId}:${host}`;
/** An OAuth token this close to expiring is refreshed before use. */
const REFRESH_MARGIN_MS = 60_000;

type ScmDeps = Pick<Deps, 'db' | 'config' | 'fetch' | 'secretKey' | 'clock'>;

/** The code host as the account sees it: with its token when connected, anonymous otherwise. */
export const hostFor = (deps: Pick<Deps, 'fetch'>, host: ScmHost, token?: string): CodeHost =>
  clientOf(host, deps.fetch, token);

/** The host a request names (`host`), the default one when it names none; 400 naming the hosts otherwise. */
export function chosenHost(deps: Pick<Deps, 'config'>, id: string | undefined): ScmHost {
  if (id === undefined) return defaultHost(deps.config);
  const host = hostById(deps.config, id);
  if (!host) {
    const ids = deps.config.scmHosts.map((h) => h.id).join(', ');
    throw new AppError('bad_request', `host: "${id}" is not a code host of this server (it has ${ids})`);
  }
  return host;
}

/** A failure to reach the code host, as an API error (never a 500). */
export function scmUnavailable(err: unknown): AppError {
  const message = err instanceof ScmError ? err.message : 'the code host could not be reached';
  return new AppError('scm_unavailable', message);
}

/**
 * Connects the account to a code host with a token: checked against the host (its user), then
 * stored encrypted (with `within`, in one transaction), the login shown in the profile. A
 * rejected token is the caller's error. An OAuth token that expires is stored with its refresh
 * token.
 */
export async function connectScm(
  deps: ScmDeps,
  workspaceId: string,
  token: string | OAuthToken,
  host: ScmHost = defaultHost(deps.config),
  /** Run in the transaction that stores the connection, with the login (its audit row). */
  within?: Within<string>,
): Promise<string> {
  const t: OAuthToken = typeof token === 'string' ? { accessToken: token.trim() } : token;
  if (t.accessToken.length < 8 || /\s/.test(t.accessToken))
    throw new AppError('bad_request', 'token: not a code-host token');
  let login: string;
  try {
    login = await hostFor(deps, host, t.accessToken).user();
  } catch (err) {
    if (err instanceof ScmError && (err.status === 401 || err.status === 403))
      throw new AppError('bad_request', `token: ${host.id} rejected it (HTTP ${err.status})`);
    throw scmUnavailable(err);
  }
  const row = {
    login,
    tokenEnc: encryptSecret(deps.secretKey, t.accessToken, context(workspaceId)),
    refreshEnc: t.refreshToken
      ? encryptSecret(deps.secretKey, t.refreshToken, refreshContext(workspaceId, host.id))
      : null,
    expiresAt: t.expiresAt ?? null,
  };
  // The host was asked first (who the token is); the row and `within` commit together.
  await deps.db.transaction(async (tx) => {
    await tx
      .insert(scmConnections)
      .values({ workspaceId, host: host.id, createdAt: deps.clock.now(), ...row })
      .onConflictDoUpdate({ target: [scmConnections.workspaceId, scmConnections.host], set: row });
    await within?.(tx, login);
  });
  return login;
}

/** Deletes the account's connection to the host; false when there was none. */
export async function disconnectScm(
  deps: Pick<Deps, 'db' | 'config'>,
  workspaceId: string,
  host: ScmHost = defaultHost(deps.config),
): Promise<boolean> {
  const gone = await deps.db
    .delete(scmConnections)
    .where(and(eq(scmConnections.workspaceId, workspaceId), eq(scmConnections.host, host.id)))
    .returning({ login: scmConnections.login });
  return gone.length > 0;
}

/** Each configured host with the account's login there (null when not connected), the default first. */
export async function connectionsOf(
  deps: Pick<Deps, 'db' | 'config'>,
  workspaceId: string,
): Promise<{ host: ScmHost; login: string | null }[]> {
  const rows = await deps.db
    .select({ host: scmConnections.host, login: scmConnections.login })
    .from(scmConnections)
    .where(eq(scmConnections.workspaceId, workspaceId))
    .orderBy(asc(scmConnections.host));
  return scmHosts(deps.config).map((host) => ({ host, login: rows.find((r) => r.host === host.id)?.login ?? null }));
}

/** The account's login on the host, or null. */
export async function loginOn(deps: Pick<Deps, 'db'>, workspaceId: string, host: ScmHost): Promise<string | null> {
  const [row] = await deps.db
    .select({ login: scmConnections.login })
    .from(scmConnections)
    .where(and(eq(scmConnections.workspaceId, workspaceId), eq(scmConnections.host, host.id)));
  return row?.login ?? null;
}

/**
 * The account's token on the host, decrypted for one use in this process; undefined when not
 * connected. An OAuth token about to expire is refreshed first (and the new pair stored); one
 * the host will not refresh is returned as it is, so the caller meets the host's 401.
 */
export async function scmTokenOn(deps: ScmDeps, workspaceId: string, host: ScmHost): Promise<string | undefined> {
  const [row] = await deps.db
    .select()
    .from(scmConnections)
    .where(and(eq(scmConnections.workspaceId, workspaceId), eq(scmConnections.host, host.id)));
  if (!row) return undefined;
  if (!expiring(deps, row)) return decryptSecret(deps.secretKey, row.tokenEnc, context(workspaceId));
  return refreshed(deps, workspaceId, host);
}

const expiring = (deps: Pick<Deps, 'clock'>, row: { refreshEnc: string | null; expiresAt: Date | null }) =>
  !!row.refreshEnc && !!row.expiresAt && row.expiresAt.getTime() - REFRESH_MARGIN_MS <= deps.clock.now().getTime();

/**
 * Refreshes the connection's token under a lock on its row: GitLab rotates refresh tokens (the
 * old one dies when used), so two tasks of one account refreshing at once would leave the second
 * with a dead refresh token and a dead access token. The second waits, finds the row fresh, and
 * uses what the first stored.
 */
async function refreshed(deps: ScmDeps, workspaceId: string, host: ScmHost): Promise<string | undefined> {
  return deps.db.transaction(async (tx) => {
    const where = and(eq(scmConnections.workspaceId, workspaceId), eq(scmConnections.host, host.id));
    const [row] = await tx.select().from(scmConnections).where(where).for('update');
    if (!row) return undefined;
    const token = decryptSecret(deps.secretKey, row.tokenEnc, context(workspaceId));
    if (!expiring(deps, row)) return token;
    const refreshToken = decryptSecret(deps.secretKey, row.refreshEnc!, refreshContext(workspaceId, host.id));
    let fresh: OAuthToken;
    try {
      fresh = await requestToken(deps.fetch, host, { refreshToken }, deps.clock.now());
    } catch {
      return token;
    }
    await tx
      .update(scmConnections)
      .set({
        tokenEnc: encryptSecret(deps.secretKey, fresh.accessToken, context(workspaceId)),
        refreshEnc: encryptSecret(
          deps.secretKey,
          fresh.refreshToken ?? refreshToken,
          refreshContext(workspaceId, host.id),
        ),
        expiresAt: fresh.expiresAt ?? null,
      })
      .where(where);
    return fresh.accessToken;
  });
}

/**
 * Every code-host token the workspace has stored, on every host: access and refresh tokens,
 * decrypted as they are now (none is refreshed here). For redacting them wherever text leaves
 * the service (src/engine/task-secrets.ts), never for calling a host.
 */
export async function storedScmTokens(deps: Pick<Deps, 'db' | 'secretKey'>, workspaceId: string): Promise<string[]> {
  const rows = await deps.db.select().from(scmConnections).where(eq(scmConnections.workspaceId, workspaceId));
  return rows.flatMap((row) => [
    decryptSecret(deps.secretKey, row.tokenEnc, context(workspaceId)),
    ...(row.refreshEnc ? [decryptSecret(deps.secretKey, row.refreshEnc, refreshContext(workspaceId, row.host))] : []),
  ]);
}
