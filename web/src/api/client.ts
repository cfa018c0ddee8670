/**
 * The same-origin API through openapi-fetch, typed by the generated `paths`: authenticated by
 * the HttpOnly session cookie the server set at sign-in (the browser adds Origin, which the
 * server checks on state-changing calls).
 */
import createClient from 'openapi-fetch';
import type { paths } from './schema';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** The API's code (ErrorCode); `network`: the server was not reached; `http_<status>`: a body without one. */
    readonly code: string,
    readonly serverMessage: string,
    readonly requestId?: string,
    readonly retryAfter?: string,
  ) {
    super(serverMessage);
  }
}

/** Called when the server says the session is over (401): the app shows the sign-in page. */
let onSignedOut: () => void = () => {};
export const setSignedOutHandler = (fn: () => void) => {
  onSignedOut = fn;
};

export const client = createClient<paths>({ credentials: 'same-origin', headers: { accept: 'application/json' } });

client.use({
  onResponse({ response, schemaPath }) {
    // A failed sign-in is not the end of a session.
    if (response.status === 401 && schemaPath !== '/v1/auth/session') onSignedOut();
  },
});

/** What openapi-fetch answers: `data` on success, `error` (the parsed body) otherwise. */
interface Result {
  data?: unknown;
  error?: unknown;
  response: Response;
}

const field = (body: unknown, key: string): string | undefined => {
  if (typeof body !== 'object' || body === null || !(key in body)) return undefined;
  const value: unknown = Reflect.get(body, key);
  return typeof value === 'string' ? value : undefined;
};

function errorOf(error: unknown, response: Response): ApiError {
  const code = field(error, 'error');
  const message = field(error, 'message') ?? (typeof error === 'string' ? error.slice(0, 200) : '');
  return new ApiError(
    response.status,
    code ?? `http_${response.status}`,
    message,
    field(error, 'request_id'),
    response.headers.get('retry-after') ?? undefined,
  );
}

/** The answer, an ApiError for an error answer or an unreachable server. */
async function answer<R extends Result>(request: Promise<R>): Promise<R> {
  let result: R;
  try {
    result = await request;
  } catch (err) {
    // fetch rejects with a TypeError when the server cannot be reached.
    if (err instanceof TypeError) throw new ApiError(0, 'network', 'the server could not be reached');
    throw err;
  }
  if (!result.response.ok) throw errorOf(result.error, result.response);
  return result;
}

/** A route answering 204 No Content (a removal, leaving): nothing on success; an ApiError as `call` throws. */
export async function callNoContent(request: Promise<Result>): Promise<void> {
  await answer(request);
}

/** The body of a successful answer; an ApiError for an error answer or an unreachable server. */
export async function call<R extends Result>(request: Promise<R>): Promise<NonNullable<R['data']>> {
  const { data, response } = await answer(request);
  // Every JSON route answers with a body; an empty one is the server's fault, not a value.
  if (data === undefined || data === null)
    throw new ApiError(response.status, `http_${response.status}`, 'the answer had no body');
  return data;
}
