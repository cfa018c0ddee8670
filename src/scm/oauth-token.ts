import { ScmError } from './code-host.js';
import type { ScmHost } from './hosts.js';

/** A token from a host's OAuth token endpoint. */
export interface OAuthToken {
  accessToken: string;
  /** GitLab and Gitea tokens expire (2 h, 1 h by default) and come with a refresh token; GitHub's OAuth apps' do not. */
  refreshToken?: string;
  expiresAt?: Date;
}

/**
 * One call to the host's OAuth 2 token endpoint (RFC 6749 §4.1.3 and §6): the code of a callback or
 * a refresh token, traded for an access token. The request is form-encoded, the answer asked for
 * as JSON, which GitHub, GitLab and Gitea all accept. A refusal is an ScmError with the host's
 * `error_description`; the secret and tokens never appear in a message.
 */
export async function requestToken(
  fetchFn: typeof fetch,
  host: ScmHost,
  grant: { code: string; redirectUri: string } | { refreshToken: string },
  now: Date,
): Promise<OAuthToken> {
  const app = host.oauth;
  if (!app) throw new ScmError(null, `no OAuth app is configured for the code host "${host.id}"`);
  const form = new URLSearchParams({ client_id: app.clientId, client_secret: app.clientSecret });
  if ('code' in grant) {
    form.set('grant_type', 'authorization_code');
    form.set('code', grant.code);
    form.set('redirect_uri', grant.redirectUri);
  } else {
    form.set('grant_type', 'refresh_token');
    form.set('refresh_token', grant.refreshToken);
  }
  let status: number;
  let body: {
    access_token?: string;
    refresh_token?: string;
    expires_in?: number;
    error?: string;
    error_description?: string;
  };
  try {
    const res = await fetchFn(`${host.webUrl}${host.kind.oauth.tokenPath}`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      signal: AbortSignal.timeout(20_000),
    });
    status = res.status;
    body = (await res.json()) as typeof body;
  } catch {
    throw new ScmError(null, 'the code host could not be reached to complete the OAuth exchange');
  }
  if (!body.access_token) {
    throw new ScmError(status >= 400 ? status : 400, body.error_description ?? body.error ?? 'no token in the answer');
  }
  return {
    accessToken: body.access_token,
    ...(body.refresh_token ? { refreshToken: body.refresh_token } : {}),
    ...(typeof body.expires_in === 'number' && body.expires_in > 0
      ? { expiresAt: new Date(now.getTime() + body.expires_in * 1000) }
      : {}),
  };
}
