import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RepoState } from '../fake-host/state.js';
import {
  type Caller,
  FailRules,
  type RestCtx,
  credentials,
  jsonObject,
  segments as pathSegments,
  readBody,
} from '../fake-host/rest.js';
import {
  type Reply,
  badCredentials,
  giteaError,
  notFound,
  reasonPhrase,
  scopeMissing,
  tokenRequired,
} from './errors.js';
import type { GiteaState } from './state.js';
import { type Urls, commitView, isWip, pullView, repoView } from './views.js';

/** The REST subset under /api/v1 the adapter uses, with Gitea's auth, status codes and error bodies. */

/** Gitea syncs a fork at POST …/merge-upstream; Forgejo at POST …/sync_fork[/{branch}] and has no merge-upstream. */
export type Flavour = 'gitea' | 'forgejo';

type Ctx = RestCtx<GiteaState> & { flavour: Flavour };

export class Rest {
  private readonly failRules = new FailRules<Reply>();

  constructor(
    private readonly state: GiteaState,
    private readonly urls: Urls,
    private readonly flavour: Flavour = 'gitea',
  ) {}

  failNext(
    method: string,
    pathPattern: RegExp,
    reply: { status: number; body?: unknown; headers?: Record<string, string> },
  ): void {
    const injected: Reply = reply.body === undefined ? giteaError(reply.status, reasonPhrase(reply.status)) : reply;
    this.failRules.add(method, pathPattern, { ...injected, headers: reply.headers });
  }

  /** Answers one request whose path starts with /api/v1; returns the status written. */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
    const raw = await readBody(req);
    const path = url.pathname.slice('/api/v1'.length) || '/';
    const method = (req.method ?? 'GET').toUpperCase();
    const { present, token } = credentials(req.headers.authorization, true);
    const found = token !== undefined ? this.state.byToken(token) : undefined;
    const caller = found ? { user: found.user, token: found.token } : undefined;
    const injected = this.failRules.take(method, path, url.pathname);
    let reply: Reply;
    if (injected) reply = injected;
    else if (present && !caller) reply = badCredentials();
    else {
      let body: Record<string, unknown>;
      try {
        body = jsonObject(raw);
      } catch {
        return this.write(res, giteaError(422, 'invalid JSON body'));
      }
      try {
        reply = route(method, path, {
          flavour: this.flavour,
          state: this.state,
          urls: this.urls,
          caller,
          body,
          query: url.searchParams,
        });
      } catch (err) {
        reply = giteaError(500, `fake-gitea: ${(err as Error).message}`);
      }
    }
    return this.write(res, reply);
  }

  private write(res: ServerResponse, reply: Reply): number {
    const headers: Record<string, string> = { 'content-type': 'application/json;charset=utf-8' };
    for (const [name, value] of Object.entries(reply.headers ?? {})) headers[name.toLowerCase()] = value;
    const body = reply.error ? { ...reply.error, url: `${this.urls.webUrl}/api/swagger` } : reply.body;
    res.writeHead(reply.status, headers);
    res.end(body === undefined ? '' : JSON.stringify(body));
    return reply.status;
  }
}

// ---- routes -----------------------------------------------------------------------------------

function route(method: string, path: string, ctx: Ctx): Reply {
  const segments = pathSegments(path);
  if (!segments) return notFound();
  const [a, b, c, d, e, f] = segments;
  const n = segments.length;
  if (a === 'user' && n === 1 && method === 'GET') return getUser(ctx);
  if (a === 'user' && b === 'repos' && n === 2 && method === 'POST') return createRepo(ctx);
  if (a !== 'repos' || !b || !c) return notFound();
  const repo = visible(ctx, b, c);
  if (!repo) return notFound();
  if (n === 3 && method === 'GET') return { status: 200, body: repoView(ctx.state, repo, login(ctx), ctx.urls) };
  if (d === 'forks' && n === 4 && method === 'POST') return createFork(ctx, repo);
  if (d === 'forks' && n === 4 && method === 'GET') return listForks(ctx, repo);
  if (ctx.flavour === 'gitea' && d === 'merge-upstream' && n === 4 && method === 'POST')
    return mergeUpstream(ctx, repo);
  if (ctx.flavour === 'forgejo' && d === 'sync_fork' && (n === 4 || n === 5) && method === 'POST')
    return syncFork(ctx, repo, e ?? repo.defaultBranch);
  if (d === 'pulls' && n === 4 && method === 'POST') return createPull(ctx, repo);
  if (d === 'pulls' && n === 4 && method === 'GET') return listPulls(ctx, repo);
  const pull = d === 'pulls' && e && /^\d+$/.test(e) ? ctx.state.pull(repo, Number(e)) : undefined;
  if (d === 'pulls' && n >= 5 && !pull) return notFound();
  if (pull && n === 5 && method === 'GET') return { status: 200, body: pullView(ctx.state, repo, pull, ctx.urls) };
  if (pull && f === 'commits' && n === 6 && method === 'GET') {
    const commits = ctx.state.pullCommits(repo, pull).map((x) => commitView(ctx.state, repo, x, ctx.urls));
    return page(ctx, commits);
  }
  return notFound();
}

