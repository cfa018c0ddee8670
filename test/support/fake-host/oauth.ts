import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from './rest.js';
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
/** Why a token request is refused. */
export type TokenRefusal = 'grantType' | 'unknownClient' | 'badSecret' | 'badRefresh' | 'badCode' | 'badRedirect';

export interface OAuthHost {
  authorizePath: string;
  tokenPath: string;
  /** GitHub's consent form posts back to /authorize. */
  authorizeByPost?: boolean;
  /** Gitea asks for `response_type=code`. */
  needsResponseType?: boolean;
  /** Token parameters may come in the query too (GitHub, GitLab). */
  queryParams: boolean;
  /** Whether the token request's redirect_uri must match the authorization's: always, when given, or never. */
  redirectCheck: 'always' | 'ifGiven' | 'never';
  codeBytes: number;
  /** The granted scope as the host writes it back. */
  scope(asked: string | null): string;
  refuseAuthorize: Record<AuthorizeRefusal, { page: string } | { redirect: Record<string, string> }>;
  refuseToken: (why: TokenRefusal) => [number, Record<string, string>];
  /** The page sent with the 302 back (none: an empty body). */
  redirectPage?(location: string): string;
  /** A new grant's tokens and the rest of the token response. */
  issue(scope: string): { access: string; refresh?: string; scopes: string[]; readOnly?: boolean; body: object };
  /** The answer to any other path under the OAuth root. */
  notFound: [number, string, string];
}

interface Grant {
  clientId: string;
  login: string;
  redirectUri: string;
  scope: string;
}

const html = (text: string) =>
  `<html><body><p>${text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)}</p></body></html>`;

export function oauthProvider(host: OAuthHost, state: State) {
  const apps = new Map<string, string>();
  const codes = new Map<string, Grant & { expires: number }>();
  const refreshTokens = new Map<string, Grant & { access: string }>();
  const issued = new Map<string, string>();
  let approver: string | undefined;

  const send = (res: ServerResponse, status: number, type: string, body: string, more: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': type, ...more });
    res.end(body);
    return status;
  };
  const json = (res: ServerResponse, status: number, body: object) =>
    send(res, status, 'application/json; charset=utf-8', JSON.stringify(body), { 'cache-control': 'no-store' });

  function authorize(res: ServerResponse, q: URLSearchParams): number {
    let target: URL | undefined;
    try {
      target = new URL(q.get('redirect_uri') ?? '');
    } catch {}
    const clientId = q.get('client_id') ?? '';
    const why: AuthorizeRefusal | undefined = !target
      ? 'badRedirect'
      : !apps.has(clientId)
        ? 'unknownClient'
        : host.needsResponseType && q.get('response_type') !== 'code'
          ? 'badResponseType'
          : approver === undefined
            ? 'denied'
            : undefined;
    const refusal = why && host.refuseAuthorize[why];
    if (refusal && 'page' in refusal) return send(res, 400, 'text/html; charset=utf-8', html(refusal.page));
    const to = target!;
    if (refusal) for (const [k, v] of Object.entries(refusal.redirect)) to.searchParams.set(k, v);
    else {
      const code = randomBytes(host.codeBytes).toString('hex');
      const grant = {
        clientId,
        login: approver!,
        redirectUri: q.get('redirect_uri')!,
        scope: host.scope(q.get('scope')),
      };
      codes.set(code, { ...grant, expires: Date.now() + CODE_TTL_MS });
      to.searchParams.set('code', code);
    }
    const stateParam = q.get('state');
    if (stateParam !== null) to.searchParams.set('state', stateParam);
    const location = to.toString();
    const page = host.redirectPage?.(location);
    return send(res, 302, 'text/html; charset=utf-8', page ?? '', { location });
  }

  /** A token request's parameters: the query's (when the host reads it), then the body's (JSON or form). */
  async function params(req: IncomingMessage, url: URL): Promise<Record<string, string>> {
    const raw = (await readBody(req)).toString('utf8');
    const out: Record<string, string> = host.queryParams ? Object.fromEntries(url.searchParams) : {};
    if (!/json/i.test(req.headers['content-type'] ?? ''))
      return Object.assign(out, Object.fromEntries(new URLSearchParams(raw)));
    try {
      for (const [k, v] of Object.entries(JSON.parse(raw) ?? {})) if (typeof v === 'string') out[k] = v;
    } catch {}
    return out;
  }

  async function token(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
    const p = await params(req, url);
    const refuse = (why: TokenRefusal) => json(res, ...host.refuseToken(why));
    const type = p.grant_type ?? 'authorization_code';
    if (type !== 'authorization_code' && type !== 'refresh_token') return refuse('grantType');
    const secret = apps.get(p.client_id ?? '');
    if (secret === undefined) return refuse('unknownClient');
    if (secret !== p.client_secret) return refuse('badSecret');
    let grant: Grant | undefined;
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
      const given = p.redirect_uri;
      const check = host.redirectCheck === 'always' || (host.redirectCheck === 'ifGiven' && given !== undefined);
      if (check && given !== held.redirectUri) return refuse('badRedirect');
      grant = held;
    }
    const made = host.issue(grant.scope);
    state.addToken(grant.login, made.access, { scopes: made.scopes, readOnly: made.readOnly });
    issued.set(made.access, grant.login);
    if (made.refresh) refreshTokens.set(made.refresh, { ...grant, access: made.access });
    return json(res, 200, {
      access_token: made.access,
      ...(made.refresh ? { refresh_token: made.refresh } : {}),
      ...made.body,
    });
  }

  return {
    addApp: (clientId: string, clientSecret: string) => void apps.set(clientId, clientSecret),
    approveAs(login: string): void {
      approver = state.ensureUser(login).login;
    },
    /** The access tokens issued so far (to `login` only, when given) stop working; refresh tokens still get new ones. */
    expire(login?: string): void {
      for (const [t, owner] of issued) {
        const held = state.tokens.get(t);
        if (held && (login === undefined || owner.toLowerCase() === login.toLowerCase())) held.expired = true;
      }
    },
    handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
      const get = req.method === 'GET' || (host.authorizeByPost === true && req.method === 'POST');
      if (url.pathname === host.tokenPath && req.method === 'POST') return token(req, res, url);
      req.resume();
      if (url.pathname === host.authorizePath && get) return Promise.resolve(authorize(res, url.searchParams));
      return Promise.resolve(send(res, ...host.notFound));
    },
  };
}
