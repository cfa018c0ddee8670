export {
  type Call,
  type CallOptions,
  type ClientOptions,
  type EmendClient,
  type FetchFn,
  KEYED_ROUTES,
  createClient,
} from './client.js';
export {
  AuthenticationError,
  BadRequestError,
  type ClientErrorCode,
  ConflictError,
  EmendError,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  PaymentRequiredError,
  PreconditionFailedError,
  RateLimitError,
  ServerError,
} from './errors.js';
export type { FollowOptions, TaskEvent } from './follow.js';
export type { Sleep } from './retry.js';
export type * from './types.js';
