import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  DOCS,
  type Reply,
  badCredentials,
  ghError,
  notAccessible,
  notFound,
  reasonPhrase,
  requiresAuthentication,
  validationFailed,
} from './errors.js';
import {
  type Caller,
  FailRules,
  type RestCtx,
  credentials,
  jsonObject,
  segments as pathSegments,
  readBody,
} from '../fake-host/rest.js';
import type { RepoState, State } from '../fake-host/state.js';
import { type Urls, branchView, commitView, fullUser, pullView, repoView } from './views.js';

/** The REST subset under /api/v3, with GitHub's auth, error bodies and rate-limit headers. */

type Ctx = RestCtx<State>;

const RATE_LIMIT_AUTHENTICATED = 5000;
const RATE_LIMIT_ANONYMOUS = 60;

export class Rest {
  private readonly failRules = new FailRules<Reply>();
  private readonly buckets = new Map<string, { limit: number; used: number; reset: number }>();

  constructor(
    private readonly state: State,
    private readonly urls: Urls,
  ) {}

  failNext(method: string, pathPattern: RegExp, reply: Reply): void {
    this.failRules.add(method, pathPattern, reply);
  }

  /** Answers one request whose path starts with /api/v3; returns the status written. */
  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
    const raw = await readBody(req);
    const fullPath = url.pathname;
    const path = fullPath.slice('/api/v3'.length) || '/';
    const method = (req.method ?? 'GET').toUpperCase();
    const { present, token } = credentials(req.headers.authorization);
    const found = token !== undefined ? this.state.byToken(token) : undefined;
    const caller = found ? { user: found.user, token: found.token } : undefined;
    const rate = this.rateHeaders(
      caller ? `token:${token}` : `ip:${req.socket.remoteAddress ?? ''}`,
      caller ? RATE_LIMIT_AUTHENTICATED : RATE_LIMIT_ANONYMOUS,
    );

    let reply: Reply;
    const injected = this.failRules.take(method, path, fullPath);
    if (injected) {
      reply = { ...injected, body: injected.body ?? ghError(injected.status, reasonPhrase(injected.status)).body };
    } else if (present && !caller) {
      reply = badCredentials();
    } else {
      let body: Record<string, unknown>;
      try {
        body = jsonObject(raw);
      } catch {
        return write(res, ghError(400, 'Problems parsing JSON', DOCS.root), rate, caller);
      }
      try {
        reply = route(method, path, { state: this.state, urls: this.urls, caller, body, query: url.searchParams });
      } catch (err) {
        reply = ghError(500, `fake-github: ${(err as Error).message}`);
      }
    }
    return write(res, reply, rate, caller);
  }

  /** GitHub's rate-limit headers, counted per token (or address); nothing is refused past the limit. */
  private rateHeaders(bucketKey: string, limit: number): Record<string, string> {
    const nowSec = Math.floor(Date.now() / 1000);
    let bucket = this.buckets.get(bucketKey);
    if (!bucket || bucket.reset <= nowSec) {
      bucket = { limit, used: 0, reset: nowSec + 3600 };
      this.buckets.set(bucketKey, bucket);
    }
    if (bucket.used < bucket.limit) bucket.used++;
    return {
      'x-ratelimit-limit': String(bucket.limit),
      'x-ratelimit-remaining': String(bucket.limit - bucket.used),
      'x-ratelimit-reset': String(bucket.reset),
      'x-ratelimit-used': String(bucket.used),
      'x-ratelimit-resource': 'core',
    };
  }
}

function write(
  res: ServerResponse,
  reply: Reply,
  rateHeaders: Record<string, string>,
  caller: Caller | undefined,
): number {
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'x-github-media-type': 'github.v3; format=json',
    'x-github-api-version-selected': '2022-11-28',
    'x-github-request-id': randomUUID().toUpperCase(),
    ...(caller ? { 'x-oauth-scopes': caller.token.scopes.join(', ') } : {}),
    ...rateHeaders,
  };
  for (const [name, value] of Object.entries(reply.headers ?? {})) headers[name.toLowerCase()] = value;
  res.writeHead(reply.status, headers);
  res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
  return reply.status;
}

// ---- routes -----------------------------------------------------------------------------------

