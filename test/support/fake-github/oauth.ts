import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CODE_TTL_MS, type CodeGrant, OAuthApps, redirectBack, setParams, tokenParams } from '../fake-host/oauth.js';
import { type State, newToken } from '../fake-host/state.js';

/**
 * GitHub's OAuth web flow: /login/oauth/authorize approves at once as the user set by `oauthAs`
 * and redirects back with a code; /login/oauth/access_token trades the code for a `gho_` token
 * (errors as 200 bodies with `error`, as GitHub answers them).
 */

const TROUBLESHOOTING =
  'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors';

type Grant = CodeGrant;

export class OAuth extends OAuthApps<Grant> {
  constructor(private readonly state: State) {
    super(state);
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
    if (url.pathname === '/login/oauth/authorize' && (req.method === 'GET' || req.method === 'POST')) {
      req.resume();
      return this.authorize(res, url);
    }
    if (url.pathname === '/login/oauth/access_token' && req.method === 'POST') return this.accessToken(req, res, url);
    req.resume();
    return page(res, 404, 'Not Found');
  }

  private authorize(res: ServerResponse, url: URL): number {
    const q = url.searchParams;
    const clientId = q.get('client_id') ?? '';
    if (!this.apps.has(clientId))
      return page(res, 400, 'The client_id is not valid: no OAuth application is registered with it.');
    const redirectUri = q.get('redirect_uri') ?? undefined;
    if (!redirectUri) return page(res, 400, 'The redirect_uri is missing (the fake has no registered callback URL).');
    const target = new URL(redirectUri);
    if (this.approver === undefined) {
      setParams(target, {
        error: 'access_denied',
        error_description: 'The user has denied your application access.',
        error_uri: `${TROUBLESHOOTING}#access-denied`,
      });
    } else {
      const code = randomBytes(10).toString('hex');
      this.codes.set(code, {
        clientId,
        login: this.approver,
        redirectUri,
        scope: (q.get('scope') ?? '')
          .split(/[\s,]+/)
          .filter(Boolean)
          .join(','),
        expires: Date.now() + CODE_TTL_MS,
      });
      target.searchParams.set('code', code);
    }
    return redirectBack(
      res,
      target,
      q.get('state'),
      (location) => `<html><body>You are being <a href="${escapeHtml(location)}">redirected</a>.</body></html>`,
    );
  }

  private async accessToken(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
    const params = await tokenParams(req, url, true);
    // JSON only (GitHub answers form-encoded unless asked for JSON; every client here asks).
    const answer = (body: Record<string, string>): number => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
      return 200;
    };
    const clientId = params.client_id ?? '';
    const secret = this.apps.get(clientId);
    if (secret === undefined || secret !== params.client_secret) {
      return answer({
        error: 'incorrect_client_credentials',
        error_description: 'The client_id and/or client_secret passed are incorrect.',
        error_uri: `${TROUBLESHOOTING}#incorrect-client-credentials`,
      });
    }
    const code = params.code ?? '';
    const grant = this.codes.get(code);
    if (!grant || grant.clientId !== clientId || grant.expires < Date.now()) {
      if (grant && grant.expires < Date.now()) this.codes.delete(code);
      return answer({
        error: 'bad_verification_code',
        error_description: 'The code passed is incorrect or expired.',
        error_uri: `${TROUBLESHOOTING}#bad-verification-code`,
      });
    }
    this.codes.delete(code);
    const token = newToken('gho_');
    this.state.addToken(grant.login, token, { scopes: grant.scope ? grant.scope.split(',') : [] });
    return answer({ access_token: token, token_type: 'bearer', scope: grant.scope });
  }
}

function page(res: ServerResponse, status: number, text: string): number {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(
    `<!DOCTYPE ` +
      `html><html><head><title>${status}</title></head><body><h1>${status}</h1><p>${escapeHtml(text)}</p></body></html>`,
  );
  return status;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
