import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseBody, readBody } from './rest.js';
import { send } from './server.js';
import type { State } from './state.js';

/**
 * One OAuth 2 provider for every fake host: /authorize approves at once as the user set by
 * `approveAs` (nobody: the user denies) and redirects back with a code; the token path trades a
 * code (single-use, 10 minutes) or a refresh token (rotated; the access token it came with is
 * revoked) for a token. What differs between hosts — paths, which checks they make, their error
 * codes and token shapes — is an OAuthHost, data.
 */

const CODE_TTL_MS = 10 * 60 * 1000;

/** Why an authorization is refused: answered with a 400 page (`page`) or on the redirect (`redirect` params). */
export type AuthorizeRefusal = 'badRedirect' | 'unknownClient' | 'badResponseType' | 'denied';
export type TokenRefusal = 'grantType' | 'unknownClient' | 'badSecret' | 'badRefresh' | 'badCode' | 'badRedirect';

/**
 * A host's OAuth settings. `authorizeByPost`: GitHub's consent form posts back to /authorize;
 * `needsResponseType`: Gitea asks for `response_type=code`; `bodyOnly` (Gitea): token parameters
 * come in the body only, not in the query too; `redirectCheck`: whether the token request's redirect_uri must match
 * the authorization's (always, when given, never); `scope`: the granted scope as the host writes
 * it back; `redirectPage`: the page sent with the 302 back; `issue`: a new grant's tokens and the
 * rest of the token response; `notFound`: status, type and body for any other path.
 */
export interface OAuthHost {
  /** Under the host's OAuth root, beside `authorize`. */
  tokenPath: string;
  authorizeByPost?: boolean;
  needsResponseType?: boolean;
  bodyOnly?: boolean;
  redirectCheck: 'always' | 'ifGiven' | 'never';
  codeBytes: number;
  scope(asked: string | null): string;
  refuseAuthorize: Record<AuthorizeRefusal, { page: string } | { redirect: Record<string, string> }>;
  refuseToken(why: TokenRefusal): [number, Record<string, string>];
  redirectPage?(location: string): string;
  /** `clientId`: the application the grant is for; `expiresAt`: when the access token dies (ms, State clock). */
  issue(
    scope: string,
    clientId: string,
  ): { access: string; refresh?: string; scopes: string[]; readOnly?: boolean; expiresAt?: number; body: object };
  notFound: [number, string, string];
}

/** A scope parameter's words (GitHub separates them with commas, GitLab with `+` or spaces). */
export const words = (scope: string): string[] => scope.split(/[\s,+]+/).filter(Boolean);

type Grant = { clientId: string; login: string; redirectUri: string; scope: string };

const html = (text: string) =>
  `<html><body><p>${text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)}</p></body></html>`;

const json = (res: ServerResponse, status: number, body: object) =>
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body), { 'cache-control': 'no-store' });

/** A token request's parameters: the query's (when the host reads it), then the body's strings (JSON or form). */
async function tokenParams(req: IncomingMessage, url: URL, query: boolean): Promise<Record<string, string>> {
  const body = parseBody(await readBody(req), req.headers['content-type'], true) ?? {};
  const strings = Object.entries(body).filter((e): e is [string, string] => typeof e[1] === 'string');
  return { ...(query ? Object.fromEntries(url.searchParams) : {}), ...Object.fromEntries(strings) };
}

export function oauthProvider(host: OAuthHost, state: State, root: string) {
  const apps = new Map<string, string>();
  const codes = new Map<string, Grant & { expires: number }>();
  const refreshTokens = new Map<string, Grant & { access: string }>();
  let approver: string | undefined;

  function authorize(res: ServerResponse, q: URLSearchParams): number {
    const [clientId, redirectUri] = [q.get('client_id') ?? '', q.get('redirect_uri') ?? ''];
    const to = URL.canParse(redirectUri) ? new URL(redirectUri) : undefined;
    const badType = host.needsResponseType && q.get('response_type') !== 'code';
    const checks: [AuthorizeRefusal, boolean][] = [
      ['badRedirect', !to],
      ['unknownClient', !apps.has(clientId)],
    ];
    checks.push(['badResponseType', badType === true], ['denied', approver === undefined]);
    const why = checks.find(([, failed]) => failed)?.[0];
    const refusal = why && host.refuseAuthorize[why];
    const page = refusal && 'page' in refusal ? refusal.page : undefined;
    if (!to || page !== undefined) return send(res, 400, 'text/html; charset=utf-8', html(page ?? ''));
    if (refusal && 'redirect' in refusal)
      for (const [k, v] of Object.entries(refusal.redirect)) to.searchParams.set(k, v);
    else {
      const code = randomBytes(host.codeBytes).toString('hex');
      const expires = Date.now() + CODE_TTL_MS;
      codes.set(code, { clientId, login: approver!, redirectUri, scope: host.scope(q.get('scope')), expires });
      to.searchParams.set('code', code);
    }
    if (q.get('state') !== null) to.searchParams.set('state', q.get('state')!);
    const location = to.toString();
    return send(res, 302, 'text/html; charset=utf-8', host.redirectPage?.(location) ?? '', { location });
  }

  async function token(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
    const p = await tokenParams(req, url, !host.bodyOnly);
    const refuse = (why: TokenRefusal) => json(res, ...host.refuseToken(why));
    const type = p.grant_type ?? 'authorization_code';
    if (type !== 'authorization_code' && type !== 'refresh_token') return refuse('grantType');
    const secret = apps.get(p.client_id ?? '');
    if (secret === undefined) return refuse('unknownClient');
    if (secret !== p.client_secret) return refuse('badSecret');
    let grant: Grant;
    if (type === 'refresh_token') {
      const held = refreshTokens.get(p.refresh_token ?? '');
      if (!held || held.clientId !== p.client_id) return refuse('badRefresh');
      refreshTokens.delete(p.refresh_token ?? '');
      state.tokens.delete(held.access);
      grant = held;
    } else {
      const held = codes.get(p.code ?? '');
      codes.delete(p.code ?? '');
      if (!held || held.clientId !== p.client_id || held.expires < Date.now()) return refuse('badCode');
      const check =
        host.redirectCheck === 'always' || (host.redirectCheck === 'ifGiven' && p.redirect_uri !== undefined);
      if (check && p.redirect_uri !== held.redirectUri) return refuse('badRedirect');
      grant = held;
    }
    const { access, refresh, scopes, readOnly, expiresAt, body } = host.issue(grant.scope, grant.clientId);
    state.addToken(grant.login, access, { scopes, readOnly, oauth: true, expiresAt });
    if (refresh) refreshTokens.set(refresh, { ...grant, access });
    return json(res, 200, { access_token: access, ...(refresh ? { refresh_token: refresh } : {}), ...body });
  }

  return {
    addApp: (clientId: string, clientSecret: string) => void apps.set(clientId, clientSecret),
    approveAs(login: string): void {
      approver = state.ensureUser(login).login;
    },
    /** The access tokens issued so far (to `login` only, when given) stop working; refresh tokens still get new ones. */
    expire(login?: string): void {
      for (const t of state.tokens.values())
        if (t.oauth && (login === undefined || t.login.toLowerCase() === login.toLowerCase())) t.expired = true;
    },
    handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
      if (url.pathname === `${root}${host.tokenPath}` && req.method === 'POST') return token(req, res, url);
      req.resume();
      const get = req.method === 'GET' || (host.authorizeByPost === true && req.method === 'POST');
      if (url.pathname === `${root}authorize` && get) return Promise.resolve(authorize(res, url.searchParams));
      return Promise.resolve(send(res, ...host.notFound));
    },
  };
}
