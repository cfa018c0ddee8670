import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { asc, sql } from 'drizzle-orm';
import type { Account } from './accounts.js';
import { accounts } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { connectScm, hostFor, scmUnavailable } from './scm-connection.js';

const STATE_TTL_MS = 10 * 60_000;

type OAuthDeps = Pick<Deps, 'db' | 'config' | 'fetch' | 'secretKey' | 'clock'>;

function oauthApp(deps: Pick<Deps, 'config'>) {
  const app = deps.config.scmOAuth;
  if (!app)
    throw new AppError(
      'not_found',
      'signing in with the code host is not configured on this server (EMEND_SCM_OAUTH_CLIENT_ID and _SECRET)',
    );
  return app;
}

const sign = (key: Buffer, payload: string) =>
  createHmac('sha256', key).update(`emend-scm-oauth-state:${payload}`).digest('base64url');

/** The callback address registered with the OAuth app. */
export const callbackUrl = (deps: Pick<Deps, 'config'>) => `${deps.config.baseUrl}/v1/auth/scm/callback`;

/** What a state says: the account to connect, or (a sign-in) the browser nonce it is bound to. */
export interface OAuthState {
  /** connect: the account that started it */
  accountId?: string;
  /** sign-in: the value of the browser's login cookie when it started */
  loginNonce?: string;
}

function authorize(
  deps: Pick<Deps, 'config' | 'secretKey' | 'clock'>,
  claims: Record<string, unknown>,
  scope: string,
): string {
  const app = oauthApp(deps);
  const payload = Buffer.from(
    JSON.stringify({
      ...claims,
      e: deps.clock.now().getTime() + STATE_TTL_MS,
      n: randomBytes(9).toString('base64url'),
    }),
  ).toString('base64url');
  const url = new URL(`${deps.config.scmWebUrl}/login/oauth/authorize`);
  url.searchParams.set('client_id', app.clientId);
  url.searchParams.set('redirect_uri', callbackUrl(deps));
  url.searchParams.set('scope', scope);
  url.searchParams.set('state', `${payload}.${sign(deps.secretKey, payload)}`);
  return url.href;
}

/**
 * Where to send the person to approve access. The state names the account and expires in
 * ten minutes; it is signed with the service's key, so the callback (which carries no
 * credentials of ours) can trust it and nobody can connect their token to someone else's account.
 */
export function authorizeUrl(deps: Pick<Deps, 'config' | 'secretKey' | 'clock'>, accountId: string): string {
  return authorize(deps, { a: accountId }, 'repo');
}

/**
 * Signing in to the control panel with the code host: the state is marked as a sign-in and
 * bound to a random nonce the browser also holds in a cookie, so a callback URL made in one
 * browser cannot sign another browser in (login CSRF). Only the user's identity is asked for.
 */
export function loginAuthorizeUrl(deps: Pick<Deps, 'config' | 'secretKey' | 'clock'>): { url: string; nonce: string } {
  const nonce = randomBytes(18).toString('base64url');
  return { url: authorize(deps, { l: nonce }, 'read:user'), nonce };
}

/** Checks a state's signature and age and says what it is for. */
export function readState(deps: Pick<Deps, 'config' | 'secretKey' | 'clock'>, state: string): OAuthState {
  oauthApp(deps);
  const [payload, mac] = state.split('.');
  const expected = payload ? sign(deps.secretKey, payload) : '';
  if (!payload || !mac || mac.length !== expected.length || !timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) {
    throw new AppError('bad_request', 'state: not one this server issued');
  }
  const { a, l, e } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
    a?: string;
    l?: string;
    e: number;
  };
  if (deps.clock.now().getTime() > e) throw new AppError('bad_request', 'state: expired; start the connection again');
  return typeof l === 'string' ? { loginNonce: l } : { accountId: a };
}

/** Trades the callback's code for the user's token at the code host. */
async function exchangeCode(deps: OAuthDeps, code: string): Promise<string> {
  const app = oauthApp(deps);
  let body: { access_token?: string; error?: string; error_description?: string };
  try {
    const res = await deps.fetch(`${deps.config.scmWebUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: app.clientId,
        client_secret: app.clientSecret,
        code,
        redirect_uri: callbackUrl(deps),
      }),
      signal: AbortSignal.timeout(20_000),
    });
    body = (await res.json()) as typeof body;
  } catch {
    throw new AppError('scm_unavailable', 'the code host could not be reached to complete the connection');
  }
  if (!body.access_token)
    throw new AppError(
      'bad_request',
      `code: the code host refused it (${body.error_description ?? body.error ?? 'no token'})`,
    );
  return body.access_token;
}

/** The callback: trades the code for a token at the code host and connects the account named by the state. */
export async function completeOAuth(
  deps: OAuthDeps,
  code: string,
  state: string,
): Promise<{ accountId: string; login: string }> {
  const { accountId } = readState(deps, state);
  if (!accountId) throw new AppError('bad_request', 'state: a sign-in state, not a connection');
  const token = await exchangeCode(deps, code);
  return { accountId, login: await connectScm(deps, accountId, token) };
}

/**
 * The callback of a sign-in: the code host says who the person is; the account connected to
 * that login is theirs. not_found when no account is connected to it.
 */
export async function completeLogin(deps: OAuthDeps, code: string): Promise<{ account: Account; login: string }> {
  const token = await exchangeCode(deps, code);
  let login: string;
  try {
    login = await hostFor(deps, token).user();
  } catch (err) {
    throw scmUnavailable(err);
  }
  const rows = await deps.db
    .select()
    .from(accounts)
    .where(sql`lower(${accounts.scmLogin}) = ${login.toLowerCase()}`)
    .orderBy(asc(accounts.createdAt))
    .limit(5);
  const account = rows.find((r) => r.plan !== 'demo');
  if (!account) throw new AppError('not_found', `no emend account is connected to GitHub user ${login}`);
  return { account, login };
}
