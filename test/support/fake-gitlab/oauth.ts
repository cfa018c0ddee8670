import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { newToken } from '../fake-host/state.js';
import { CODE_TTL_MS, type CodeGrant, OAuthApps, redirectBack, setParams, tokenParams } from '../fake-host/oauth.js';
import type { GitLabModel } from './model.js';

/**
 * GitLab's OAuth 2 (Doorkeeper): /oauth/authorize approves at once as the user set by `oauthAs` and
 * redirects back with a code; /oauth/token trades a code or a refresh token for a Bearer token that
 * expires (expires_in 7200) and a new refresh token. Errors are 400/401 JSON bodies with `error`.
 */

const INVALID_GRANT =
  'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the ' +
  'authorization request, or was issued to another client.';
const INVALID_CLIENT =
  'Client authentication failed due to unknown client, no client authentication included, or unsupported ' +
  'authentication method.';

type Grant = CodeGrant;

export class OAuth extends OAuthApps<Grant> {
  /** refresh token → the grant and the access token it was issued with. */
  private readonly refreshTokens = new Map<string, Grant & { accessToken: string }>();
  /** access token → login, for `expire`. */
  readonly accessTokens = new Map<string, string>();

  constructor(private readonly model: GitLabModel) {
    super(model.state);
  }

  /** Every OAuth access token of `login` expires now (its refresh tokens still work). */
  expire(login: string): void {
    for (const [token, owner] of this.accessTokens)
      if (owner.toLowerCase() === login.toLowerCase()) this.model.expired.add(token);
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
    if (url.pathname === '/oauth/authorize' && req.method === 'GET') {
      req.resume();
      return this.authorize(res, url);
    }
    if (url.pathname === '/oauth/token' && req.method === 'POST') return this.token(req, res, url);
    req.resume();
    return json(res, 404, { error: 'not_found' });
  }

  private authorize(res: ServerResponse, url: URL): number {
    const q = url.searchParams;
    const clientId = q.get('client_id') ?? '';
    const redirectUri = q.get('redirect_uri') ?? undefined;
    let target: URL | undefined;
    try {
      target = redirectUri ? new URL(redirectUri) : undefined;
    } catch {
      target = undefined;
    }
    if (!this.apps.has(clientId) || !target) {
      res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<html><body><h1>An error has occurred</h1><p>Client authentication failed.</p></body></html>');
      return 400;
    }
    if (this.approver === undefined) {
      setParams(target, {
        error: 'access_denied',
        error_description: 'The resource owner or authorization server denied the request.',
      });
    } else {
      const code = randomBytes(32).toString('hex');
      const scope = (q.get('scope') ?? 'api')
        .split(/[\s+]+/)
        .filter(Boolean)
        .join(' ');
      this.codes.set(code, { clientId, login: this.approver, redirectUri, scope, expires: Date.now() + CODE_TTL_MS });
      target.searchParams.set('code', code);
    }
    return redirectBack(res, target, q.get('state'), () => '<html><body>You are being redirected.</body></html>');
  }

  private async token(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
    const params = await tokenParams(req, url, true);
    const clientId = params.client_id ?? '';
    const secret = this.apps.get(clientId);
    if (secret === undefined || secret !== params.client_secret)
      return json(res, 401, { error: 'invalid_client', error_description: INVALID_CLIENT });
    let grant: Grant | undefined;
    if (params.grant_type === 'authorization_code') {
      const code = params.code ?? '';
      grant = this.codes.get(code);
      this.codes.delete(code);
      const fits =
        grant &&
        grant.clientId === clientId &&
        grant.expires >= Date.now() &&
        (grant.redirectUri === undefined || params.redirect_uri === grant.redirectUri);
      if (!fits) grant = undefined;
    } else if (params.grant_type === 'refresh_token') {
      const old = this.refreshTokens.get(params.refresh_token ?? '');
      if (old && old.clientId === clientId) {
        this.refreshTokens.delete(params.refresh_token ?? '');
        this.model.state.tokens.delete(old.accessToken);
        grant = old;
      }
    }
    if (!grant) return json(res, 400, { error: 'invalid_grant', error_description: INVALID_GRANT });
    return json(res, 200, this.issue(grant));
  }

  private issue(grant: Grant) {
    const accessToken = randomBytes(32).toString('hex');
    const refreshToken = newToken('');
    const scopes = grant.scope.split(' ').filter(Boolean);
    this.model.state.addToken(grant.login, accessToken, { scopes, readOnly: !scopes.includes('api') });
    this.accessTokens.set(accessToken, grant.login);
    this.refreshTokens.set(refreshToken, { ...grant, accessToken });
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: 7200,
      refresh_token: refreshToken,
      scope: grant.scope,
      created_at: Math.floor(Date.now() / 1000),
    };
  }
}

function json(res: ServerResponse, status: number, body: unknown): number {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
  return status;
}
