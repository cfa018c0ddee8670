import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RepoState } from '../fake-host/state.js';
import { type Caller, FailRules, jsonObject, segments as pathSegments, readBody } from '../fake-host/rest.js';
import { type Reply, expiredToken, forbidden, glError, projectNotFound, taken, unauthorized } from './errors.js';
import { ACCESS, DRAFT_TITLE, type GitLabModel, type Visibility } from './model.js';
import { type Urls, commitView, mergeRequestView, projectView, userView } from './views.js';

/** The REST subset under /api/v4 with GitLab's auth rules, status codes and error bodies. */

interface Ctx {
  model: GitLabModel;
  urls: Urls;
  caller: Caller | undefined;
  body: Record<string, unknown>;
  query: URLSearchParams;
}

/** The token a request carries: `Authorization: Bearer T` (OAuth or personal), or `PRIVATE-TOKEN: T`. */
export function tokenOf(req: IncomingMessage): { present: boolean; token: string | undefined } {
  const priv = req.headers['private-token'];
  if (typeof priv === 'string') return { present: true, token: priv };
  const auth = req.headers.authorization;
  if (!auth) return { present: false, token: undefined };
  const bearer = /^bearer\s+(\S+)\s*$/i.exec(auth);
  return { present: true, token: bearer?.[1] };
}

export class Rest {
  private readonly failRules = new FailRules<Reply>();

  constructor(
    private readonly model: GitLabModel,
    private readonly urls: Urls,
  ) {}

  failNext(method: string, pathPattern: RegExp, reply: Reply): void {
    this.failRules.add(method, pathPattern, reply);
  }

  /** Answers one request under /api/v4; returns the status written. */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
    const raw = await readBody(req);
    const path = url.pathname.slice('/api/v4'.length) || '/';
    const method = (req.method ?? 'GET').toUpperCase();
    const { present, token } = tokenOf(req);
    const found = token !== undefined ? this.model.state.byToken(token) : undefined;
    const caller = found ? { user: found.user, token: found.token } : undefined;
    const injected = this.failRules.take(method, path, url.pathname);
    let reply: Reply;
    if (injected) {
      reply = { ...injected, body: injected.body ?? glError(injected.status).body };
    } else if (token !== undefined && this.model.expired.has(token)) reply = expiredToken();
    else if (present && !caller) reply = unauthorized();
    else {
      let body: Record<string, unknown> = {};
      try {
        body = parseBody(raw, req.headers['content-type']);
      } catch {
        return write(res, glError(400, 'Bad request'));
      }
      try {
        reply = route(method, path, { model: this.model, urls: this.urls, caller, body, query: url.searchParams });
      } catch (err) {
        reply = glError(500, `fake-gitlab: ${(err as Error).message}`);
      }
    }
    return write(res, reply);
  }
}

function parseBody(raw: Buffer, contentType: string | undefined): Record<string, unknown> {
  if (raw.length === 0) return {};
  if ((contentType ?? '').includes('application/x-www-form-urlencoded'))
    return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  return jsonObject(raw);
}

function write(res: ServerResponse, reply: Reply): number {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-request-id': randomUUID().replace(/-/g, '').slice(0, 26).toUpperCase(),
    'x-gitlab-meta': '{}',
  };
  if (Array.isArray(reply.body)) {
    Object.assign(headers, { 'x-page': '1', 'x-per-page': '100', 'x-total': String(reply.body.length) });
    Object.assign(headers, { 'x-total-pages': '1', 'x-next-page': '', 'x-prev-page': '' });
  }
  for (const [name, value] of Object.entries(reply.headers ?? {})) headers[name.toLowerCase()] = value;
  res.writeHead(reply.status, headers);
  // A string body is sent as it is (a proxy's HTML page from failNext), anything else as JSON.
  res.end(reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
  return reply.status;
}

// ---- routes -----------------------------------------------------------------------------------