function route(method: string, path: string, ctx: Ctx): Reply {
  const segments = pathSegments(path);
  if (!segments) return notFound();
  const [a, b, c, d, e, f] = segments;
  if (a === 'user' && segments.length === 1 && method === 'GET') return getUser(ctx);
  if (a === 'user' && b === 'repos' && segments.length === 2 && method === 'POST') return createRepo(ctx);
  if (a === 'repos' && b && c) {
    const rest = segments.slice(3);
    if (rest.length === 0 && method === 'GET') return getRepo(ctx, b, c);
    if (d === 'forks' && rest.length === 1 && method === 'POST') return createFork(ctx, b, c);
    if (d === 'merge-upstream' && rest.length === 1 && method === 'POST') return mergeUpstream(ctx, b, c);
    if (d === 'branches' && rest.length >= 2 && method === 'GET') return getBranch(ctx, b, c, rest.slice(1).join('/'));
    if (d === 'pulls' && rest.length === 1 && method === 'POST') return createPull(ctx, b, c);
    if (d === 'pulls' && rest.length === 1 && method === 'GET') return listPulls(ctx, b, c);
    if (d === 'pulls' && e && /^\d+$/.test(e) && rest.length === 2 && method === 'GET')
      return getPull(ctx, b, c, Number(e));
    if (d === 'pulls' && e && /^\d+$/.test(e) && f === 'commits' && rest.length === 3 && method === 'GET')
      return listPullCommits(ctx, b, c, Number(e));
  }
  return notFound();
}

const login = (ctx: Ctx): string | undefined => ctx.caller?.user.login;

/** The repository if the caller can see it, else GitHub's 404. */
function visible(ctx: Ctx, owner: string, name: string, doc: string): RepoState | Reply {
  const repo = ctx.state.repo(owner, name);
  if (!repo || !ctx.state.canSee(repo, login(ctx))) return notFound(doc);
  return repo;
}

/** A write needs a caller (401) whose token may write (403). */
function writer(ctx: Ctx, doc: string): Caller | Reply {
  if (!ctx.caller) return requiresAuthentication(doc);
  if (ctx.caller.token.readOnly) return notAccessible(doc);
  return ctx.caller;
}

const isReply = (x: unknown): x is Reply =>
  typeof x === 'object' && x !== null && 'status' in x && typeof (x as Reply).status === 'number';

function getUser(ctx: Ctx): Reply {
  if (!ctx.caller) return requiresAuthentication(DOCS.getUser);
  return { status: 200, body: fullUser(ctx.caller.user, ctx.urls) };
}

function getRepo(ctx: Ctx, owner: string, name: string): Reply {
  const repo = visible(ctx, owner, name, DOCS.getRepo);
  if (isReply(repo)) return repo;
  return { status: 200, body: repoView(ctx.state, repo, login(ctx), ctx.urls) };
}

function createRepo(ctx: Ctx): Reply {
  const caller = writer(ctx, DOCS.createRepo);
  if (isReply(caller)) return caller;
  const { name, description, auto_init: autoInit } = ctx.body;
  if (typeof name !== 'string' || name === '')
    return validationFailed([{ resource: 'Repository', code: 'missing_field', field: 'name' }], DOCS.createRepo);
  if (ctx.state.repo(caller.user.login, name)) {
    return validationFailed(
      [{ resource: 'Repository', code: 'custom', field: 'name', message: 'name already exists on this account' }],
      DOCS.createRepo,
    );
  }
  const repo = ctx.state.addRepo(caller.user.login, name, {
    private: ctx.body.private === true || ctx.body.visibility === 'private',
    description: typeof description === 'string' ? description : null,
  });
  if (autoInit === true) {
    const readme = `# ${name}\n${typeof description === 'string' && description ? `\n${description}\n` : ''}`;
    ctx.state.commit(repo, {
      branch: repo.defaultBranch,
      files: { 'README.md': readme },
      message: 'Initial commit',
      author: ctx.state.identity(caller.user.login),
    });
  }
  return { status: 201, body: repoView(ctx.state, repo, caller.user.login, ctx.urls) };
}

