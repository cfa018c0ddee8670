import { reasonPhrases } from '../fake-host/rest.js';

/** GitLab's error bodies, as its API writes them. */

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

const reason = reasonPhrases({ 400: 'Bad request' }, () => 'Error');

/** GitLab's plain error body: `{"message": "404 Project Not Found"}`. */
export const glError = (status: number, words?: string): Reply => ({
  status,
  body: { message: `${status} ${words ?? reason(status)}` },
});
export const unauthorized = (): Reply => glError(401);
export const projectNotFound = (): Reply => glError(404, 'Project Not Found');
export const forbidden = (): Reply => glError(403);
export const expiredToken = (): Reply => ({
  status: 401,
  body: {
    error: 'invalid_token',
    error_description: 'Token is expired. You can either do re-authorization or token refresh.',
  },
});
/** A project or fork name already in use. */
export const taken = (): Reply => ({
  status: 400,
  body: { message: { name: ['has already been taken'], path: ['has already been taken'] } },
});