function route(method: string, path: string, ctx: Ctx): Reply {
  const segments = pathSegments(path);
  if (!segments) return glError(404, 'Not Found');
  const [a, id, c, d, e] = segments;
  const n = segments.length;
  if (a === 'user' && n === 1 && method === 'GET')
    return ctx.caller ? ok(userView(ctx.caller.user, ctx.urls)) : unauthorized();
  if (a === 'projects' && n === 1 && method === 'POST') return createProject(ctx);
  if (a === 'projects' && id) {
    if (n === 2 && method === 'GET') return getProject(ctx, id);
    if (c === 'forks' && n === 3 && method === 'GET') return listForks(ctx, id);
    if (c === 'fork' && n === 3 && method === 'POST') return forkProject(ctx, id);
    if (c === 'merge_requests' && n === 3 && method === 'POST') return createMergeRequest(ctx, id);
    if (c === 'merge_requests' && n === 3 && method === 'GET') return listMergeRequests(ctx, id);
    if (c === 'merge_requests' && d && /^\d+$/.test(d) && n === 4 && method === 'GET')
      return getMergeRequest(ctx, id, Number(d));
    if (c === 'merge_requests' && d && /^\d+$/.test(d) && e === 'commits' && n === 5 && method === 'GET')
      return listMergeRequestCommits(ctx, id, Number(d));
  }
  return glError(404, 'Not Found');
}

const ok = (body: unknown, status = 200): Reply => ({ status, body });

/** The project the caller may read, or the 404 GitLab answers for a missing or hidden one. */
function readable(ctx: Ctx, id: string): RepoState | Reply {
  const repo = ctx.model.project(id);
  if (!repo || !ctx.model.canRead(repo, ctx.caller?.user.login)) return projectNotFound();
  return repo;
}

const isReply = (x: RepoState | Reply): x is Reply => 'status' in x && !('dir' in x);
const view = (ctx: Ctx, repo: RepoState) => projectView(ctx.model, repo, ctx.caller?.user.login, ctx.urls);

function getProject(ctx: Ctx, id: string): Reply {
  const repo = readable(ctx, id);
  return isReply(repo) ? repo : ok(view(ctx, repo));
}

function createProject(ctx: Ctx): Reply {
  if (!ctx.caller) return unauthorized();
  const name = typeof ctx.body.name === 'string' ? ctx.body.name : undefined;
  const path = typeof ctx.body.path === 'string' ? ctx.body.path : name;
  if (!name || !path) return { status: 400, body: { error: 'name is missing, path is missing' } };
  const login = ctx.caller.user.login;
  if (ctx.model.state.repo(login, path)) return taken();
  const visibility = (['public', 'internal', 'private'] as const).find((v) => v === ctx.body.visibility) ?? 'private';
  const repo = ctx.model.state.addRepo(login, path, {
    private: visibility !== 'public',
    description: typeof ctx.body.description === 'string' ? ctx.body.description : null,
  });
  ctx.model.setVisibility(repo, visibility as Visibility);
  return ok(view(ctx, repo), 201);
}

function listForks(ctx: Ctx, id: string): Reply {
  const repo = readable(ctx, id);
  if (isReply(repo)) return repo;
  const full = `${repo.owner}/${repo.name}`.toLowerCase();
  const owned = ctx.query.get('owned') === 'true';
  const login = ctx.caller?.user.login.toLowerCase();
  const forks = [...ctx.model.state.repos.values()].filter(
    (r) =>
      r.parent?.toLowerCase() === full &&
      ctx.model.canRead(r, login) &&
      (!owned || (login !== undefined && r.owner.toLowerCase() === login)),
  );
  return ok(forks.map((r) => view(ctx, r)));
}

/** A fork in the caller's namespace (synchronous here; GitLab imports it in the background). */
function forkProject(ctx: Ctx, id: string): Reply {
  if (!ctx.caller) return unauthorized();
  const repo = readable(ctx, id);
  if (isReply(repo)) return repo;
  if (
    ctx.model.extra(repo).visibility !== 'public' &&
    ctx.model.accessLevel(repo, ctx.caller.user.login) < ACCESS.reporter
  )
    return forbidden();
  const login = ctx.caller.user.login;
  if (ctx.model.forkOf(repo, login) || ctx.model.state.repo(login, repo.name))
    return { status: 409, body: { message: { name: ['has already been taken'], path: ['has already been taken'] } } };
  const fork = ctx.model.state.fork(repo, login);
  ctx.model.setVisibility(fork, ctx.model.extra(repo).visibility);
  return ok(view(ctx, fork), 201);
}

