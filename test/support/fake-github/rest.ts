import { randomUUID } from 'node:crypto';
import { headLabel, openPull, pullsIn, readable, syncBranch } from '../fake-host/ops.js';
import {
  type Ctx,
  type Reply,
  type RestHost,
  type Route,
  credentials,
  isReply,
  ok,
  reasonPhrases,
  text,
} from '../fake-host/rest.js';
import { type RepoState, fullName } from '../fake-host/state.js';
import { commitView, pullView, repoView, simpleUser } from './views.js';

/** GitHub's REST subset under /api/v3: its routes, its error bodies (each naming its documentation page) and headers. */

const DOCS = 'https://docs.github.com/rest';

/** `{"message", "documentation_url", "status"}` as GitHub answers errors (status as a string, as GitHub does). */
const ghError = (status: number, message: string, doc = ''): Reply => ({
  status,
  body: { message, documentation_url: doc ? `${DOCS}/${doc}` : DOCS, status: String(status) },
});

type Field = { resource: string; code: string; field?: string; message?: string };
/** 422 `Validation Failed` with its `errors`. */
const invalid = (doc: string, ...errors: Field[]): Reply => {
  const failed = ghError(422, 'Validation Failed', doc);
  return { ...failed, body: { ...(failed.body as object), errors } };
};

/** A route with its documentation page, handed to the handler for its error bodies. */
type Handler = (ctx: Ctx, doc: string, ...groups: string[]) => Reply;
const on = (method: string, pattern: RegExp, doc: string, handler: Handler): Route => [
  method,
  pattern,
  (ctx, ...groups) => handler(ctx, doc, ...groups),
];

const REPO = '/repos/([^/]+)/([^/]+)';
const path = (tail: string) => new RegExp(`^${REPO}${tail}$`);

/** The repository if the caller may read it, else GitHub's 404. */
const visible = (ctx: Ctx, doc: string, owner: string, name: string): RepoState | Reply =>
  readable(ctx, owner, name) ?? ghError(404, 'Not Found', doc);

/** A write needs a caller (401) whose token may write (403). */
function writer(ctx: Ctx, doc: string): Reply | undefined {
  if (!ctx.caller) return ghError(401, 'Requires authentication', doc);
  if (ctx.caller.token.readOnly) return ghError(403, 'Resource not accessible by personal access token', doc);
  return undefined;
}