function createFork(ctx: Ctx, owner: string, name: string): Reply {
  const caller = writer(ctx, DOCS.createFork);
  if (isReply(caller)) return caller;
  const repo = visible(ctx, owner, name, DOCS.createFork);
  if (isReply(repo)) return repo;
  if (ctx.body.organization !== undefined)
    return validationFailed([{ resource: 'Fork', code: 'invalid', field: 'organization' }], DOCS.createFork);
  const forkName = typeof ctx.body.name === 'string' && ctx.body.name ? ctx.body.name : undefined;
  const fork = ctx.state.fork(repo, caller.user.login, forkName);
  return { status: 202, body: repoView(ctx.state, fork, caller.user.login, ctx.urls) };
}

function mergeUpstream(ctx: Ctx, owner: string, name: string): Reply {
  const caller = writer(ctx, DOCS.mergeUpstream);
  if (isReply(caller)) return caller;
  const repo = visible(ctx, owner, name, DOCS.mergeUpstream);
  if (isReply(repo)) return repo;
  if (!ctx.state.permissions(repo, caller.user.login).push)
    return ghError(403, 'Must have push access to repository', DOCS.mergeUpstream);
  const branch = ctx.body.branch;
  if (typeof branch !== 'string' || branch === '')
    return validationFailed([{ resource: 'Repository', code: 'missing_field', field: 'branch' }], DOCS.mergeUpstream);
  const parent = repo.parent ? ctx.state.repoByFullName(repo.parent) : undefined;
  if (!parent) return ghError(422, 'This repository is not a fork.', DOCS.mergeUpstream);
  const baseBranch = `${parent.owner}:${branch}`;
  const mine = ctx.state.git.branchHead(repo.dir, branch);
  if (!mine) return ghError(404, 'Branch not found', DOCS.mergeUpstream);
  const upstream = ctx.state.git.fetchRef(repo.dir, parent.dir, `refs/heads/${branch}`, 'refs/fake-github/upstream');
  try {
    if (!upstream) return ghError(422, `Upstream branch ${baseBranch} not found.`, DOCS.mergeUpstream);
    if (upstream === mine || ctx.state.git.isAncestor(repo.dir, upstream, mine)) {
      return {
        status: 200,
        body: {
          message: `This branch is not behind the upstream ${baseBranch}.`,
          merge_type: 'none',
          base_branch: baseBranch,
        },
      };
    }
    if (!ctx.state.git.isAncestor(repo.dir, mine, upstream)) {
      return ghError(
        409,
        `This branch has diverged from the upstream ${baseBranch} and cannot be fast-forwarded.`,
        DOCS.mergeUpstream,
      );
    }
    ctx.state.git.setRef(repo.dir, branch, upstream);
    return {
      status: 200,
      body: {
        message: `Successfully fetched and fast-forwarded from upstream ${baseBranch}.`,
        merge_type: 'fast-forward',
        base_branch: baseBranch,
      },
    };
  } finally {
    ctx.state.git.deleteRef(repo.dir, 'refs/fake-github/upstream');
  }
}

function getBranch(ctx: Ctx, owner: string, name: string, branch: string): Reply {
  const repo = visible(ctx, owner, name, DOCS.getBranch);
  if (isReply(repo)) return repo;
  const sha = ctx.state.git.branchHead(repo.dir, branch);
  if (!sha) return ghError(404, 'Branch not found', DOCS.getBranch);
  return { status: 200, body: branchView(ctx.state, repo, branch, sha, ctx.urls) };
}

