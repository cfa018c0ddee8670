/**
 * Typed errors. Every failed call throws an EmendError carrying the server's code, message and
 * request id, the HTTP status and, when the server sent Retry-After, the seconds to wait. The
 * subclass says which family it is (catch RateLimitError, NotFoundError...); `code` says exactly
 * what (`NO_CREDITS`, `CONCURRENT_LIMIT`...).
 */
import type { ErrorCode } from './types.js';

/**
 * A code of the API (the document's Error enum); `network` when the server was not reached;
 * `http_<status>` for an error answer without the API's error body (a proxy's page, say).
 */
export type ClientErrorCode = ErrorCode | 'network' | `http_${number}`;

export interface EmendErrorFields {
  status: number;
  code: ClientErrorCode;
  message: string;
  requestId?: string;
  /** Seconds the server asked to wait (Retry-After), when it said. */
  retryAfter?: number;
  cause?: unknown;
}

export class EmendError extends Error {
  /** HTTP status; 0 when no answer came. */
  readonly status: number;
  readonly code: ClientErrorCode;
  /** The server's request id, to quote when reporting a problem. */
  readonly requestId: string | undefined;
  readonly retryAfter: number | undefined;

  constructor(fields: EmendErrorFields) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = new.target.name;
    this.status = fields.status;
    this.code = fields.code;
    this.requestId = fields.requestId;
    this.retryAfter = fields.retryAfter;
  }
}

/** 400: the request was malformed or failed validation (`bad_request`, `not_a_scm_url`). */
export class BadRequestError extends EmendError {}
/** 401: no token, or a token that is unknown, revoked or expired. */
export class AuthenticationError extends EmendError {}
/** 402: the plan, the credits or the demo token do not allow it. */
export class PaymentRequiredError extends EmendError {}
/** 403: the token may not do this (a demo token, or not an admin). */
export class ForbiddenError extends EmendError {}
/** 404: not the caller's, or deleted. */
export class NotFoundError extends EmendError {}
/** 409: not possible in the resource's current state, or an Idempotency-Key reused for another request. */
export class ConflictError extends EmendError {}
/** 412: something must be set up first: the code-host account (`scm_not_connected`) or a model provider key (`model_not_configured`). */
export class PreconditionFailedError extends EmendError {}
/** 429: `rate_limited` (with retryAfter) or `CONCURRENT_LIMIT`. */
export class RateLimitError extends EmendError {}
/** 5xx: the server or something behind it failed. */
export class ServerError extends EmendError {}
/** The server was not reached, or the connection broke before an answer came (status 0). */
export class NetworkError extends EmendError {}

const BY_STATUS: Record<number, typeof EmendError> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: PaymentRequiredError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  412: PreconditionFailedError,
  429: RateLimitError,
};

/** Seconds from a Retry-After header (delta-seconds or an HTTP date); undefined without a usable one. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

const stringField = (body: unknown, key: string): string | undefined => {
  if (typeof body !== 'object' || body === null) return undefined;
  const value: unknown = Reflect.get(body, key);
  return typeof value === 'string' ? value : undefined;
};

/** The error for an answer that is not 2xx, from its parsed body (JSON object or text). */
export function errorFromResponse(response: Response, body: unknown): EmendError {
  const code = stringField(body, 'error');
  const text = typeof body === 'string' ? body.slice(0, 200) : '';
  const Kind = BY_STATUS[response.status] ?? (response.status >= 500 ? ServerError : EmendError);
  return new Kind({
    status: response.status,
    // The server's codes are the document's enum; anything else is described by its status alone.
    code: code === undefined ? `http_${response.status}` : (code as ErrorCode),
    message: stringField(body, 'message') ?? (text || `HTTP ${response.status}`),
    requestId: stringField(body, 'request_id'),
    retryAfter: retryAfterSeconds(response.headers.get('retry-after')),
  });
}

/** A rejected fetch as a NetworkError; an abort stays what it is, so callers can tell the two apart. */
export function networkError(err: unknown): unknown {
  if (err instanceof EmendError) return err;
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')) return err;
  return new NetworkError({ status: 0, code: 'network', message: 'the emend server could not be reached', cause: err });
}
