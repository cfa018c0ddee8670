import { randomUUID } from 'node:crypto';
import { hookRoutes, openPull, pullsIn, syncBranch } from '../fake-host/ops.js';
import { type Ctx, type Reply, type RestHost, type Route, credentials, ok, pick } from '../fake-host/rest.js';
import { reasonPhrases, repoRoutes, repoUrls, sharedCommit, sharedRepo, text } from '../fake-host/rest.js';
import type { Hook, Pull, RepoState, UserState } from '../fake-host/state.js';

/**
 * GitHub's REST subset under /api/v3: its routes, its JSON shapes (trimmed to the fields clients
 * read), its error bodies (each naming the route's documentation page) and headers.
 */

const DOCS = 'https://docs.github.com/rest';

/** `{"message", "documentation_url", "status"}` as GitHub answers errors (status as a string, as GitHub does). */
const ghError = (status: number, message: string, doc = '', more: object = {}): Reply => {
  const documentation = doc ? `${DOCS}/${doc}` : DOCS;
  return { status, body: { message, ...more, documentation_url: documentation, status: String(status) } };
};
type Field = { resource: string; code: string; field?: string; message?: string };
const invalid = (doc: string, ...errors: Field[]): Reply => ghError(422, 'Validation Failed', doc, { errors });

/** A write needs a caller (401) whose token may write (403). */
const needsCaller = (ctx: Ctx, doc: string) => (ctx.caller ? undefined : ghError(401, 'Requires authentication', doc));
const writer = (ctx: Ctx, doc: string) =>
  needsCaller(ctx, doc) ??
  (ctx.caller?.token.readOnly ? ghError(403, 'Resource not accessible by personal access token', doc) : undefined);

const userView = ({ urls }: Ctx, u: UserState) => ({
  ...{ ...pick(u, 'login', 'id'), url: `${urls.apiUrl}/users/${u.login}`, html_url: `${urls.webUrl}/${u.login}` },
  type: 'User',
});

/** The caller's own user, with its name and email. */
const selfView = (ctx: Ctx, u: UserState) => ({ ...userView(ctx, u), ...pick(u, 'name', 'email') });

function repoView(ctx: Ctx, repo: RepoState, withParent = true): Record<string, unknown> {
  const { state } = ctx;
  const parent = withParent && repo.parent ? state.repoByFullName(repo.parent) : undefined;
  return sharedRepo(ctx, repo, userView, {
    ...{ ...pick(repo, 'description', 'visibility'), private: repo.visibility !== 'public' },
    ...{ forks: state.forksOf(repo).length, permissions: state.permissions(repo, ctx.login) },
    ...(parent ? { parent: repoView(ctx, parent, false), source: repoView(ctx, state.networkRoot(repo), false) } : {}),
  });
}

/** `head.sha` is the pull's head now (as of the merge once merged); `commits` those it brings. */
function pullView(ctx: Ctx, repo: RepoState, pull: Pull) {
  const { state } = ctx;
  const { api, web } = repoUrls(ctx, repo);
  const side = (owner: string, ref: string, sha: string | null, on: RepoState | undefined) => ({
    ...{ label: `${state.ensureUser(owner).login}:${ref}`, ref, sha, user: userView(ctx, state.ensureUser(owner)) },
    repo: on ? repoView(ctx, on, false) : null,
  });
  const baseSha = pull.merged_base_sha ?? state.git.branchHead(repo.dir, pull.base) ?? null;
  return {
    ...pick(pull, 'id', 'number', 'state', 'title', 'body', 'merged_at', 'merge_commit_sha', 'draft', 'merged'),
    maintainer_can_modify: pull.maintainer_can_modify,
    ...{ url: `${api}/pulls/${pull.number}`, html_url: `${web}/pull/${pull.number}` },
    user: userView(ctx, state.ensureUser(pull.user)),
    head: side(pull.head.owner, pull.head.ref, state.syncHead(repo, pull) ?? null, state.headRepo(pull)),
    base: side(repo.owner, pull.base, baseSha, repo),
    commits: state.pullCommits(repo, pull).length,
  };
}

const find = (ctx: Ctx, owner = '', name = '') => ctx.state.repo(owner, name);
const { onRepo, onPull } = repoRoutes('/repos/([^/]+)/([^/]+)', find, (_, doc) => ghError(404, 'Not Found', doc));

const DOC = {
  user: 'users/users#get-the-authenticated-user',
  createRepo: 'repos/repos#create-a-repository-for-the-authenticated-user',
  repo: 'repos/repos#get-a-repository',
  fork: 'repos/forks#create-a-fork',
  sync: 'branches/branches#sync-a-fork-branch-with-the-upstream-repository',
  branch: 'branches/branches#get-a-branch',
  createPull: 'pulls/pulls#create-a-pull-request',
  pull: 'pulls/pulls#get-a-pull-request',
  commits: 'pulls/pulls#list-commits-on-a-pull-request',
  hooks: 'repos/webhooks',
};