const login = (ctx: Ctx): string | undefined => ctx.caller?.user.login;

function visible(ctx: Ctx, owner: string, name: string): RepoState | undefined {
  const repo = ctx.state.repo(owner, name);
  return repo && ctx.state.canSee(repo, login(ctx)) ? repo : undefined;
}

/** A write needs a token (401 `token is required`) that is not read-only (403, the scope it lacks). */
function writer(ctx: Ctx): Caller | Reply {
  if (!ctx.caller) return tokenRequired();
  if (ctx.caller.token.readOnly) return scopeMissing('write:repository');
  return ctx.caller;
}

const isReply = (x: unknown): x is Reply =>
  typeof x === 'object' && x !== null && 'status' in x && typeof (x as Reply).status === 'number';

/** `page` and `limit` (at most 50, Gitea's default MAX_RESPONSE_ITEMS), with x-total-count. */
function page(ctx: Ctx, items: unknown[]): Reply {
  const limit = Math.min(50, Math.max(1, Number(ctx.query.get('limit')) || 30));
  const pageNo = Math.max(1, Number(ctx.query.get('page')) || 1);
  return {
    status: 200,
    body: items.slice((pageNo - 1) * limit, pageNo * limit),
    headers: { 'x-total-count': String(items.length) },
  };
}

function getUser(ctx: Ctx): Reply {
  if (!ctx.caller) return tokenRequired();
  const u = ctx.caller.user;
  return {
    status: 200,
    body: { id: u.id, login: u.login, full_name: u.name, email: u.email, username: u.login, created: u.createdAt },
  };
}

const NAME = /^[A-Za-z0-9._-]+$/;

function createRepo(ctx: Ctx): Reply {
  const caller = writer(ctx);
  if (isReply(caller)) return caller;
  const { name, description } = ctx.body;
  if (typeof name !== 'string' || name === '') return giteaError(422, '[Name]: Required', ['[Name]: Required']);
  if (!NAME.test(name) || name === '.' || name === '..')
    return giteaError(422, `name is invalid [${name}]: must be valid alpha or numeric or dash(-_) or dot characters`);
  if (ctx.state.repo(caller.user.login, name))
    return giteaError(409, 'The repository with the same name already exists.');
  const repo = ctx.state.addRepo(caller.user.login, name, {
    private: ctx.body.private === true,
    description: typeof description === 'string' && description !== '' ? description : null,
  });
  return { status: 201, body: repoView(ctx.state, repo, caller.user.login, ctx.urls) };
}

/** 202 with the new fork; 409 when the caller has a fork of it already or a repository of that name. */
function createFork(ctx: Ctx, repo: RepoState): Reply {
  const caller = writer(ctx);
  if (isReply(caller)) return caller;
  const me = caller.user.login;
  const existing = ctx.state.forkOf(repo, me);
  if (existing)
    return giteaError(
      409,
      `repository is already forked by user [uname: ${me}, repo path: ${repo.owner}/${repo.name}, fork path: ${existing.owner}/${existing.name}]`,
    );
  const name = typeof ctx.body.name === 'string' && ctx.body.name ? ctx.body.name : repo.name;
  if (ctx.state.repo(me, name)) return giteaError(409, `repository already exists [uname: ${me}, name: ${name}]`);
  const fork = ctx.state.addRepo(me, name, { fork: repo });
  return { status: 202, body: repoView(ctx.state, fork, me, ctx.urls) };
}

function listForks(ctx: Ctx, repo: RepoState): Reply {
  const full = `${repo.owner}/${repo.name}`.toLowerCase();
  const forks = [...ctx.state.repos.values()].filter(
    (r) => r.parent?.toLowerCase() === full && ctx.state.canSee(r, login(ctx)),
  );
  return page(
    ctx,
    forks.map((r) => repoView(ctx.state, r, login(ctx), ctx.urls)),
  );
}

/** Gitea: fast-forwards the fork's branch; `{merge_style}`. */
function mergeUpstream(ctx: Ctx, repo: RepoState): Reply {
  const branch = ctx.body.branch;
  if (typeof branch !== 'string' || branch === '') return giteaError(422, '[Branch]: Required', ['[Branch]: Required']);
  const synced = syncBranch(ctx, repo, branch, 'repo is not a fork');
  return typeof synced === 'string' ? { status: 200, body: { merge_style: synced } } : synced;
}

/** Forgejo's sync_fork: the same, answered 204. */
function syncFork(ctx: Ctx, repo: RepoState, branch: string): Reply {
  const synced = syncBranch(ctx, repo, branch, 'The Repo must be a fork');
  return typeof synced === 'string' ? { status: 204 } : synced;
}

