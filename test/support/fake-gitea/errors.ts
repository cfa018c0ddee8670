import { reasonPhrases } from '../fake-host/rest.js';

/**
 * Gitea's error bodies: `{"message", "url"}` (url: the instance's swagger page), validation
 * failures with `errors` too, as its APIError writes them. The REST layer adds the url.
 */

export interface Reply {
  status: number;
  body?: unknown;
  /** An error in Gitea's shape: written as `{message, url, errors?}`. */
  error?: { message: string; errors?: string[] };
  headers?: Record<string, string>;
}

export function giteaError(status: number, message: string, errors?: string[]): Reply {
  return { status, error: { message, ...(errors ? { errors } : {}) } };
}

export const notFound = (): Reply => giteaError(404, 'not found');
/** Any route, an unknown or expired token (Basic or `token`/`Bearer`). */
export const badCredentials = (): Reply => giteaError(401, 'invalid username, password or token');
/** A route behind reqToken, called anonymously. */
export const tokenRequired = (): Reply => giteaError(401, 'token is required');
/** A write with a token scoped to read repositories only. */
export const scopeMissing = (scope: string): Reply =>
  giteaError(403, `token does not have at least one of required scope(s): [${scope}]`);

/** Reason phrases for injected failures' default bodies. */
export const reasonPhrase = reasonPhrases({ 404: 'not found' });
