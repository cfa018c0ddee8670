import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { ScmError } from '../scm/code-host.js';
import { type ScmHost, defaultHost, hostById, scmHosts } from '../scm/hosts.js';
import { type OAuthToken, requestToken } from '../scm/oauth-token.js';
import { chosenHost } from './scm-connection.js';

export const STATE_TTL_MS = 10 * 60_000;

export type OAuthDeps = Pick<Deps, 'db' | 'config' | 'fetch' | 'secretKey' | 'clock'>;

/**
 * The host to go through OAuth with: the one named, or the first with an OAuth app. not_found
 * when it has none (the operator registers one per host: docs/code-host.md).
 */
export function oauthHost(
  deps: Pick<Deps, 'config'>,
  id?: string,
): ScmHost & { oauth: { clientId: string; clientSecret: string } } {
  const host =
    id === undefined ? (scmHosts(deps.config).find((h) => h.oauth) ?? defaultHost(deps.config)) : chosenHost(deps, id);
  if (!host.oauth)
    throw new AppError(
      'not_found',
      `signing in with ${host.id} is not configured on this server (it needs an OAuth app: EMEND_SCM_OAUTH_CLIENT_ID ` +
        'and _SECRET, or `oauth` in EMEND_SCM_HOSTS; docs/code-host.md)',
    );
  return host as ScmHost & { oauth: { clientId: string; clientSecret: string } };
}

const sign = (key: Buffer, payload: string) =>
  createHmac('sha256', key).update(`emend-scm-oauth-state:${payload}`).digest('base64url');

/** The callback address registered with the OAuth app. */
export const callbackUrl = (deps: Pick<Deps, 'config'>) => `${deps.config.baseUrl}/v1/auth/scm/callback`;

/** A connection's state: the workspace it connects, its flow row and the browser it is bound to. */
export interface ConnectState {
  kind: 'connect';
  /** The code host it went to. */
  host: ScmHost;
  workspaceId: string;
  /** Who started it (the audit log's actor at the callback); absent in states issued before it was carried. */
  accountId?: string;
  /** The flow's row (src/workspaces/scm-oauth-connect.ts): a state is taken once. */
  flowId: string;
  /** SHA-256 of the cookie the starting browser was given. */
  browserHash: string;
}

/** A sign-in's state: bound to the nonce the browser holds in its login cookie. */
export interface LoginState {
  kind: 'login';
  host: ScmHost;
  loginNonce: string;
}

/** The start of a GitHub App installation (src/workspaces/app-claim.ts): handed back to the setup URL. */
export interface InstallState {
  kind: 'install';
  host: ScmHost;
  workspaceId: string;
  accountId: string;
  browserHash: string;
}

/** The app sign-in that claims an installation for a workspace. */
export interface ClaimState {
  kind: 'claim';
  host: ScmHost;
  workspaceId: string;
  accountId: string;
  installationId: string;
  browserHash: string;
}

/** What a state says. */
export type OAuthState = ConnectState | LoginState | InstallState | ClaimState;

/** A state: the claims with the host, an expiry and a nonce, signed with the server's key. */
export function signedState(
  deps: Pick<Deps, 'secretKey' | 'clock'>,
  host: ScmHost,
  claims: Record<string, unknown>,
): string {
  const payload = Buffer.from(
    JSON.stringify({
      ...claims,
      h: host.id,
      e: deps.clock.now().getTime() + STATE_TTL_MS,
      n: randomBytes(9).toString('base64url'),
    }),
  ).toString('base64url');
  return `${payload}.${sign(deps.secretKey, payload)}`;
}

/** The host's OAuth authorize page to send the browser to, its state signed and carrying the claims. */
export function oauthAuthorizeUrl(
  deps: Pick<Deps, 'config' | 'secretKey' | 'clock'>,
  host: ScmHost & { oauth: { clientId: string } },
  claims: Record<string, unknown>,
  scope: string,
): string {
  const url = new URL(`${host.webUrl}${host.kind.oauth.authorizePath}`);
  url.searchParams.set('client_id', host.oauth.clientId);
  url.searchParams.set('redirect_uri', callbackUrl(deps));
  // GitLab and Gitea implement the OAuth 2 code flow to the letter and need it; GitHub ignores it.
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', scope);
  url.searchParams.set('state', signedState(deps, host, claims));
  return url.href;
}