/** Brings the fork's branch up to its parent's: '' (up to date) or 'fast-forward'; else the refusal. */
function syncBranch(ctx: Ctx, repo: RepoState, branch: string, notFork: string): string | Reply {
  const caller = writer(ctx);
  if (isReply(caller)) return caller;
  if (!ctx.state.permissions(repo, caller.user.login).push) return giteaError(403, 'user should have write access');
  const parent = repo.parent ? ctx.state.repoByFullName(repo.parent) : undefined;
  if (!repo.fork || !parent) return giteaError(400, notFork);
  const git = ctx.state.git;
  const mine = git.branchHead(repo.dir, branch);
  if (!mine) return giteaError(404, `branch does not exist [name: ${branch}]`);
  const upstream = git.fetchRef(repo.dir, parent.dir, `refs/heads/${branch}`, 'refs/fake-gitea/upstream');
  try {
    if (!upstream) return giteaError(404, `branch does not exist [name: ${branch}]`);
    if (upstream === mine || git.isAncestor(repo.dir, upstream, mine)) return '';
    if (git.isAncestor(repo.dir, mine, upstream)) {
      git.setRef(repo.dir, branch, upstream);
      return 'fast-forward';
    }
    // Gitea merges a diverged branch; no test needs that, so the fake refuses it as a conflict.
    return giteaError(409, 'merge upstream failed: there are conflicts');
  } finally {
    git.deleteRef(repo.dir, 'refs/fake-gitea/upstream');
  }
}

function createPull(ctx: Ctx, repo: RepoState): Reply {
  const caller = writer(ctx);
  if (isReply(caller)) return caller;
  const { title, head, base, body } = ctx.body;
  if (typeof title !== 'string' || title === '') return giteaError(422, '[Title]: Required', ['[Title]: Required']);
  if (typeof head !== 'string' || typeof base !== 'string' || head === '' || base === '')
    return giteaError(422, '[Head]: Required', ['[Head]: Required']);
  if (head === base) return giteaError(422, 'Invalid PullRequest: There are no changes between the head and the base');
  // head: `branch`, `owner:branch` or `owner/repo:branch` (parseCompareInfo)
  const colon = head.indexOf(':');
  const spec = colon >= 0 ? head.slice(0, colon) : '';
  const headRef = colon >= 0 ? head.slice(colon + 1) : head;
  const [headOwner, headName] = spec.includes('/') ? spec.split('/') : [spec || repo.owner, undefined];
  const headRepo = headName
    ? ctx.state.repo(headOwner!, headName)
    : (ctx.state.inNetwork(repo, headOwner!) ?? ctx.state.forkOf(repo, headOwner!));
  const git = ctx.state.git;
  if (!headRepo || !ctx.state.canSee(headRepo, caller.user.login)) return notFound();
  if (!git.branchHead(headRepo.dir, headRef)) return giteaError(404, `BaseRepo.IsBranchExist: ${headRef}`);
  const baseSha = git.branchHead(repo.dir, base);
  if (!baseSha) return giteaError(404, `BaseRepo.IsBranchExist: ${base}`);
  const existing = ctx.state
    .pulls(repo)
    .find((p) => p.state === 'open' && p.base === base && p.head.ref === headRef && ctx.state.headRepo(p) === headRepo);
  if (existing)
    return giteaError(
      409,
      `pull request already exists for these targets [id: ${existing.id}, issue_id: ${existing.number}, head_repo_id: ${headRepo.id}, base_repo_id: ${repo.id}, head_branch: ${headRef}, base_branch: ${base}]`,
    );
  const headSha = git.fetchRef(repo.dir, headRepo.dir, `refs/heads/${headRef}`, 'refs/fake-gitea/compare');
  git.deleteRef(repo.dir, 'refs/fake-gitea/compare');
  if (!headSha || git.isAncestor(repo.dir, headSha, baseSha))
    return giteaError(422, 'Invalid PullRequest: There are no changes between the head and the base');
  const pull = ctx.state.addPull(repo, {
    title,
    body: typeof body === 'string' ? body : '',
    user: caller.user.login,
    head: { owner: headRepo.owner, repo: headRepo.name, ref: headRef },
    base,
    draft: isWip(title),
    maintainer_can_modify: false,
  });
  return { status: 201, body: pullView(ctx.state, repo, pull, ctx.urls) };
}

/** `state`: open (default), closed or all; newest first, as Gitea sorts by default. */
function listPulls(ctx: Ctx, repo: RepoState): Reply {
  const state = ctx.query.get('state') ?? 'open';
  const pulls = ctx.state
    .pulls(repo)
    .filter((p) => state === 'all' || p.state === state)
    .slice()
    .reverse();
  return page(
    ctx,
    pulls.map((p) => pullView(ctx.state, repo, p, ctx.urls)),
  );
}