/** `config` without the secret, as this fake never shows it (GitHub masks it). */
const hookView = (ctx: Ctx, repo: RepoState, h: Hook) => ({
  ...{ type: 'Repository', id: h.id, name: 'web', ...pick(h, 'active', 'events') },
  ...{ config: { url: h.url, ...h.config }, url: `${repoUrls(ctx, repo).api}/hooks/${h.id}` },
});

function createHook(ctx: Ctx, repo: RepoState): Reply {
  const config = (ctx.body.config ?? {}) as Record<string, unknown>;
  const url = text(config.url);
  if (!url)
    return invalid(DOC.hooks, { resource: 'Hook', code: 'custom', message: 'Config must contain URL for webhooks' });
  const events = Array.isArray(ctx.body.events) ? ctx.body.events.map(String) : ['push'];
  const own = { content_type: text(config.content_type) ?? 'form', insecure_ssl: String(config.insecure_ssl ?? '0') };
  const hook = { url, secret: text(config.secret) ?? '', events, active: ctx.body.active !== false, config: own };
  return ok(hookView(ctx, repo, ctx.state.addHook(repo, hook)), 201);
}

function createRepo(ctx: Ctx): Reply {
  const name = text(ctx.body.name);
  if (!name) return invalid(DOC.createRepo, { resource: 'Repository', code: 'missing_field', field: 'name' });
  const owner = ctx.login!;
  const message = 'name already exists on this account';
  if (ctx.state.repo(owner, name))
    return invalid(DOC.createRepo, { resource: 'Repository', code: 'custom', field: 'name', message });
  const description = typeof ctx.body.description === 'string' ? ctx.body.description : null;
  const visibility = ctx.body.private === true || ctx.body.visibility === 'private' ? 'private' : 'public';
  const repo = ctx.state.addRepo(owner, name, { visibility, description });
  if (ctx.body.auto_init === true) {
    const files = { 'README.md': `# ${name}\n${description ? `\n${description}\n` : ''}` };
    ctx.state.commit(repo, { branch: repo.defaultBranch, files, message: 'Initial commit' });
  }
  return ok(repoView(ctx, repo), 201);
}

/** The caller's fork (an existing one is returned again; a taken name gets -1, -2, … like GitHub). */
function createFork(ctx: Ctx, repo: RepoState): Reply {
  if (ctx.body.organization !== undefined)
    return invalid(DOC.fork, { resource: 'Fork', code: 'invalid', field: 'organization' });
  const me = ctx.login!;
  const base = text(ctx.body.name) ?? repo.name;
  let name = base;
  for (let i = 1; ctx.state.repo(me, name); i++) name = `${base}-${i}`;
  return ok(repoView(ctx, ctx.state.forkOf(repo, me) ?? ctx.state.addRepo(me, name, { fork: repo })), 202);
}

function mergeUpstream(ctx: Ctx, repo: RepoState): Reply {
  const doc = DOC.sync;
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
}

function createPull(ctx: Ctx, repo: RepoState): Reply {
  const doc = DOC.createPull;
  const missing = (['title', 'head', 'base'] as const).filter((f) => !text(ctx.body[f]));
  if (missing.length > 0)
    return invalid(doc, ...missing.map((field) => ({ resource: 'PullRequest', code: 'missing_field', field })));
  const [title, spec, base] = [String(ctx.body.title), String(ctx.body.head), String(ctx.body.base)];
  const colon = spec.indexOf(':');
  const [owner, ref] = colon >= 0 ? [spec.slice(0, colon), spec.slice(colon + 1)] : [repo.owner, spec];
  const head = ctx.state.inNetwork(repo, owner);
  const field = (name: string) => invalid(doc, { resource: 'PullRequest', code: 'invalid', field: name });
  const custom = (message: string) => invalid(doc, { resource: 'PullRequest', code: 'custom', message });
  if (!head || !ctx.state.canSee(head, ctx.login)) return field('head');
  const draft = ctx.body.draft === true;
  const git = ctx.state.git;
  if (draft && !repo.allowDrafts && git.branchHead(head.dir, ref) && git.branchHead(repo.dir, base))
    return custom('Draft pull requests are not supported in this repository.');
  const body = typeof ctx.body.body === 'string' ? ctx.body.body : null;
  const canModify = head !== repo && ctx.body.maintainer_can_modify !== false;
  const pull = openPull(ctx, repo, { title, body, base, draft, maintainer_can_modify: canModify, from: head, ref });
  if ('exists' in pull) return custom(`A pull request already exists for ${head.owner}:${ref}.`);
  if ('refused' in pull)
    return pull.refused === 'noCommits'
      ? custom(`No commits between ${base} and ${spec}`)
      : field(pull.refused === 'noHead' ? 'head' : 'base');
  return ok(pullView(ctx, repo, pull), 201, { location: `${repoUrls(ctx, repo).api}/pulls/${pull.number}` });
}

