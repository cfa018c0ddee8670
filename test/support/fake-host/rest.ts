import { type IncomingMessage, STATUS_CODES, type ServerResponse } from 'node:http';
import type { CommitInfo } from './bare.js';
import type { Urls } from './server.js';
import { type Pull, type RepoState, type State, type TokenState, type UserState, fullName } from './state.js';

/**
 * The one REST layer of the fake hosts: a host is a table of routes (method, path pattern,
 * handler over the shared State) plus its words (error body, reason phrases, headers, how a
 * token is carried). Reading the body, authentication, failNext, holdTogether and writing are done here once.
 */

/** One REST answer before it is written: status, body (a string is sent as it is, anything else as JSON), headers. */
export type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

export type Caller = { user: UserState; token: TokenState };

/** What a route's handler is given: `login` the caller's, `body` the JSON or form body. */
export type Ctx = {
  state: State;
  urls: Urls;
  caller: Caller | undefined;
  login: string | undefined;
  body: Record<string, unknown>;
  query: URLSearchParams;
};

/** `[method, pattern over the path under the API root, handler]`: the pattern's groups arrive decoded. */
export type Route = [string, RegExp, (ctx: Ctx, ...groups: string[]) => Reply];

/**
 * A host's REST words and routes: its error body for a status and message; the words of a status
 * in the default body of an injected failure (`reason`); the token a request carries (`present`:
 * it carries credentials at all); the answers to an unknown token, to an expired OAuth token (when
 * the host words it apart) and to a body that is not JSON; the headers of every answer.
 */
export interface RestHost {
  routes: Route[];
  error(status: number, message: string): Reply;
  reason(status: number): string;
  credentials(req: IncomingMessage): { present: boolean; token: string | undefined };
  badCredentials(): Reply;
  expired?: Reply;
  badJson(): Reply;
  headers(reply: Reply, caller: Caller | undefined, req: IncomingMessage): Record<string, string>;
  /**
   * The host's own answer before the shared authentication and routes (GitHub: an App's JWT routes,
   * what an App's installation token may reach); undefined goes on as usual.
   */
  before?(ask: BeforeAsk): Reply | undefined;
}

/** A request as `before` sees it: `path` under the API root, the token it carries and its live caller, if any. */
export type BeforeAsk = {
  method: string;
  path: string;
  query: URLSearchParams;
  raw: Buffer;
  token: string | undefined;
  caller: Caller | undefined;
};

export const ok = (body: unknown, status = 200, headers?: Record<string, string>): Reply => ({ status, body, headers });
export const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The fields of `from` named, as they are: the part of a view that copies the record. */
export const pick = <T, K extends keyof T>(from: T, ...keys: K[]): Pick<T, K> =>
  Object.fromEntries(keys.map((k) => [k, from[k]])) as Pick<T, K>;

/** A repository's REST and web addresses. */
export const repoUrls = ({ urls }: Ctx, repo: RepoState) => ({
  api: `${urls.apiUrl}/repos/${fullName(repo)}`,
  web: `${urls.webUrl}/${fullName(repo)}`,
});

type UserView = (ctx: Ctx, u: UserState) => object;

/**
 * A repository as GitHub and Gitea show it (Gitea's API copies GitHub's shapes), its owner as
 * `user` shows one; `own`, the host's privacy, permission and parent fields, over these.
 */
export function sharedRepo(ctx: Ctx, repo: RepoState, user: UserView, own: object): Record<string, unknown> {
  const { api, web } = repoUrls(ctx, repo);
  return {
    ...{ ...pick(repo, 'id', 'name', 'fork'), full_name: fullName(repo), default_branch: repo.defaultBranch },
    ...{ html_url: web, url: api, clone_url: `${web}.git`, owner: user(ctx, ctx.state.ensureUser(repo.owner)) },
    ...own,
  };
}

/** A commit as GitHub shows it (and Gitea, with more): `author` and `committer`, the users with those emails (or null). */
export function sharedCommit(ctx: Ctx, repo: RepoState, c: CommitInfo, user: UserView) {
  const { api, web } = repoUrls(ctx, repo);
  const by = (email: string) => {
    const u = ctx.state.userByEmail(email);
    return u ? user(ctx, u) : null;
  };
  return {
    ...{ ...pick(c, 'sha'), url: `${api}/commits/${c.sha}`, html_url: `${web}/commit/${c.sha}` },
    commit: { url: `${api}/git/commits/${c.sha}`, ...pick(c, 'author', 'committer', 'message') },
    author: by(c.author.email),
    committer: by(c.committer.email),
  };
}

/** A check a route makes before its handler (given the route's `doc`): a refusal, or undefined to go on. */
type Check = (ctx: Ctx, doc: string) => Reply | undefined;
/** `doc`: the route's documentation page (GitHub's errors name it); `first` checks before the lookup, `after` after it. */
export type RouteOptions = { doc?: string; first?: Check; after?: Check };
type OnRepo = (ctx: Ctx, repo: RepoState, ...params: string[]) => Reply;

/**
 * Route builders for a host's repositories: `repo` is the pattern of one in a path (its groups go
 * to `find`), `missing` the answer when it (or the pull asked for) is missing or hidden from the
 * caller (`what`: which), given the route's `doc`. A pull route's tail has the pull's number as
 * its first group.
 */