const ROUTES: Route[] = [
  on('GET', /^\/user$/, 'users/users#get-the-authenticated-user', (ctx, doc) =>
    ctx.caller
      ? ok({ ...simpleUser(ctx, ctx.caller.user), name: ctx.caller.user.name, email: ctx.caller.user.email })
      : ghError(401, 'Requires authentication', doc),
  ),
  on('POST', /^\/user\/repos$/, 'repos/repos#create-a-repository-for-the-authenticated-user', (ctx, doc) => {
    const refused = writer(ctx, doc);
    if (refused) return refused;
    const name = text(ctx.body.name);
    const description = typeof ctx.body.description === 'string' ? ctx.body.description : null;
    if (!name) return invalid(doc, { resource: 'Repository', code: 'missing_field', field: 'name' });
    const owner = ctx.login!;
    if (ctx.state.repo(owner, name)) {
      const message = 'name already exists on this account';
      return invalid(doc, { resource: 'Repository', code: 'custom', field: 'name', message });
    }
    const isPrivate = ctx.body.private === true || ctx.body.visibility === 'private';
    const repo = ctx.state.addRepo(owner, name, { visibility: isPrivate ? 'private' : 'public', description });
    if (ctx.body.auto_init === true) {
      const readme = `# ${name}\n${description ? `\n${description}\n` : ''}`;
      const author = ctx.state.identity(owner);
      ctx.state.commit(repo, {
        branch: repo.defaultBranch,
        files: { 'README.md': readme },
        message: 'Initial commit',
        author,
      });
    }
    return ok(repoView(ctx, repo), 201);
  }),
  on('GET', path(''), 'repos/repos#get-a-repository', (ctx, doc, o, r) => {
    const repo = visible(ctx, doc, o!, r!);
    return isReply(repo) ? repo : ok(repoView(ctx, repo));
  }),
  // The caller's fork (an existing one is returned again; a taken name gets -1, -2, … like GitHub).
  on('POST', path('/forks'), 'repos/forks#create-a-fork', (ctx, doc, o, r) => {
    const repo = writer(ctx, doc) ?? visible(ctx, doc, o!, r!);
    if (isReply(repo)) return repo;
    if (ctx.body.organization !== undefined)
      return invalid(doc, { resource: 'Fork', code: 'invalid', field: 'organization' });
    const me = ctx.login!;
    let fork = ctx.state.forkOf(repo, me);
    if (!fork) {
      const base = text(ctx.body.name) ?? repo.name;
      let name = base;
      for (let i = 1; ctx.state.repo(me, name); i++) name = `${base}-${i}`;
      fork = ctx.state.addRepo(me, name, { fork: repo });
    }
    return ok(repoView(ctx, fork), 202);
  }),
  on(
    'POST',
    path('/merge-upstream'),
    'branches/branches#sync-a-fork-branch-with-the-upstream-repository',
    (ctx, doc, o, r) => {
      const repo = writer(ctx, doc) ?? visible(ctx, doc, o!, r!);
      if (isReply(repo)) return repo;
      if (!ctx.state.permissions(repo, ctx.login).push) return ghError(403, 'Must have push access to repository', doc);
      const branch = text(ctx.body.branch);
      if (!branch) return invalid(doc, { resource: 'Repository', code: 'missing_field', field: 'branch' });
      const upstream = `${repo.parent?.split('/')[0]}:${branch}`;
      const synced = syncBranch(ctx, repo, branch);
      const merged = (message: string) => ok({ message, merge_type: synced, base_branch: upstream });
      return {
        notFork: () => ghError(422, 'This repository is not a fork.', doc),
        noBranch: () => ghError(404, 'Branch not found', doc),
        noUpstream: () => ghError(422, `Upstream branch ${upstream} not found.`, doc),
        diverged: () =>
          ghError(409, `This branch has diverged from the upstream ${upstream} and cannot be fast-forwarded.`, doc),
        none: () => merged(`This branch is not behind the upstream ${upstream}.`),
        'fast-forward': () => merged(`Successfully fetched and fast-forwarded from upstream ${upstream}.`),
      }[synced]();
    },
  ),
  on('GET', path('/branches/(.+)'), 'branches/branches#get-a-branch', (ctx, doc, o, r, branch) => {
    const repo = visible(ctx, doc, o!, r!);
    if (isReply(repo)) return repo;
    const sha = ctx.state.git.branchHead(repo.dir, branch!);
    if (!sha) return ghError(404, 'Branch not found', doc);
    const info = ctx.state.git.commitInfo(repo.dir, sha);
    const commit = info ? commitView(ctx, repo, info) : { sha };
    return ok({ name: branch, commit, protected: repo.protectedBranches.has(branch!) });
  }),
  on('POST', path('/pulls'), 'pulls/pulls#create-a-pull-request', createPull),
  /** `state` (open, closed, all; default open) and `head` (owner:branch) filters. */
  on('GET', path('/pulls'), 'pulls/pulls#get-a-pull-request', (ctx, doc, o, r) => {
    const repo = visible(ctx, doc, o!, r!);
    if (isReply(repo)) return repo;
    const head = ctx.query.get('head')?.toLowerCase();
    const pulls = pullsIn(ctx, repo, ctx.query.get('state') ?? 'open');
    return ok(pulls.filter((p) => !head || headLabel(p).toLowerCase() === head).map((p) => pullView(ctx, repo, p)));
  }),
  on('GET', path('/pulls/(\\d+)'), 'pulls/pulls#get-a-pull-request', (ctx, doc, o, r, n) => {
    const repo = visible(ctx, doc, o!, r!);
    const pull = isReply(repo) ? undefined : ctx.state.pull(repo, Number(n));
    return isReply(repo) ? repo : pull ? ok(pullView(ctx, repo, pull)) : ghError(404, 'Not Found', doc);
  }),
  on('GET', path('/pulls/(\\d+)/commits'), 'pulls/pulls#list-commits-on-a-pull-request', (ctx, doc, o, r, n) => {
    const repo = visible(ctx, doc, o!, r!);
    const pull = isReply(repo) ? undefined : ctx.state.pull(repo, Number(n));
    if (isReply(repo) || !pull) return isReply(repo) ? repo : ghError(404, 'Not Found', doc);
    return ok(ctx.state.pullCommits(repo, pull).map((c) => commitView(ctx, repo, c)));
  }),
];