/** A state's claims, once its signature is checked (its age is the caller's to check). */
function openState(deps: Pick<Deps, 'secretKey'>, state: string) {
  const [payload, mac] = state.split('.');
  const expected = Buffer.from(payload ? sign(deps.secretKey, payload) : '');
  // Byte lengths, not string lengths: a signature of the right length in characters but not in
  // bytes (a non-ASCII character) would make timingSafeEqual throw.
  const given = Buffer.from(mac ?? '');
  if (!payload || !mac || given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new AppError('bad_request', 'state: not one this server issued');
  }
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
    a?: string;
    l?: string;
    e: number;
    h?: string;
    f?: string;
    b?: string;
    u?: string;
    i?: string;
    k?: string;
  };
}

/**
 * The state of the manifest flow (src/workspaces/app-manifest.ts): the host it creates an app on
 * has no OAuth yet, so it is read apart from the OAuth states.
 */
export function readManifestState(
  deps: Pick<Deps, 'config' | 'secretKey' | 'clock'>,
  state: string,
): { host: ScmHost; accountId: string; browserHash: string } {
  const { e, h, u, b, k } = openState(deps, state);
  if (deps.clock.now().getTime() > e) throw new AppError('bad_request', 'state: expired; start again');
  const host = h === undefined ? undefined : hostById(deps.config, h);
  if (k !== 'manifest' || !host || typeof u !== 'string' || typeof b !== 'string')
    throw new AppError('bad_request', 'state: not a manifest flow this server started');
  return { host, accountId: u, browserHash: b };
}

/** Checks a state's signature and age and says what it is for. */
export function readState(deps: Pick<Deps, 'config' | 'secretKey' | 'clock'>, state: string): OAuthState {
  // No host signs in through OAuth here: the callback does not exist (not_found, as its start).
  oauthHost(deps);
  const { a, l, e, h, f, b, u, i, k } = openState(deps, state);
  if (deps.clock.now().getTime() > e) throw new AppError('bad_request', 'state: expired; start the connection again');
  // States issued before several hosts (no `h`) went to the one host there was, the first.
  const host = h === undefined ? scmHosts(deps.config)[0] : hostById(deps.config, h);
  if (!host?.oauth) throw new AppError('bad_request', 'state: for a code host this server no longer signs in with');
  if (typeof l === 'string') return { kind: 'login', host, loginNonce: l };
  if (typeof a === 'string' && typeof u === 'string' && typeof b === 'string') {
    if (k === 'install') return { kind: 'install', host, workspaceId: a, accountId: u, browserHash: b };
    if (typeof i === 'string')
      return { kind: 'claim', host, workspaceId: a, accountId: u, installationId: i, browserHash: b };
  }
  // A connection state from before connections were bound to a browser (no flow) is not honoured.
  if (typeof a !== 'string' || typeof f !== 'string' || typeof b !== 'string')
    throw new AppError('bad_request', 'state: issued by an older version of this server; start the connection again');
  return {
    kind: 'connect',
    host,
    workspaceId: a,
    ...(typeof u === 'string' ? { accountId: u } : {}),
    flowId: f,
    browserHash: b,
  };
}

/** Trades the callback's code for the user's token at the code host. */
export async function exchangeCode(deps: OAuthDeps, host: ScmHost, code: string): Promise<OAuthToken> {
  try {
    return await requestToken(deps.fetch, host, { code, redirectUri: callbackUrl(deps) }, deps.clock.now());
  } catch (err) {
    if (err instanceof ScmError && err.status !== null)
      throw new AppError('bad_request', `code: the code host refused it (${err.message})`);
    throw new AppError('scm_unavailable', 'the code host could not be reached to complete the connection');
  }
}