export function repoRoutes(
  repo: string,
  find: (ctx: Ctx, ...ids: string[]) => RepoState | undefined,
  missing: (what: 'repo' | 'pull', doc: string) => Reply,
) {
  const ids = new RegExp(`${repo}|`).exec('')!.length - 1;
  const onRepo = (method: string, tail: string, ...args: [OnRepo] | [RouteOptions, OnRepo]): Route => {
    const [{ doc = '', first, after }, handler] = args.length === 2 ? args : [{}, args[0]];
    return [
      method,
      new RegExp(`^${repo}${tail}$`),
      (ctx, ...groups) => {
        const found = first?.(ctx, doc) ?? find(ctx, ...groups.slice(0, ids));
        if (found && 'status' in found) return found;
        if (!found || !ctx.state.canSee(found, ctx.login)) return missing('repo', doc);
        return after?.(ctx, doc) ?? handler(ctx, found, ...groups.slice(ids));
      },
    ];
  };
  const onPull = (tail: string, opts: RouteOptions, handler: (ctx: Ctx, repo: RepoState, pull: Pull) => Reply) =>
    onRepo('GET', tail, opts, (ctx, r, n) => {
      const pull = ctx.state.pull(r, Number(n));
      return pull ? handler(ctx, r, pull) : missing('pull', opts.doc ?? '');
    });
  return { onRepo, onPull };
}

export const readBody = async (req: IncomingMessage): Promise<Buffer> => Buffer.concat(await req.toArray());

/**
 * A form or JSON request body as an object ({} when empty or not an object; undefined when it is
 * not JSON). A REST body is a form when its type says so; `formUnlessJson` (an OAuth token
 * request): whenever its type does not say JSON.
 */
export function parseBody(raw: Buffer, type = '', formUnlessJson = false): Record<string, unknown> | undefined {
  if (raw.length === 0) return {};
  if (formUnlessJson ? !/json/i.test(type) : type.includes('application/x-www-form-urlencoded'))
    return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  try {
    const parsed: unknown = JSON.parse(raw.toString('utf8'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? { ...parsed } : {};
  } catch {
    return undefined;
  }
}

export const reasonPhrases =
  (own: Record<number, string>, unknown: (status: number) => string = (s) => `HTTP ${s}`) =>
  (status: number): string =>
    own[status] ?? STATUS_CODES[status] ?? unknown(status);

/**
 * The token an Authorization header carries: `token T` or `Bearer T`, or HTTP Basic with the
 * token as password whatever the user name. `usernameIfNoPassword` (Gitea): an empty password or
 * `x-oauth-basic` makes the user name the token.
 */
export function credentials(authorization: string | undefined, usernameIfNoPassword = false) {
  if (!authorization) return { present: false, token: undefined };
  const bearer = /^(?:token|bearer)\s+(\S+)\s*$/i.exec(authorization);
  const basic = /^basic\s+(\S+)\s*$/i.exec(authorization);
  if (bearer || !basic) return { present: true, token: bearer?.[1] };
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const password = decoded.slice(colon + 1);
  const useName = colon < 0 || (usernameIfNoPassword && (password === '' || password === 'x-oauth-basic'));
  return { present: true, token: useName ? decoded.slice(0, colon < 0 ? undefined : colon) : password };
}

/** A host's REST API under `apiPath`, with failures a test injects (each answered once, to the first request it matches). */
export function restApi(host: RestHost, state: State, urls: Urls, apiPath: string) {
  const failures: { method: string; pattern: RegExp; reply: Reply }[] = [];
  const holds: { method: string; pattern: RegExp; count: number; waiting: (() => void)[] }[] = [];

  /** Waits, when a hold takes this request, until the hold has all its requests; then they go on together. */
  function heldBack(method: string, url: URL): Promise<void> {
    const path = url.pathname.slice(apiPath.length) || '/';
    const i = holds.findIndex((h) => h.method === method && (h.pattern.test(path) || h.pattern.test(url.pathname)));
    if (i < 0) return Promise.resolve();
    const hold = holds[i]!;
    return new Promise((resolve) => {
      hold.waiting.push(resolve);
      if (hold.waiting.length < hold.count) return;
      holds.splice(i, 1);
      for (const go of hold.waiting) go();
    });
  }

  function route(method: string, path: string, ctx: Ctx): Reply {
    for (const [m, pattern, handler] of host.routes) {
      const match = m === method ? pattern.exec(path) : null;
      if (!match) continue;
      let groups: string[];
      try {
        groups = match.slice(1).map((g) => decodeURIComponent(g ?? ''));
      } catch {
        break; // a path that does not decode: the host's 404
      }
      return handler(ctx, ...groups);
    }
    return host.error(404, host.reason(404));
  }

  function answer(req: IncomingMessage, raw: Buffer, url: URL, caller: Caller | undefined): Reply {
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname.slice(apiPath.length) || '/';
    const i = failures.findIndex((f) => f.method === method && (f.pattern.test(path) || f.pattern.test(url.pathname)));
    const injected = i >= 0 ? failures.splice(i, 1)[0]!.reply : undefined;
    if (injected)
      return { ...injected, body: injected.body ?? host.error(injected.status, host.reason(injected.status)).body };
    const { present, token } = host.credentials(req);
    const own = host.before?.({ method, path, query: url.searchParams, raw, token, caller });
    if (own) return own;
    if (token !== undefined && host.expired && state.tokens.get(token)?.expired) return host.expired;
    if (present && !caller) return host.badCredentials();
    const body = parseBody(raw, req.headers['content-type']);
    if (!body) return host.badJson();
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
    /**
     * Holds the next `count` matching requests until the last of them has arrived, then answers
     * them all: callers racing through a stretch that includes this request are made to overlap.
     */
    holdTogether(method: string, pattern: RegExp, count: number): void {
      holds.push({ method: method.toUpperCase(), pattern, count, waiting: [] });
    },
    async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
      const raw = await readBody(req);
      await heldBack((req.method ?? 'GET').toUpperCase(), url);
      const { token } = host.credentials(req);
      const caller = token !== undefined ? state.byToken(token) : undefined;
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
