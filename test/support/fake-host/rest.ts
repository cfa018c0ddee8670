import type { IncomingMessage } from 'node:http';
import type { Urls } from './server.js';
import type { TokenState, UserState } from './state.js';

/** What a host's route handler is given: its state, its URLs, the caller, the JSON body and the query. */
export interface RestCtx<S> {
  state: S;
  urls: Urls;
  caller: Caller | undefined;
  body: Record<string, unknown>;
  query: URLSearchParams;
}

/** The user and token a REST request authenticated as. */
export interface Caller {
  user: UserState;
  token: TokenState;
}

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A JSON request body as an object ({} when empty or not an object); throws when it is not JSON. */
export function jsonObject(raw: Buffer): Record<string, unknown> {
  if (raw.length === 0) return {};
  const parsed: unknown = JSON.parse(raw.toString('utf8'));
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : {};
}

/** A REST path's decoded segments, or undefined when one does not decode (the hosts answer 404). */
export function segments(path: string): string[] | undefined {
  try {
    return path
      .split('/')
      .filter(Boolean)
      .map((s) => decodeURIComponent(s));
  } catch {
    return undefined;
  }
}

/** Failures a test asked for, each answered once to the first request it matches. */
export class FailRules<R> {
  private readonly rules: { method: string; pathPattern: RegExp; reply: R }[] = [];

  add(method: string, pathPattern: RegExp, reply: R): void {
    this.rules.push({ method: method.toUpperCase(), pathPattern, reply });
  }

  /** The reply for this request (matched on the path under the REST root or the whole path), used up. */
  take(method: string, path: string, fullPath: string): R | undefined {
    const i = this.rules.findIndex(
      (r) => r.method === method && (r.pathPattern.test(path) || r.pathPattern.test(fullPath)),
    );
    return i >= 0 ? this.rules.splice(i, 1)[0]!.reply : undefined;
  }
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** The words a host puts in an injected failure's default body: HTTP's reason phrases with the host's own. */
export function reasonPhrases(
  own: Record<number, string>,
  unknown: (status: number) => string = (status) => `HTTP ${status}`,
): (status: number) => string {
  return (status) => own[status] ?? REASONS[status] ?? unknown(status);
}

/**
 * The token a request carries: `token T` or `Bearer T`, or HTTP Basic with the token as password
 * whatever the user name. `usernameIfNoPassword` (Gitea): an empty password or `x-oauth-basic`
 * makes the user name the token.
 */
export function credentials(
  authorization: string | undefined,
  usernameIfNoPassword = false,
): { present: boolean; token: string | undefined } {
  if (!authorization) return { present: false, token: undefined };
  const bearer = /^(?:token|bearer)\s+(\S+)\s*$/i.exec(authorization);
  if (bearer) return { present: true, token: bearer[1] };
  const basic = /^basic\s+(\S+)\s*$/i.exec(authorization);
  if (!basic) return { present: true, token: undefined };
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return { present: true, token: decoded };
  const password = decoded.slice(colon + 1);
  const useName = usernameIfNoPassword && (password === '' || password === 'x-oauth-basic');
  return { present: true, token: useName ? decoded.slice(0, colon) : password };
}
