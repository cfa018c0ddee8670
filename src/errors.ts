/**
 * The service's one error vocabulary: the spec's codes plus the few the design adds
 * (conflict, payload_too_large, unsupported_media_type, scm_unavailable, unavailable,
 * model_not_configured). Domain code throws AppError with
 * a
 * code; only the HTTP layer (src/http/errors.ts) turns a code into a status.
 */
export const ERROR_CODES = [
  'bad_request',
  'not_a_scm_url',
  'unauthorized',
  'invalid_token',
  'FREE_LIMIT_REACHED',
  'PRIVATE_REPO_REQUIRES_UPGRADE',
  'NO_CREDITS',
  'DEMO_LIMIT_REACHED',
  'DEMO_PUBLIC_REPOS_ONLY',
  'forbidden',
  'not_found',
  'conflict',
  'scm_not_connected',
  'model_not_configured',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'CONCURRENT_LIMIT',
  'scm_unavailable',
  'internal_error',
  'unavailable',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Seconds until the caller may retry; rendered as Retry-After (429s, 503s). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }
}
