import { randomUUID } from 'node:crypto';
import {
  editOwnComment,
  hookRoutes,
  lineCommentsOf,
  openPull,
  pullsIn,
  reactOn,
  syncBranch,
} from '../fake-host/ops.js';
import { type Ctx, type Reply, type RestHost, type Route, credentials, ok, pick } from '../fake-host/rest.js';
import { reasonPhrases, repoRoutes, repoUrls, sharedCommit, sharedRepo, text } from '../fake-host/rest.js';
import { ACCESS, type Comment, type Hook, type Pull, type ReactionState, type RepoState } from '../fake-host/state.js';
import { type Review, type Thread, type UserState, fullName } from '../fake-host/state.js';
import { ciRoutes } from './ci.js';

/**
 * GitHub's REST subset under /api/v3: its routes, its JSON shapes (trimmed to the fields clients
 * read), its error bodies (each naming the route's documentation page) and headers.
 */

const DOCS = 'https://docs.github.com/rest';

/** `{"message", "documentation_url", "status"}` as GitHub answers errors (status as a string, as GitHub does). */
export const ghError = (status: number, message: string, doc = '', more: object = {}): Reply => {
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

/** A user; an App's bot (`slug[bot]`: brackets no login has) is a Bot, an organisation (a group here) an Organization. */
export const userView = ({ urls, state }: Ctx, u: UserState) => ({
  ...{ ...pick(u, 'login', 'id'), url: `${urls.apiUrl}/users/${u.login}`, html_url: `${urls.webUrl}/${u.login}` },
  type: u.login.endsWith('[bot]') ? 'Bot' : state.isGroup(u.login) ? 'Organization' : 'User',
});

/** The caller's own user, with its name and email. */
const selfView = (ctx: Ctx, u: UserState) => ({ ...userView(ctx, u), ...pick(u, 'name', 'email') });

export function repoView(ctx: Ctx, repo: RepoState, withParent = true): Record<string, unknown> {
  const { state } = ctx;
  const parent = withParent && repo.parent ? state.repoByFullName(repo.parent) : undefined;
  return sharedRepo(ctx, repo, userView, {
    ...{ ...pick(repo, 'description', 'visibility'), private: repo.visibility !== 'public' },
    ...{ forks: state.forksOf(repo).length, permissions: state.permissions(repo, ctx.login) },
    ...(parent ? { parent: repoView(ctx, parent, false), source: repoView(ctx, state.networkRoot(repo), false) } : {}),
  });
}

/** `head.sha` is the pull's head now (as of the merge once merged); `commits` those it brings. */
export function pullView(ctx: Ctx, repo: RepoState, pull: Pull) {
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
  permission: 'collaborators/collaborators#get-repository-permissions-for-a-user',
  comments: 'issues/comments',
  reviewComments: 'pulls/comments',
  reviews: 'pulls/reviews',
  reactions: 'reactions/reactions',
};

const by = (ctx: Ctx, login: string) => userView(ctx, ctx.state.ensureUser(login));
const pageOf = (t: Thread) => (t.kind === 'pull' ? 'pull' : 'issues');

/** An issue, or a pull request as the issues API shows one (with `pull_request`): numbers are shared. */
export function issueView(ctx: Ctx, repo: RepoState, t: Thread) {
  const { api, web } = repoUrls(ctx, repo);
  const issue = ctx.state.issue(repo, t.number);
  const pull = ctx.state.pull(repo, t.number);
  const it = issue ?? { ...pull!, body: pull!.body ?? '', labels: [] as string[] };
  const html = `${web}/${pageOf(t)}/${t.number}`;
  const links = {
    url: `${api}/pulls/${t.number}`,
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
  };
  return {
    ...{ ...pick(it, 'id', 'number', 'title', 'body', 'state'), user: by(ctx, it.user) },
    ...{ labels: it.labels.map((name) => ({ name })), url: `${api}/issues/${t.number}`, html_url: html },
    comments: ctx.state.threadComments(repo, t).length,
    ...(t.kind === 'pull' ? { pull_request: links } : {}),
  };
}

/** A conversation comment (an issue comment, a pull request's too). */
export function commentView(ctx: Ctx, repo: RepoState, c: Comment) {
  const { api, web } = repoUrls(ctx, repo);
  return {
    ...{ id: c.id, url: `${api}/issues/comments/${c.id}`, body: c.body, user: by(ctx, c.user) },
    html_url: `${web}/${pageOf(c.thread)}/${c.thread.number}#issuecomment-${c.id}`,
    ...{ issue_url: `${api}/issues/${c.thread.number}`, created_at: c.createdAt, updated_at: c.updatedAt },
    author_association: associationOf(ctx, repo, c.user),
  };
}

/** A comment on a line of a pull's change: `line` on the new side (RIGHT). */
export function reviewCommentView(ctx: Ctx, repo: RepoState, c: Comment) {
  const { api, web } = repoUrls(ctx, repo);
  const { path, line, review } = c.line!;
  return {
    ...{ id: c.id, pull_request_review_id: review ?? null, path, line, original_line: line, side: 'RIGHT' },
    ...{ body: c.body, user: by(ctx, c.user), url: `${api}/pulls/comments/${c.id}` },
    ...{
      html_url: `${web}/pull/${c.thread.number}#discussion_r${c.id}`,
      pull_request_url: `${api}/pulls/${c.thread.number}`,
    },
    ...{ created_at: c.createdAt, updated_at: c.updatedAt, author_association: associationOf(ctx, repo, c.user) },
  };
}

/** A review; `state` in REST's upper case, or the webhook's lower case (`hook`). */
export function reviewView(ctx: Ctx, repo: RepoState, r: Review, hook = false) {
  const { api, web } = repoUrls(ctx, repo);
  return {
    ...{ id: r.id, user: by(ctx, r.user), body: r.body, state: hook ? r.state : r.state.toUpperCase() },
    ...{ html_url: `${web}/pull/${r.pull}#pullrequestreview-${r.id}`, pull_request_url: `${api}/pulls/${r.pull}` },
    submitted_at: r.submittedAt,
    author_association: associationOf(ctx, repo, r.user),
  };
}

const associationOf = (ctx: Ctx, repo: RepoState, login: string) => {
  const level = ctx.state.accessLevel(repo, login);
  return level >= ACCESS.owner ? 'OWNER' : level >= ACCESS.reporter ? 'COLLABORATOR' : 'NONE';
};

/** admin (Owner, Maintainer), write (Developer), read (a reader, or anyone on a public repository), none. */
function permissionOf(ctx: Ctx, repo: RepoState, login: string) {
  const level = ctx.state.accessLevel(repo, login);
  if (level >= ACCESS.maintainer) return 'admin';
  if (level >= ACCESS.developer) return 'write';
  return level >= ACCESS.reporter || repo.visibility === 'public' ? 'read' : 'none';
}

/** `page` and `per_page` (default 30, at most 100) of `items`, with GitHub's Link header to the next and last pages. */
function ghPage<T>(ctx: Ctx, path: string, items: T[], view: (item: T) => unknown): Reply {
  const per = Math.min(100, Math.max(1, Number(ctx.query.get('per_page')) || 30));
  const page = Math.max(1, Number(ctx.query.get('page')) || 1);
  const last = Math.max(1, Math.ceil(items.length / per));
  const at = (n: number) => `<${ctx.urls.apiUrl}${path}?per_page=${per}&page=${n}>`;
  const link = page < last ? { link: `${at(page + 1)}; rel="next", ${at(last)}; rel="last"` } : undefined;
  return ok(items.slice((page - 1) * per, page * per).map(view), 200, link);
}

/** The reactions GitHub takes. */
const CONTENTS = ['+1', '-1', 'laugh', 'confused', 'heart', 'hooray', 'rocket', 'eyes'];

/** POST …/reactions on a thread or a comment (`on`, undefined when it does not exist): 201 new, 200 the caller's own again. */
function react(ctx: Ctx, repo: RepoState, on: ReactionState['on'] | undefined): Reply {
  const content = String(ctx.body.content ?? '');
  if (!CONTENTS.includes(content))
    return invalid(DOC.reactions, { resource: 'Reaction', code: 'invalid', field: 'content' });
  const done = on && reactOn(ctx, repo, on, content);
  if (!done) return ghError(404, 'Not Found', DOC.reactions);
  const { reaction: r, created } = done;
  return ok({ id: r.id, user: by(ctx, r.user), content: r.content, created_at: r.createdAt }, created ? 201 : 200);
}

const conversationOf = (ctx: Ctx, repo: RepoState, n: string) => ctx.state.threadOf(repo, Number(n));
const isLine = (c: Comment) => !!c.line;

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

/** PATCH …/hooks/{id}: `events` replaces the list, `add_events` and `remove_events` change it; `config` and `active` as given. */
function editHook(ctx: Ctx, hook: Hook): Reply | undefined {
  const config = ctx.body.config as Record<string, unknown> | undefined;
  if (config !== undefined) {
    const url = text(config.url);
    if (!url)
      return invalid(DOC.hooks, { resource: 'Hook', code: 'custom', message: 'Config must contain URL for webhooks' });
    hook.url = url;
    hook.secret = text(config.secret) ?? hook.secret;
    for (const k of ['content_type', 'insecure_ssl'] as const)
      if (config[k] !== undefined) hook.config[k] = String(config[k]);
  }
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
  if (Array.isArray(ctx.body.events)) hook.events = list(ctx.body.events);
  hook.events = [...new Set([...hook.events, ...list(ctx.body.add_events)])].filter(
    (e) => !list(ctx.body.remove_events).includes(e),
  );
  if (typeof ctx.body.active === 'boolean') hook.active = ctx.body.active;
  return undefined;
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
  // Public: any user by login, an App's bot (`slug[bot]`, brackets encoded or not) too.
  [
    'GET',
    /^\/users\/([^/]+)$/,
    (ctx, login = '') => {
      const u = ctx.state.user(decodeURIComponent(login));
      return u ? ok(userView(ctx, u)) : ghError(404, 'Not Found', 'users/users#get-a-user');
    },
  ],
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
    edit: { method: 'PATCH', apply: editHook },
  }),
  onPull('/pulls/(\\d+)', { doc: DOC.pull }, (ctx, repo, pull) => ok(pullView(ctx, repo, pull))),
  // GitHub answers only a caller with push access (403 otherwise), about a user it knows (404 otherwise).
  onRepo('GET', '/collaborators/([^/]+)/permission', { doc: DOC.permission }, (ctx, repo, login = '') => {
    if (!ctx.state.permissions(repo, ctx.login).push)
      return ghError(403, 'Must have push access to view repository collaborators.', DOC.permission);
    const user = ctx.state.user(login);
    if (!user) return ghError(404, 'Not Found', DOC.permission);
    const permission = permissionOf(ctx, repo, user.login);
    return ok({ permission, role_name: permission, user: userView(ctx, user) });
  }),
  // A pull request's conversation is its issue's: one number, oldest first.
  onRepo('GET', '/issues/(\\d+)/comments', { doc: DOC.comments }, (ctx, repo, n = '') => {
    const t = conversationOf(ctx, repo, n);
    if (!t) return ghError(404, 'Not Found', DOC.comments);
    const path = `/repos/${fullName(repo)}/issues/${n}/comments`;
    return ghPage(ctx, path, ctx.state.threadComments(repo, t), (c) => commentView(ctx, repo, c));
  }),
  onRepo('POST', '/issues/(\\d+)/comments', { doc: DOC.comments, first: writer }, (ctx, repo, n = '') => {
    const t = conversationOf(ctx, repo, n);
    if (!t) return ghError(404, 'Not Found', DOC.comments);
    const body = text(ctx.body.body);
    if (!body) return invalid(DOC.comments, { resource: 'IssueComment', code: 'missing_field', field: 'body' });
    const c = ctx.state.addComment(repo, { thread: t, user: ctx.login!, body });
    return ok(commentView(ctx, repo, c), 201, { location: `${repoUrls(ctx, repo).api}/issues/comments/${c.id}` });
  }),
  onRepo('PATCH', '/issues/comments/(\\d+)', { doc: DOC.comments, first: writer }, (ctx, repo, id = '') => {
    if (!text(ctx.body.body))
      return invalid(DOC.comments, { resource: 'IssueComment', code: 'missing_field', field: 'body' });
    const c = editOwnComment(ctx, repo, id, (x) => !isLine(x));
    if (c === 'missing') return ghError(404, 'Not Found', DOC.comments);
    if (c === 'notAuthor') return ghError(403, 'You must be the author of this comment to edit it.', DOC.comments);
    return ok(commentView(ctx, repo, c));
  }),
  onPull('/pulls/(\\d+)/comments', { doc: DOC.reviewComments }, (ctx, repo, pull) => {
    const path = `/repos/${fullName(repo)}/pulls/${pull.number}/comments`;
    return ghPage(ctx, path, lineCommentsOf(repo, pull.number), (c) => reviewCommentView(ctx, repo, c));
  }),
  onPull('/pulls/(\\d+)/reviews', { doc: DOC.reviews }, (ctx, repo, pull) => {
    const path = `/repos/${fullName(repo)}/pulls/${pull.number}/reviews`;
    const reviews = repo.reviews.filter((r) => r.pull === pull.number);
    return ghPage(ctx, path, reviews, (r) => reviewView(ctx, repo, r));
  }),
  onRepo('GET', '/pulls/(\\d+)/reviews/(\\d+)/comments', { doc: DOC.reviews }, (ctx, repo, n = '', id = '') => {
    const review = repo.reviews.find((r) => r.id === Number(id) && r.pull === Number(n));
    if (!review) return ghError(404, 'Not Found', DOC.reviews);
    const path = `/repos/${fullName(repo)}/pulls/${n}/reviews/${id}/comments`;
    return ghPage(ctx, path, lineCommentsOf(repo, review.pull, review.id), (c) => reviewCommentView(ctx, repo, c));
  }),
  onRepo('POST', '/issues/(\\d+)/reactions', { doc: DOC.reactions, first: writer }, (ctx, repo, n = '') =>
    react(ctx, repo, conversationOf(ctx, repo, n)),
  ),
  onRepo('POST', '/issues/comments/(\\d+)/reactions', { doc: DOC.reactions, first: writer }, (ctx, repo, id = '') => {
    const c = ctx.state.comment(repo, Number(id));
    return react(ctx, repo, c && !isLine(c) ? { comment: c.id } : undefined);
  }),
  onRepo('POST', '/pulls/comments/(\\d+)/reactions', { doc: DOC.reactions, first: writer }, (ctx, repo, id = '') => {
    const c = ctx.state.comment(repo, Number(id));
    return react(ctx, repo, c && isLine(c) ? { comment: c.id } : undefined);
  }),
  onPull('/pulls/(\\d+)/commits', { doc: DOC.commits }, (ctx, repo, pull) =>
    ok(ctx.state.pullCommits(repo, pull).map((c) => sharedCommit(ctx, repo, c, userView))),
  ),
  ...ciRoutes,
];

