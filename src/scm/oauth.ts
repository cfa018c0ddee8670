import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { connectScm } from './account-scm.js';

const STATE_TTL_MS = 10 * 60_000;

type OAuthDeps = Pick<Deps, 'db' | 'config' | 'fetch' | 'secretKey' | 'clock'>;

function oauthApp(deps: Pick<Deps, 'config'>) {
  const app = deps.config.scmOAuth;
  if (!app) throw new AppError('not_found', 'signing in with the code host is not configured on this server (EMEND_SCM_OAUTH_CLIENT_ID and _SECRET)');
  return app;
}

const sign = (key: Buffer, payload: string) => createHmac('sha256', key).update(`emend-scm-oauth-state:${payload}`).digest('base64url');

/** The callback address registered with the OAuth app. */
export const callbackUrl = (deps: Pick<Deps, 'config'>) => `${deps.config.baseUrl}/v1/auth/scm/callback`;

/**
 * Where to send the person to approve access. The state names the account and expires in
 * ten minutes; it is signed with the service's key, so the callback (which carries no
 * credentials of ours) can trust it and nobody can connect their token to someone else's account.
 */
export function authorizeUrl(deps: Pick<Deps, 'config' | 'secretKey' | 'clock'>, accountId: string): string {
  const app = oauthApp(deps);
  const payload = Buffer.from(JSON.stringify({ a: accountId, e: deps.clock.now().getTime() + STATE_TTL_MS, n: randomBytes(9).toString('base64url') })).toString('base64url');
  const url = new URL(`${deps.config.scmWebUrl}/login/oauth/authorize`);
  url.searchParams.set('client_id', app.clientId);
  url.searchParams.set('redirect_uri', callbackUrl(deps));
  url.searchParams.set('scope', 'repo');
  url.searchParams.set('state', `${payload}.${sign(deps.secretKey, payload)}`);
  return url.href;
}

function accountOfState(deps: Pick<Deps, 'secretKey' | 'clock'>, state: string): string {
  const [payload, mac] = state.split('.');
  const expected = payload ? sign(deps.secretKey, payload) : '';
  if (!payload || !mac || mac.length !== expected.length || !timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) {
    throw new AppError('bad_request', 'state: not one this server issued');
  }
  const { a, e } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { a: string; e: number };
  if (deps.clock.now().getTime() > e) throw new AppError('bad_request', 'state: expired; start the connection again');
  return a;
}

/** The callback: trades the code for a token at the code host and connects the account named by the state. */
export async function completeOAuth(deps: OAuthDeps, code: string, state: string): Promise<{ accountId: string; login: string }> {
  const app = oauthApp(deps);
  const accountId = accountOfState(deps, state);
  let body: { access_token?: string; error?: string; error_description?: string };
  try {
    const res = await deps.fetch(`${deps.config.scmWebUrl}/login/oauth/access_token`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: app.clientId, client_secret: app.clientSecret, code, redirect_uri: callbackUrl(deps) }),
      signal: AbortSignal.timeout(20_000),
    });
    body = (await res.json()) as typeof body;
  } catch {
    throw new AppError('scm_unavailable', 'the code host could not be reached to complete the connection');
  }
  if (!body.access_token) throw new AppError('bad_request', `code: the code host refused it (${body.error_description ?? body.error ?? 'no token'})`);
  return { accountId, login: await connectScm(deps, accountId, body.access_token) };
}
