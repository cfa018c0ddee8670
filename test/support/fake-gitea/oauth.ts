import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CODE_TTL_MS, OAuthApps, redirectBack, setParams, tokenParams } from '../fake-host/oauth.js';
import type { GiteaState } from './state.js';

/**
 * Gitea's OAuth2 provider (routers/web/auth/oauth2_provider.go): /login/oauth/authorize approves
 * at once as the user set by `oauthAs` and redirects back with a code; /login/oauth/access_token
 * trades a code (grant_type authorization_code) or a refresh token (refresh_token) for
 * `{access_token, token_type: 'bearer', expires_in: 3600, refresh_token}`. Errors: 400
 * `{error, error_description}`. Access tokens last until `expireTokens()` ends them (then 401).
 */

const ACCESS_TOKEN_TTL_S = 3600;

interface Grant {
  clientId: string;
  login: string;
  redirectUri: string;
  expires: number;
}

export class OAuth extends OAuthApps<Grant> {
  /** refresh token → client and user; a refresh token is single-use, replaced at each refresh. */
  private readonly refreshTokens = new Map<string, { clientId: string; login: string }>();
  private readonly accessTokens = new Set<string>();

  constructor(private readonly state: GiteaState) {
    super(state);
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
    if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') return this.accessToken(req, res, url);
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
    const fail = (error: string, description: string) => setParams(target, { error, error_description: description });
    if (!this.apps.has(clientId)) fail('unauthorized_client', 'Client ID not registered');
    else if (q.get('response_type') !== 'code')
      fail('unsupported_response_type', 'Only code response type is supported.');
    else if (this.approver === undefined) fail('access_denied', 'the request is denied');
    else {
      const code = randomBytes(16).toString('hex');
      this.codes.set(code, { clientId, login: this.approver, redirectUri, expires: Date.now() + CODE_TTL_MS });
      target.searchParams.set('code', code);
    }
    return redirectBack(res, target, q.get('state'));
  }

  private async accessToken(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
    const params = await tokenParams(req, url, false);
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