const ROUTES: Route[] = [
  ['GET', /^\/user$/, (ctx) => needsCaller(ctx, DOC.user) ?? ok(selfView(ctx, ctx.caller!.user))],
  ['POST', /^\/user\/repos$/, (ctx) => writer(ctx, DOC.createRepo) ?? createRepo(ctx)],
  onRepo('GET', '', { doc: DOC.repo }, (ctx, repo) => ok(repoView(ctx, repo))),
  onRepo('POST', '/forks', { doc: DOC.fork, first: writer }, createFork),
  onRepo('POST', '/merge-upstream', { doc: DOC.sync, first: writer }, mergeUpstream),
  // `branch` may hold slashes, encoded or not.
  onRepo('GET', '/branches/(.+)', { doc: DOC.branch }, (ctx, repo, branch = '') => {
    const sha = ctx.state.git.branchHead(repo.dir, branch);
    if (!sha) return ghError(404, 'Branch not found', DOC.branch);
    const commit = sharedCommit(ctx, repo, ctx.state.git.log(repo.dir, undefined, sha, true)[0]!, userView);
    return ok({ name: branch, commit, protected: repo.protectedBranches.has(branch) });
  }),
  onRepo('POST', '/pulls', { doc: DOC.createPull, first: needsCaller, after: writer }, createPull),
  // `state` (open, closed, all; default open) and `head` (owner:branch) filters.
  onRepo('GET', '/pulls', { doc: DOC.pull }, (ctx, repo) => {
    const head = ctx.query.get('head')?.toLowerCase();
    const pulls = pullsIn(repo, ctx.query.get('state') ?? 'open');
    const shown = pulls.filter((p) => !head || `${p.head.owner}:${p.head.ref}`.toLowerCase() === head);
    return ok(shown.map((p) => pullView(ctx, repo, p)));
  }),
  // A repository's hooks are its admins': anyone else is told there is nothing there, as GitHub does.
  ...hookRoutes(onRepo, {
    writes: { doc: DOC.hooks, first: writer },
    refused: () => ghError(404, 'Not Found', DOC.hooks),
    create: createHook,
    view: hookView,
  }),
  onPull('/pulls/(\\d+)', { doc: DOC.pull }, (ctx, repo, pull) => ok(pullView(ctx, repo, pull))),
  onPull('/pulls/(\\d+)/commits', { doc: DOC.commits }, (ctx, repo, pull) =>
    ok(ctx.state.pullCommits(repo, pull).map((c) => sharedCommit(ctx, repo, c, userView))),
  ),
];

/** The REST host, with GitHub's rate-limit headers counted per token (or address): nothing is refused past the limit. */
export function githubRest(): RestHost {
  const buckets = new Map<object | string, { limit: number; used: number }>();
  const reset = String(Math.floor(Date.now() / 1000) + 3600);
  return {
    routes: ROUTES,
    error: (status, message) => ghError(status, message),
    reason: reasonPhrases({ 401: 'Bad credentials', 422: 'Validation Failed' }),
    credentials: (req) => credentials(req.headers.authorization),
    badCredentials: () => ghError(401, 'Bad credentials'),
    badJson: () => ghError(400, 'Problems parsing JSON'),
    headers(_reply, caller, req) {
      // The window never resets: no test runs for an hour.
      const key = caller?.token ?? `ip:${req.socket.remoteAddress}`;
      const bucket = buckets.get(key) ?? { limit: caller ? 5000 : 60, used: 0 };
      buckets.set(key, { ...bucket, used: Math.min(bucket.limit, bucket.used + 1) });
      const { limit, used } = buckets.get(key)!;
      return {
        'content-type': 'application/json; charset=utf-8',
        'x-github-media-type': 'github.v3; format=json',
        'x-github-api-version-selected': '2022-11-28',
        'x-github-request-id': randomUUID().toUpperCase(),
        ...(caller ? { 'x-oauth-scopes': caller.token.scopes.join(', ') } : {}),
        'x-ratelimit-limit': String(limit),
        'x-ratelimit-remaining': String(limit - used),
        'x-ratelimit-reset': reset,
        'x-ratelimit-used': String(used),
        'x-ratelimit-resource': 'core',
      };
    },
  };
}