function createPull(ctx: Ctx, owner: string, name: string): Reply {
  const doc = DOCS.createPull;
  if (!ctx.caller) return requiresAuthentication(doc);
  const repo = visible(ctx, owner, name, doc);
  if (isReply(repo)) return repo;
  const caller = writer(ctx, doc);
  if (isReply(caller)) return caller;
  const { title, head, base, body, draft, maintainer_can_modify: canModify } = ctx.body;
  const missing = (['title', 'head', 'base'] as const).filter(
    (f) => typeof ctx.body[f] !== 'string' || ctx.body[f] === '',
  );
  if (missing.length > 0)
    return validationFailed(
      missing.map((field) => ({ resource: 'PullRequest', code: 'missing_field' as const, field })),
      doc,
    );
  const headSpec = head as string;
  const colon = headSpec.indexOf(':');
  const headOwner = colon >= 0 ? headSpec.slice(0, colon) : repo.owner;
  const headRef = colon >= 0 ? headSpec.slice(colon + 1) : headSpec;
  const headRepo = ctx.state.inNetwork(repo, headOwner);
  const git = ctx.state.git;
  if (!headRepo || !ctx.state.canSee(headRepo, caller.user.login) || !git.branchHead(headRepo.dir, headRef)) {
    return validationFailed([{ resource: 'PullRequest', code: 'invalid', field: 'head' }], doc);
  }
  const baseSha = git.branchHead(repo.dir, base as string);
  if (!baseSha) return validationFailed([{ resource: 'PullRequest', code: 'invalid', field: 'base' }], doc);
  if (draft === true && !repo.allowDrafts) {
    return validationFailed(
      [
        {
          resource: 'PullRequest',
          code: 'custom',
          message: 'Draft pull requests are not supported in this repository.',
        },
      ],
      doc,
    );
  }
  const existing = ctx.state
    .pulls(repo)
    .find(
      (p) =>
        p.state === 'open' &&
        p.base === base &&
        p.head.ref === headRef &&
        p.head.owner.toLowerCase() === headRepo.owner.toLowerCase() &&
        p.head.repo === headRepo.name,
    );
  if (existing) {
    return validationFailed(
      [
        {
          resource: 'PullRequest',
          code: 'custom',
          message: `A pull request already exists for ${headRepo.owner}:${headRef}.`,
        },
      ],
      doc,
    );
  }
  const headSha = git.fetchRef(repo.dir, headRepo.dir, `refs/heads/${headRef}`, 'refs/fake-github/compare');
  git.deleteRef(repo.dir, 'refs/fake-github/compare');
  if (!headSha || git.isAncestor(repo.dir, headSha, baseSha)) {
    return validationFailed(
      [{ resource: 'PullRequest', code: 'custom', message: `No commits between ${base as string} and ${headSpec}` }],
      doc,
    );
  }
  const sameRepo = headRepo === repo;
  const pull = ctx.state.addPull(repo, {
    title: title as string,
    body: typeof body === 'string' ? body : null,
    user: caller.user.login,
    head: { owner: headRepo.owner, repo: headRepo.name, ref: headRef },
    base: base as string,
    draft: draft === true,
    maintainer_can_modify: sameRepo ? false : canModify !== false,
  });
  return {
    status: 201,
    body: pullView(ctx.state, repo, pull, caller.user.login, ctx.urls),
    headers: { location: `${ctx.urls.apiUrl}/repos/${repo.owner}/${repo.name}/pulls/${pull.number}` },
  };
}

/** GET /repos/{owner}/{repo}/pulls: `state` (open, closed, all; default open) and `head` (owner:branch) filters. */
function listPulls(ctx: Ctx, owner: string, name: string): Reply {
  const repo = visible(ctx, owner, name, DOCS.getPull);
  if (isReply(repo)) return repo;
  const state = ctx.query.get('state') ?? 'open';
  const head = ctx.query.get('head');
  const pulls = ctx.state
    .pulls(repo)
    .filter((p) => state === 'all' || p.state === state)
    .filter((p) => !head || `${p.head.owner}:${p.head.ref}`.toLowerCase() === head.toLowerCase());
  return { status: 200, body: pulls.map((p) => pullView(ctx.state, repo, p, login(ctx), ctx.urls)) };
}

function getPull(ctx: Ctx, owner: string, name: string, number: number): Reply {
  const repo = visible(ctx, owner, name, DOCS.getPull);
  if (isReply(repo)) return repo;
  const pull = ctx.state.pull(repo, number);
  if (!pull) return notFound(DOCS.getPull);
  return { status: 200, body: pullView(ctx.state, repo, pull, login(ctx), ctx.urls) };
}

function listPullCommits(ctx: Ctx, owner: string, name: string, number: number): Reply {
  const repo = visible(ctx, owner, name, DOCS.listPullCommits);
  if (isReply(repo)) return repo;
  const pull = ctx.state.pull(repo, number);
  if (!pull) return notFound(DOCS.listPullCommits);
  return { status: 200, body: ctx.state.pullCommits(repo, pull).map((c) => commitView(ctx.state, repo, c, ctx.urls)) };
}
