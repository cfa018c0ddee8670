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
export function reasonPhrase(status: number): string {
  const phrases: Record<number, string> = {
    400: 'Bad Request',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'not found',
    409: 'Conflict',
    422: 'Unprocessable Entity',
    429: 'Too Many Requests',
    500: 'Internal Server Error',
    502: 'Bad Gateway',
    503: 'Service Unavailable',
  };
  return phrases[status] ?? `HTTP ${status}`;
}