function mrView(ctx: Ctx, repo: RepoState, pullNumber: number): unknown {
  const pull = ctx.model.state.pull(repo, pullNumber)!;
  const extra = ctx.model.mergeRequests.get(pull.id)!;
  return mergeRequestView(ctx.model, repo, pull, extra, ctx.model.state.syncHead(repo, pull), ctx.urls);
}

/**
 * POST /projects/:id/merge_requests on the source project; `target_project_id` names the target
 * (a fork's parent). The caller needs Developer on the source; a second open MR from the same
 * source branch is 409 in GitLab's words.
 */
function createMergeRequest(ctx: Ctx, id: string): Reply {
  if (!ctx.caller) return unauthorized();
  const source = readable(ctx, id);
  if (isReply(source)) return source;
  const login = ctx.caller.user.login;
  if (!ctx.model.canPush(source, login)) return forbidden();
  const { source_branch: branch, target_branch: base, title } = ctx.body;
  if (typeof branch !== 'string' || typeof base !== 'string' || typeof title !== 'string')
    return { status: 400, body: { error: 'source_branch is missing, target_branch is missing, title is missing' } };
  const targetId = ctx.body.target_project_id;
  const target = targetId === undefined ? source : ctx.model.projectById(Number(targetId));
  if (!target || !ctx.model.canRead(target, login)) return projectNotFound();
  if (target !== source && ctx.model.state.networkRoot(source) !== ctx.model.state.networkRoot(target))
    return { status: 400, body: { message: ['Source project is not a fork of the target project'] } };
  if (!ctx.model.state.git.branchHead(source.dir, branch))
    return { status: 422, body: { message: [`Source branch "${branch}" does not exist`] } };
  if (!ctx.model.state.git.branchHead(target.dir, base))
    return { status: 422, body: { message: [`Target branch "${base}" does not exist`] } };
  const open = ctx.model
    .mergeRequestsOf(target)
    .find((m) => m.pull.state === 'open' && m.pull.head.ref === branch && m.extra.sourceProjectId === source.id);
  if (open)
    return {
      status: 409,
      body: { message: [`Another open merge request already exists for this source branch: !${open.pull.number}`] },
    };
  const pull = ctx.model.state.addPull(target, {
    title,
    body: typeof ctx.body.description === 'string' ? ctx.body.description : null,
    user: login,
    head: { owner: source.owner, repo: source.name, ref: branch },
    base,
    draft: DRAFT_TITLE.test(title),
    maintainer_can_modify: true,
  });
  ctx.model.mergeRequests.set(pull.id, {
    sourceProjectId: source.id,
    targetProjectId: target.id,
    authorId: ctx.caller.user.id,
  });
  return ok(mrView(ctx, target, pull.number), 201);
}

function listMergeRequests(ctx: Ctx, id: string): Reply {
  const repo = readable(ctx, id);
  if (isReply(repo)) return repo;
  const state = ctx.query.get('state') ?? 'all';
  const branch = ctx.query.get('source_branch');
  const found = ctx.model.mergeRequestsOf(repo).filter(({ pull }) => {
    const s = pull.merged ? 'merged' : pull.state === 'open' ? 'opened' : 'closed';
    return (state === 'all' || state === s) && (branch === null || pull.head.ref === branch);
  });
  return ok(found.reverse().map(({ pull }) => mrView(ctx, repo, pull.number)));
}

function getMergeRequest(ctx: Ctx, id: string, iid: number): Reply {
  const repo = readable(ctx, id);
  if (isReply(repo)) return repo;
  return ctx.model.state.pull(repo, iid) ? ok(mrView(ctx, repo, iid)) : glError(404, 'Not found');
}

/** The merge request's commits, newest first as GitLab lists them. */
function listMergeRequestCommits(ctx: Ctx, id: string, iid: number): Reply {
  const repo = readable(ctx, id);
  if (isReply(repo)) return repo;
  const pull = ctx.model.state.pull(repo, iid);
  if (!pull) return glError(404, 'Not found');
  return ok(
    ctx.model.state
      .pullCommits(repo, pull)
      .reverse()
      .map((c) => commitView(repo, c, ctx.urls)),
  );
}