function createPull(ctx: Ctx, doc: string, o?: string, r?: string): Reply {
  if (!ctx.caller) return ghError(401, 'Requires authentication', doc);
  const repo = visible(ctx, doc, o!, r!);
  const refused = isReply(repo) ? repo : writer(ctx, doc);
  if (refused || isReply(repo)) return refused ?? ghError(404, 'Not Found', doc);
  const missing = (['title', 'head', 'base'] as const).filter((f) => !text(ctx.body[f]));
  if (missing.length > 0)
    return invalid(doc, ...missing.map((field) => ({ resource: 'PullRequest', code: 'missing_field', field })));
  const [title, headSpec, base] = [String(ctx.body.title), String(ctx.body.head), String(ctx.body.base)];
  const colon = headSpec.indexOf(':');
  const headRef = colon >= 0 ? headSpec.slice(colon + 1) : headSpec;
  const head = ctx.state.inNetwork(repo, colon >= 0 ? headSpec.slice(0, colon) : repo.owner);
  const field = (name: string) => invalid(doc, { resource: 'PullRequest', code: 'invalid', field: name });
  const custom = (message: string) => invalid(doc, { resource: 'PullRequest', code: 'custom', message });
  if (!head || !ctx.state.canSee(head, ctx.login)) return field('head');
  const draft = ctx.body.draft === true;
  if (
    draft &&
    !repo.allowDrafts &&
    ctx.state.git.branchHead(head.dir, headRef) &&
    ctx.state.git.branchHead(repo.dir, base)
  )
    return custom('Draft pull requests are not supported in this repository.');
  const body = typeof ctx.body.body === 'string' ? ctx.body.body : null;
  const canModify = head === repo ? false : ctx.body.maintainer_can_modify !== false;
  const fields = { title, body, base, draft, maintainer_can_modify: canModify };
  const pull = openPull(ctx, repo, head, headRef, fields, { sameBase: true, needCommits: true });
  if ('refused' in pull)
    return {
      noHead: () => field('head'),
      noBase: () => field('base'),
      noCommits: () => custom(`No commits between ${base} and ${headSpec}`),
    }[pull.refused]();
  if ('exists' in pull) return custom(`A pull request already exists for ${head.owner}:${headRef}.`);
  const location = `${ctx.urls.apiUrl}/repos/${fullName(repo)}/pulls/${pull.number}`;
  return ok(pullView(ctx, repo, pull), 201, { location });
}

const RATE_LIMIT = { token: 5000, anonymous: 60 };

/** The REST host, with GitHub's rate-limit headers counted per token (or address): nothing is refused past the limit. */
export function githubRest(): RestHost {
  const buckets = new Map<object | string, { limit: number; used: number; reset: number }>();
  const reason = reasonPhrases({ 401: 'Bad credentials', 422: 'Validation Failed' });
  return {
    routes: ROUTES,
    error: (status, message) => ghError(status, message),
    reason,
    credentials: (req) => credentials(req.headers.authorization),
    badCredentials: () => ghError(401, 'Bad credentials'),
    badJson: () => ghError(400, 'Problems parsing JSON'),
    headers(_reply, caller, req) {
      const bucketKey = caller?.token ?? `ip:${req.socket.remoteAddress}`;
      const nowSec = Math.floor(Date.now() / 1000);
      let bucket = buckets.get(bucketKey);
      if (!bucket || bucket.reset <= nowSec) {
        bucket = { limit: caller ? RATE_LIMIT.token : RATE_LIMIT.anonymous, used: 0, reset: nowSec + 3600 };
        buckets.set(bucketKey, bucket);
      }
      if (bucket.used < bucket.limit) bucket.used++;
      return {
        'content-type': 'application/json; charset=utf-8',
        'x-github-media-type': 'github.v3; format=json',
        'x-github-api-version-selected': '2022-11-28',
        'x-github-request-id': randomUUID().toUpperCase(),
        ...(caller ? { 'x-oauth-scopes': caller.token.scopes.join(', ') } : {}),
        'x-ratelimit-limit': String(bucket.limit),
        'x-ratelimit-remaining': String(bucket.limit - bucket.used),
        'x-ratelimit-reset': String(bucket.reset),
        'x-ratelimit-used': String(bucket.used),
        'x-ratelimit-resource': 'core',
      };
    },
  };
}