/**
 * The REST host, with GitHub's rate-limit headers counted per token (or address): nothing is refused past the limit.
 * `before`: the App routes (app-rest.ts); `now`: the host's clock, sent as `date` (@octokit/auth-app reads it on a JWT's time error).
 */
export function githubRest(before: RestHost['before'], now: () => number): RestHost {
  const buckets = new Map<object | string, { limit: number; used: number }>();
  const reset = String(Math.floor(Date.now() / 1000) + 3600);
  return {
    routes: ROUTES,
    error: (status, message) => ghError(status, message),
    reason: reasonPhrases({ 401: 'Bad credentials', 422: 'Validation Failed' }),
    credentials: (req) => credentials(req.headers.authorization),
    badCredentials: () => ghError(401, 'Bad credentials'),
    badJson: () => ghError(400, 'Problems parsing JSON'),
    before,
    headers(_reply, caller, req) {
      // The window never resets: no test runs for an hour.
      const key = caller?.token ?? `ip:${req.socket.remoteAddress}`;
      const bucket = buckets.get(key) ?? { limit: caller ? 5000 : 60, used: 0 };
      buckets.set(key, { ...bucket, used: Math.min(bucket.limit, bucket.used + 1) });
      const { limit, used } = buckets.get(key)!;
      return {
        'content-type': 'application/json; charset=utf-8',
        date: new Date(now()).toUTCString(),
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
