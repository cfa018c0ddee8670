/**
 * Whether an error means the database could not be reached (down, restarting, the connection
 * cut), as opposed to a fault of the query or of the code. Drizzle wraps driver errors
 * (DrizzleQueryError with the driver's error as `cause`), so the whole cause chain is read.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

// SQLSTATE: class 08 is "connection exception"; 57P01-57P03 are an administrator's shutdown,
// a crash shutdown and "the database system is starting up / shutting down"; 53300 is too
// many connections (a restart's reconnect storm).
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[1-3]|53300)$/;

// node-postgres reports a dropped or unusable connection with plain Errors of these messages.
const PG_MESSAGES = [
  'Connection terminated',
  'connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Connection terminated due to connection timeout',
];

export function isDatabaseUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e = err; e && typeof e === 'object' && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    // An outbound HTTP call (fetch) that could not connect is not the database.
    if ((e as { message?: unknown }).message === 'fetch failed') return false;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && PG_MESSAGES.some((m) => message.startsWith(m))) return true;
    // An AggregateError (connect to several addresses, all refused) holds its reasons in `errors`.
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner))) return true;
  }
  return false;
}
