import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from '../fake-github/rest.js';
import type { GiteaState } from './state.js';

/**
 * Gitea's OAuth2 provider (routers/web/auth/oauth2_provider.go): /login/oauth/authorize approves
 * at once as the user set by `oauthAs` and redirects back with a code; /login/oauth/access_token
 * trades a code (grant_type authorization_code) or a refresh token (refresh_token) for
 * `{access_token, token_type: 'bearer', expires_in: 3600, refresh_token}`. Errors: 400
 * `{error, error_description}`. Access tokens last until `expireTokens()` ends them (then 401).
 */

const CODE_TTL_MS = 10 * 60 * 1000;
const ACCESS_TOKEN_TTL_S = 3600;

interface Grant {
  clientId: string;
  login: string;
  redirectUri: string;
  expires: number;
}

export class OAuth {
  private readonly apps = new Map<string, string>();
  private readonly codes = new Map<string, Grant>();
  /** refresh token → client and user; a refresh token is single-use, replaced at each refresh. */
  private readonly refreshTokens = new Map<string, { clientId: string; login: string }>();
  private readonly accessTokens = new Set<string>();
  private approver: string | undefined;

  constructor(private readonly state: GiteaState) {}

  addApp(clientId: string, clientSecret: string): void {
    this.apps.set(clientId, clientSecret);
  }

  approveAs(login: string): void {
    this.state.ensureUser(login);
    this.approver = login;
  }

  /** Every access token issued so far stops working (401); refresh tokens still get new ones. */
  expireTokens(): void {
    for (const token of this.accessTokens) this.state.tokens.delete(token);
    this.accessTokens.clear();
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
    if (url.pathname === '/login/oauth/authorize' && req.method === 'GET') {
      req.resume();
      return this.authorize(res, url);
    }
    if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') return this.accessToken(req, res);
    req.resume();
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('404 page not found\n');
    return 404;
  }

  private authorize(res: ServerResponse, url: URL): number {
    const q = url.searchParams;
    const redirectUri = q.get('redirect_uri') ?? '';
    let target: URL;
    try {
      target = new URL(redirectUri);
    } catch {
      res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<html><body><p>Unregistered Redirect URI.</p></body></html>');
      return 400;
    }
    const clientId = q.get('client_id') ?? '';
    const fail = (error: string, description: string) => {
      target.searchParams.set('error', error);
      target.searchParams.set('error_description', description);
    };
    if (!this.apps.has(clientId)) fail('unauthorized_client', 'Client ID not registered');
    else if (q.get('response_type') !== 'code')
      fail('unsupported_response_type', 'Only code response type is supported.');
    else if (this.approver === undefined) fail('access_denied', 'the request is denied');
    else {
      const code = randomBytes(16).toString('hex');
      this.codes.set(code, { clientId, login: this.approver, redirectUri, expires: Date.now() + CODE_TTL_MS });
      target.searchParams.set('code', code);
    }
    const state = q.get('state');
    if (state !== null) target.searchParams.set('state', state);
    res.writeHead(302, { location: target.toString() });
    res.end();
    return 302;
  }

  private async accessToken(req: IncomingMessage, res: ServerResponse): Promise<number> {
    const raw = (await readBody(req)).toString('utf8');
    const params: Record<string, string> = {};
    if (/json/i.test(req.headers['content-type'] ?? '')) {
      try {
        for (const [k, v] of Object.entries(JSON.parse(raw) as Record<string, unknown>))
          if (typeof v === 'string') params[k] = v;
      } catch {
        /* answered below as missing fields */
      }
    } else for (const [k, v] of new URLSearchParams(raw)) params[k] = v;
    // Client credentials may come as HTTP Basic instead of in the body.
    const basic = /^basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (basic) {
      const [id, secret] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
      params.client_id ??= decodeURIComponent(id ?? '');
      params.client_secret ??= decodeURIComponent(secret ?? '');
    }
    const answer = (status: number, body: Record<string, unknown>): number => {
      res.writeHead(status, { 'content-type': 'application/json;charset=utf-8' });
      res.end(JSON.stringify(body));
      return status;
    };
    const error = (code: string, description: string) => answer(400, { error: code, error_description: description });
    const clientId = params.client_id ?? '';
    const secret = this.apps.get(clientId);
    if (params.grant_type !== 'authorization_code' && params.grant_type !== 'refresh_token')
      return error('unsupported_grant_type', 'Only refresh_token or authorization_code grant type is supported');
    if (secret === undefined) return error('invalid_client', 'cannot load client with client id');
    if (secret !== params.client_secret) return error('unauthorized_client', 'invalid client secret');
    let login: string;
    if (params.grant_type === 'refresh_token') {
      const held = this.refreshTokens.get(params.refresh_token ?? '');
      if (!held || held.clientId !== clientId) return error('invalid_grant', 'unable to parse refresh token');
      this.refreshTokens.delete(params.refresh_token ?? '');
      login = held.login;
    } else {
      const grant = this.codes.get(params.code ?? '');
      if (!grant || grant.clientId !== clientId || grant.expires < Date.now())
        return error('invalid_grant', 'client is not authorized');
      if (params.redirect_uri !== undefined && params.redirect_uri !== grant.redirectUri)
        return error('unauthorized_client', 'unexpected redirect URI');
      this.codes.delete(params.code ?? '');
      login = grant.login;
    }
    return answer(200, this.issue(clientId, login));
  }

  private issue(clientId: string, login: string) {
    const accessToken = `gto_${randomBytes(24).toString('hex')}`;
    const refreshToken = `gtr_${randomBytes(24).toString('hex')}`;
    this.state.addToken(login, accessToken, { scopes: ['all'] });
    this.accessTokens.add(accessToken);
    this.refreshTokens.set(refreshToken, { clientId, login });
    return {
      access_token: accessToken,
      token_type: 'bearer',
      expires_in: ACCESS_TOKEN_TTL_S,
      refresh_token: refreshToken,
    };
  }
}
