import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Urls } from './server.js';
import type { State, TokenState, UserState } from './state.js';

/**
 * The one REST layer of the fake hosts: a host is a table of routes (method, path pattern,
 * handler over the shared State) plus its words (error body, reason phrases, headers, how a
 * token is carried). Reading the body, authentication, failNext and writing are done here once.
 */

/** One REST answer before it is written: status, body (a string is sent as it is, anything else as JSON), headers. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The user and token a REST request authenticated as. */
export interface Caller {
  user: UserState;
  token: TokenState;
}

/** What a route's handler is given. */
export interface Ctx {
  state: State;
  urls: Urls;
  caller: Caller | undefined;
  login: string | undefined;
  body: Record<string, unknown>;
  query: URLSearchParams;
}

/** `[method, pattern over the path under the API root, handler]`: the pattern's groups arrive decoded. */
export type Route = [string, RegExp, (ctx: Ctx, ...groups: string[]) => Reply];

/** A host's REST words and routes. */
export interface RestHost {
  routes: Route[];
  /** The host's error body for a status and message. */
  error(status: number, message: string): Reply;
  /** The words of a status in the default body of an injected failure. */
  reason(status: number): string;
  /** The token a request carries (`present`: it carries credentials at all). */
  credentials(req: IncomingMessage): { present: boolean; token: string | undefined };
  /** An unknown token's answer; an expired OAuth token's, when the host words it apart. */
  badCredentials(): Reply;
  expired?(): Reply;
  /** A body that is not JSON. */
  badJson(): Reply;
  /** The headers of every answer (content type, request id, rate limit, pagination…). */
  headers(reply: Reply, caller: Caller | undefined, req: IncomingMessage): Record<string, string>;
}

export const isReply = (x: unknown): x is Reply =>
  typeof x === 'object' && x !== null && typeof (x as Reply).status === 'number' && !('dir' in x) && !('user' in x);
export const ok = (body: unknown, status = 200, headers?: Record<string, string>): Reply => ({ status, body, headers });
export const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A form or JSON request body as an object ({} when empty or not an object); throws when it is not JSON. */
function parseBody(raw: Buffer, contentType: string | undefined): Record<string, unknown> {
  if (raw.length === 0) return {};
  if ((contentType ?? '').includes('application/x-www-form-urlencoded'))
    return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  const parsed: unknown = JSON.parse(raw.toString('utf8'));
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? { ...parsed } : {};
}

const REASONS: Record<number, string> = {
  ...{ 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict' },
  ...{ 422: 'Unprocessable Entity', 429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway' },
  503: 'Service Unavailable',
};

/** HTTP's reason phrases with the host's own words first. */
export const reasonPhrases =
  (own: Record<number, string>, unknown: (status: number) => string = (s) => `HTTP ${s}`) =>
  (status: number): string =>
    own[status] ?? REASONS[status] ?? unknown(status);

/**
 * The token an Authorization header carries: `token T` or `Bearer T`, or HTTP Basic with the
 * token as password whatever the user name. `usernameIfNoPassword` (Gitea): an empty password or
 * `x-oauth-basic` makes the user name the token.
 */
export function credentials(authorization: string | undefined, usernameIfNoPassword = false) {
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

/** A host's REST API under `apiPath`, with failures a test injects (each answered once, to the first request it matches). */
export function restApi(host: RestHost, state: State, urls: Urls, apiPath: string) {
  const failures: { method: string; pattern: RegExp; reply: Reply }[] = [];

  function route(method: string, path: string, ctx: Ctx): Reply {
    for (const [m, pattern, handler] of host.routes) {
      const match = m === method ? pattern.exec(path) : null;
      if (!match) continue;
      let groups: string[];
      try {
        groups = match.slice(1).map((g) => decodeURIComponent(g ?? ''));
      } catch {
        break;
      }
      return handler(ctx, ...groups);
    }
    return host.error(404, host.reason(404));
  }

  function answer(req: IncomingMessage, raw: Buffer, url: URL, caller: Caller | undefined): Reply {
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname.slice(apiPath.length) || '/';
    const i = failures.findIndex((f) => f.method === method && (f.pattern.test(path) || f.pattern.test(url.pathname)));
    if (i >= 0) {
      const { reply } = failures.splice(i, 1)[0]!;
      return { ...reply, body: reply.body ?? host.error(reply.status, host.reason(reply.status)).body };
    }
    const { present, token } = host.credentials(req);
    if (token !== undefined && host.expired && state.tokens.get(token)?.expired) return host.expired();
    if (present && !caller) return host.badCredentials();
    let body: Record<string, unknown>;
    try {
      body = parseBody(raw, req.headers['content-type']);
    } catch {
      return host.badJson();
    }
    try {
      return route(method, path, { state, urls, caller, login: caller?.user.login, body, query: url.searchParams });
    } catch (err) {
      return host.error(500, `fake host: ${(err as Error).message}`);
    }
  }

  return {
    failNext(method: string, pattern: RegExp, reply: Reply): void {
      failures.push({ method: method.toUpperCase(), pattern, reply });
    },
    async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
      const raw = await readBody(req);
      const { token } = host.credentials(req);
      const found = token !== undefined ? state.byToken(token) : undefined;
      const caller = found && { user: found.user, token: found.token };
      const reply = answer(req, raw, url, caller);
      const headers = host.headers(reply, caller, req);
      for (const [name, value] of Object.entries(reply.headers ?? {})) headers[name.toLowerCase()] = value;
      res.writeHead(reply.status, headers);
      const { body } = reply;
      res.end(body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body));
      return reply.status;
    },
  };
}
