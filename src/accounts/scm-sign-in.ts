import { randomBytes } from 'node:crypto';
import { and, asc, eq, ne, sql } from 'drizzle-orm';
import { accounts, scmConnections, workspaces } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { type ScmHost, hostLabel } from '../scm/hosts.js';
import { hostFor, scmUnavailable } from '../workspaces/scm-connection.js';
import { type OAuthDeps, exchangeCode, oauthAuthorizeUrl, oauthHost } from '../workspaces/scm-oauth.js';
import type { Account } from './accounts.js';

/**
 * Signing in to the control panel with the code host: the state is marked as a sign-in and
 * bound to a random nonce the browser also holds in a cookie, so a callback URL made in one
 * browser cannot sign another browser in (login CSRF). Only the user's identity is asked for.
 */
export function loginAuthorizeUrl(
  deps: Pick<Deps, 'config' | 'secretKey' | 'clock'>,
  hostId?: string,
): { url: string; nonce: string } {
  const host = oauthHost(deps, hostId);
  const nonce = randomBytes(18).toString('base64url');
  return { url: oauthAuthorizeUrl(deps, host, { l: nonce }, host.kind.oauth.loginScope), nonce };
}

/**
 * The callback of a sign-in: the code host says who the person is; the account connected to
 * that login is theirs. not_found when no account is connected to it; conflict when several
 * are, as nothing here says which one the person means (docs/decisions.md, "Signing in with the code host picks no account for the person").
 */
export async function completeLogin(
  deps: OAuthDeps,
  host: ScmHost,
  code: string,
): Promise<{ account: Account; personalWorkspaceId: string; login: string }> {
  const token = await exchangeCode(deps, host, code);
  let login: string;
  try {
    login = await hostFor(deps, host, token.accessToken).user();
  } catch (err) {
    throw scmUnavailable(err);
  }
  const rows = await deps.db
    .select({ account: accounts, workspaceId: workspaces.id })
    .from(scmConnections)
    // Signing in finds a person: through the connection of their personal workspace (a team's
    // connection is the team's identity on the host, not a member's).
    .innerJoin(workspaces, eq(workspaces.id, scmConnections.workspaceId))
    .innerJoin(accounts, eq(accounts.id, workspaces.personalOf))
    .where(
      and(
        eq(scmConnections.host, host.id),
        sql`lower(${scmConnections.login}) = ${login.toLowerCase()}`,
        ne(workspaces.plan, 'demo'),
      ),
    )
    .orderBy(asc(accounts.createdAt))
    .limit(2);
  const [first, another] = rows;
  const account = first?.account;
  if (!account) throw new AppError('not_found', `no emend account is connected to ${hostLabel(host)} user ${login}`);
  if (another)
    throw new AppError(
      'conflict',
      `several emend accounts are connected to ${hostLabel(host)} user ${login}, so signing in with ${hostLabel(host)} ` +
        'cannot tell which one you mean: sign in with a token, and disconnect the code host from the accounts you do not sign in to',
    );
  return { account, personalWorkspaceId: first!.workspaceId, login };
}
