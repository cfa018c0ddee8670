import { Type } from '@sinclair/typebox';
import type { FastifyError, FastifyInstance } from 'fastify';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { AppError, ERROR_CODES, type ErrorCode } from '../errors.js';
import { StringEnum, Uuid } from './schema-parts.js';

/** The one table from error code to HTTP status. */
export const STATUS_OF: Record<ErrorCode, number> = {
  bad_request: 400,
  not_a_scm_url: 400,
  unauthorized: 401,
  invalid_token: 401,
  FREE_LIMIT_REACHED: 402,
  PRIVATE_REPO_REQUIRES_UPGRADE: 402,
  NO_CREDITS: 402,
  DEMO_LIMIT_REACHED: 402,
  DEMO_PUBLIC_REPOS_ONLY: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  scm_not_connected: 412,
  model_not_configured: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  CONCURRENT_LIMIT: 429,
  scm_unavailable: 502,
  internal_error: 500,
  unavailable: 503,
};

/** Seconds a client is asked to wait when the database cannot be reached (a restart takes a few). */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

/** The body of every error answer (the Error component); the handler below renders it. */
export const ErrorBody = Type.Object(
  {
    error: StringEnum(ERROR_CODES, { description: 'machine-readable code from the spec' }),
    message: Type.String({ description: 'a sentence for people; a field error starts with the field name' }),
    request_id: Uuid({ description: "this request's id, also in every log line of the request" }),
  },
  {
    $id: 'Error',
    description: 'every error answer has this body',
    examples: [
      {
        error: 'rate_limited',
        message: 'at most 20 task creations per 60 s; retry in 12 s',
        request_id: '0193a7c2-5b1e-7f3a-9c1d-2e4f6a8b0c1d',
      },
    ],
  },
);

/** What each error status means, in words; the codes it may carry are listed after (STATUS_OF). */
const ERROR_MEANING: Record<number, string> = {
  400: 'the request is malformed; the message names the field',
  401: 'no valid token: missing, malformed, unknown, revoked or expired',
  402: 'the plan, the credits or the demo token does not allow this',
  403:
    'this caller may not do this: a role in the workspace below the act, a token without the scope, a demo token, ' +
    'an admin-only route, or a panel cookie sent from another site',
  404: 'no such resource of yours (another account’s looks the same as a missing one)',
  409: 'the resource is not in a state that allows this',
  412: 'something must be set up first: your code-host account (POST /v1/me/scm), or a model provider key (Account → Provider keys, POST /v1/me/keys)',
  413: 'the request body is larger than this server accepts',
  415: 'send the body as application/json',
  429: 'too many requests or running tasks; retry after the Retry-After header’s seconds',
  500: 'the server failed; the request id is in its log',
  502: 'the code host could not be reached or refused',
  503: 'the database cannot be reached right now; retry after the Retry-After header’s seconds',
};

/** Declared on every 429 and 503: the client may retry after this many seconds. */
export const RetryAfterHeader = {
  'Retry-After': Type.Integer({ minimum: 0, description: 'seconds to wait before retrying' }),
};

const codesOf = (status: number) =>
  ERROR_CODES.filter((code) => STATUS_OF[code] === status)
    .map((code) => `\`${code}\``)
    .join(', ');

/**
 * The error responses of a route: the one Error schema, a description per status naming the
 * codes it may carry, and the Retry-After header where the service sends one.
 */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [
      s,
      Type.Ref('Error', {
        description: `${ERROR_MEANING[s] ?? 'an error'} (${codesOf(s)})`,
        ...(s === 429 || s === 503 ? { headers: RetryAfterHeader } : {}),
      }),
    ]),
  );

/** A library's 4xx status, in the spec's vocabulary (anything not listed is a bad request). */
const LIBRARY_4XX: Partial<Record<number, ErrorCode>> = {
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

// Our own sentences: a library's message may hold a file path or other internals.
const LIBRARY_4XX_MESSAGE: Partial<Record<ErrorCode, string>> = {
  bad_request: 'the request is malformed',
  unauthorized: 'this request needs Authorization: Bearer <token>',
  forbidden: 'this path is not allowed',
  not_found: 'not found',
  conflict: 'the request conflicts with the current state',
  payload_too_large: 'the request body is too large',
  unsupported_media_type: 'send the body as application/json',
  rate_limited: 'too many requests; try again later',
};

/** Fastify's own client errors, turned into our vocabulary. */
function fromFastify(err: FastifyError): AppError | undefined {
  if (err.validation) {
    const first = err.validation[0];
    const where = err.validationContext ?? 'body';
    const path = first?.instancePath ? first.instancePath.slice(1).replace(/\//g, '.') : '';
    const extra = (first?.params ?? {}) as Record<string, unknown>;
    const field = extra.missingProperty ?? extra.additionalProperty ?? path;
    const subject = field ? `${where === 'body' ? '' : `${where} `}${String(field)}` : where;
    let message = `${subject}: ${first?.message ?? 'is invalid'}`;
    if (extra.additionalProperty) message = `${subject}: unknown field`;
    if (extra.allowedValues) message += ` (${(extra.allowedValues as unknown[]).join(', ')})`;
    // A pattern says little to a person: add the field's description, which says it in words.
    const described = (first as { parentSchema?: { description?: unknown } } | undefined)?.parentSchema?.description;
    if (first?.keyword === 'pattern' && typeof described === 'string') message += ` (${described})`;
    return new AppError('bad_request', message);
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large', 'the request body is larger than this server accepts');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type', 'send the body as application/json');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('bad_request', 'the body is not valid JSON');
  }
  if (err instanceof SyntaxError) return new AppError('bad_request', 'the body is not valid JSON');
  // Any other 4xx a library raised (@fastify/static refusing a path, a malformed header…)
  // stays a client error in our vocabulary: only a fault of ours is a 500.
  const status = err.statusCode ?? 0;
  if (status >= 400 && status < 500) {
    const code = LIBRARY_4XX[status] ?? 'bad_request';
    // Fastify's own messages are written for callers; other libraries' are not shown.
    const own = typeof err.code === 'string' && err.code.startsWith('FST_') ? err.message : undefined;
    return new AppError(code, own ?? LIBRARY_4XX_MESSAGE[code] ?? 'the request was refused');
  }
  return undefined;
}

/** One handler renders every error as {error, message, request_id}; faults never leak their details. */
export function installErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((raw: FastifyError, request, reply) => {
    const known = raw instanceof AppError ? raw : fromFastify(raw);
    // The database down or restarting is not a fault of this request: 503, try again shortly.
    const down = !known && isDatabaseUnavailable(raw);
    const err =
      known ??
      (down
        ? new AppError(
            'unavailable',
            'the database cannot be reached right now; try again shortly',
            UNAVAILABLE_RETRY_AFTER_S,
          )
        : new AppError('internal_error', 'the server failed to handle this request; it has been logged'));
    if (down) request.log.warn({ err: raw }, 'database unavailable');
    else if (!known) request.log.error({ err: raw }, 'unhandled error');
    if (err.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.retryAfterSeconds));
    return reply.status(STATUS_OF[err.code]).send({ error: err.code, message: err.message, request_id: request.id });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({
      error: 'not_found',
      message: `no route for ${request.method} ${request.url.split('?')[0]}`,
      request_id: request.id,
    }),
  );
}
