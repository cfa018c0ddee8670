import { randomUUID } from 'node:crypto';
import type { CommitInfo } from '../fake-host/bare.js';
import { editOwnComment, hookRoutes, openPull, pullsIn, reactOn, visibleForks } from '../fake-host/ops.js';
import { type Ctx, type Reply, type RestHost, type Route, ok, pick } from '../fake-host/rest.js';
import { reasonPhrases, repoRoutes, text } from '../fake-host/rest.js';
import { groupRoutes } from './group-hooks.js';
import { ciRoutes } from './ci.js';
import { ACCESS, type Hook, type Pull, type RepoState, type UserState, type Visibility } from '../fake-host/state.js';
import { type Comment, type Thread, fullName, sameThread } from '../fake-host/state.js';

/**
 * GitLab's REST v4 subset under /api/v4: `:id` is the URL-encoded path_with_namespace or the
 * numeric id; errors are `{"message": "404 Project Not Found"}`; JSON shapes trimmed to the fields
 * a client reads.
 */

const reason = reasonPhrases({ 400: 'Bad request' }, () => 'Error');
const glError = (status: number, words = reason(status)): Reply => ({
  status,
  body: { message: `${status} ${words}` },
});
const messages = (status: number, ...message: string[]): Reply => ({ status, body: { message } });
const TAKEN = ['has already been taken'];
const taken = (status: number): Reply => ({ status, body: { message: { name: TAKEN, path: TAKEN } } });
const EXPIRED = 'Token is expired. You can either do re-authorization or token refresh.';

/** `Draft:`, `[Draft]` or `(Draft)` at the start of a title marks a draft merge request. */
const DRAFT_TITLE = /^\s*(\[draft\]|\(draft\)|draft:)\s*/i;

export const userView = ({ urls }: Ctx, u: UserState) => ({
  ...pick(u, 'id', 'name', 'email'),
  ...{ username: u.login, state: 'active', locked: false, web_url: `${urls.webUrl}/${u.login}` },
});

/** A project as the caller sees it: `permissions` only for a signed-in caller, as GitLab does. */
function projectView(ctx: Ctx, repo: RepoState) {
  const { state, urls, login } = ctx;
  const parent = repo.parent ? state.repoByFullName(repo.parent) : undefined;
  const group = state.isGroup(repo.owner) ? state.ensureGroup(repo.owner) : undefined;
  const level = state.accessLevel(repo, login);
  const projectLevel = repo.members.get(login?.toLowerCase() ?? '') ?? (group ? 0 : level);
  const access = (n: number) => (n ? { access_level: n, notification_level: 3 } : null);
  const nsPath = repo.owner.split('/').pop();
  const links = (full: string) => ({ path_with_namespace: full, web_url: `${urls.webUrl}/${full}` });
  const forked = parent && { ...pick(parent, 'id'), path: parent.name, ...links(fullName(parent)) };
  const permissions = login && { project_access: access(projectLevel), group_access: access(group ? level : 0) };
  return {
    ...pick(repo, 'id', 'description', 'name', 'visibility'),
    path: repo.name,
    ...links(fullName(repo)),
    default_branch: repo.defaultBranch,
    http_url_to_repo: `${urls.webUrl}/${fullName(repo)}.git`,
    namespace: {
      id: group?.id ?? state.user(repo.owner)?.id ?? 0,
      name: nsPath,
      path: nsPath,
      kind: group ? 'group' : 'user',
      full_path: repo.owner,
      web_url: `${urls.webUrl}/${group ? 'groups/' : ''}${repo.owner}`,
    },
    ...(forked ? { forked_from_project: forked } : {}),
    ...(permissions ? { permissions } : {}),
  };
}

const mrState = (p: Pull) => (p.merged ? 'merged' : p.state === 'open' ? 'opened' : 'closed');

/** A merge request: state opened/closed/merged, `sha` its head, `draft` from the title. */
export function mergeRequestView(ctx: Ctx, repo: RepoState, pull: Pull) {
  const author = ctx.state.user(pull.user);
  return {
    ...pick(pull, 'id', 'title', 'merged_at', 'draft'),
    iid: pull.number,
    description: pull.body,
    state: mrState(pull),
    source_branch: pull.head.ref,
    source_project_id: ctx.state.headRepo(pull)?.id,
    target_project_id: repo.id,
    author: author ? userView(ctx, author) : null,
    work_in_progress: pull.draft,
    sha: ctx.state.syncHead(repo, pull) ?? null,
    web_url: `${ctx.urls.webUrl}/${fullName(repo)}/-/merge_requests/${pull.number}`,
  };
}

const commitView = (ctx: Ctx, repo: RepoState, c: CommitInfo) => ({
  ...{ id: c.sha, title: c.message.split('\n')[0] ?? '', message: c.message },
  ...{ author_email: c.author.email, committer_email: c.committer.email },
  web_url: `${ctx.urls.webUrl}/${fullName(repo)}/-/commit/${c.sha}`,
});

/** `:id` is the numeric id or the (encoded) path_with_namespace; a missing or hidden project is 404 `Project Not Found`. */
const { onRepo: project, onPull: mergeRequest } = repoRoutes(
  '/projects/([^/]+)',
  (ctx, id) => (/^\d+$/.test(id!) ? ctx.state.repoById(Number(id)) : ctx.state.repoByFullName(id!)),
  (what) => glError(404, what === 'repo' ? 'Project Not Found' : 'Not found'),
);
/** Writes are 401 for an anonymous caller, before the project is looked up. */
const signedIn = (ctx: Ctx) => (ctx.login ? undefined : glError(401));

/** In the caller's namespace, empty (no README). */
function createProject(ctx: Ctx): Reply {
  const [name, login] = [text(ctx.body.name), ctx.login];
  const path = text(ctx.body.path) ?? name;
  if (!login) return glError(401);
  if (!name || !path) return { status: 400, body: { error: 'name is missing, path is missing' } };
  if (ctx.state.repo(login, path)) return taken(400);
  const visibility: Visibility =
    ctx.body.visibility === 'public' || ctx.body.visibility === 'internal' ? ctx.body.visibility : 'private';
  const description = text(ctx.body.description) ?? null;
  return ok(projectView(ctx, ctx.state.addRepo(login, path, { visibility, description })), 201);
}

/** On the source project; `target_project_id` names the target (a fork's parent). Developer on the source needed. */
function createMergeRequest(ctx: Ctx, source: RepoState): Reply {
  if (!ctx.state.permissions(source, ctx.login).push) return glError(403);
  const { source_branch: branch, target_branch: base, title, target_project_id: targetId } = ctx.body;
  if (typeof branch !== 'string' || typeof base !== 'string' || typeof title !== 'string')
    return { status: 400, body: { error: 'source_branch is missing, target_branch is missing, title is missing' } };
  const target = targetId === undefined ? source : ctx.state.repoById(Number(targetId));
  if (!target || !ctx.state.canSee(target, ctx.login)) return glError(404, 'Project Not Found');
  if (ctx.state.networkRoot(source) !== ctx.state.networkRoot(target))
    return messages(400, 'Source project is not a fork of the target project');
  const [body, draft] = [text(ctx.body.description) ?? null, DRAFT_TITLE.test(title)];
  const ask = { title, body, base, draft, maintainer_can_modify: true, from: source, ref: branch };
  const pull = openPull(ctx, target, { ...ask, sameBase: false, needCommits: false });
  if ('exists' in pull)
    return messages(409, `Another open merge request already exists for this source branch: !${pull.exists.number}`);
  const missing = (why: string) => (why === 'noHead' ? `Source branch "${branch}"` : `Target branch "${base}"`);
  if ('refused' in pull) return messages(422, `${missing(pull.refused)} does not exist`);
  return ok(mergeRequestView(ctx, target, pull), 201);
}

/** The switches of a project hook the fake knows; the hook's `events` are those on. */
const SWITCHES = ['push_events', 'issues_events', 'note_events', 'merge_requests_events', 'pipeline_events'];

/** Every switch on or off, and never the token. */
const hookView = (_: Ctx, repo: RepoState, h: Hook) => ({
  ...{ id: h.id, url: h.url, project_id: repo.id, ...h.config },
  ...Object.fromEntries(SWITCHES.map((s) => [s, h.events.includes(s)])),
});

/** Push events are on unless turned off, every other switch off unless turned on, as GitLab has them. */
function createHook(ctx: Ctx, repo: RepoState): Reply {
  const url = text(ctx.body.url);
  if (!url) return { status: 400, body: { error: 'url is missing' } };
  const events = SWITCHES.filter((s) => (ctx.body[s] ?? s === 'push_events') === true);
  const config = { enable_ssl_verification: ctx.body.enable_ssl_verification !== false };
  const hook = ctx.state.addHook(repo, { url, secret: text(ctx.body.token) ?? '', events, active: true, config });
  return ok(hookView(ctx, repo, hook), 201);
}

/** PUT …/hooks/:hook_id: `url` as on creation, the switches and the token given change, the others stay. */
function editHook(ctx: Ctx, hook: Hook): Reply | undefined {
  const url = text(ctx.body.url);
  if (!url) return { status: 400, body: { error: 'url is missing' } };
  hook.url = url;
  hook.secret = text(ctx.body.token) ?? hook.secret;
  hook.events = SWITCHES.filter((s) => (typeof ctx.body[s] === 'boolean' ? ctx.body[s] : hook.events.includes(s)));
  if (typeof ctx.body.enable_ssl_verification === 'boolean')
    hook.config.enable_ssl_verification = ctx.body.enable_ssl_verification;
  return undefined;
}

/** An issue's or a merge request's web page: GitLab numbers each apart (iid), under /-/issues and /-/merge_requests. */
export const threadUrl = (ctx: Ctx, repo: RepoState, t: Thread) =>
  `${ctx.urls.webUrl}/${fullName(repo)}/-/${t.kind === 'pull' ? 'merge_requests' : 'issues'}/${t.number}`;

/** A note: a comment on an issue or a merge request, a `DiffNote` on a line of its change (position on the new side). */
export function noteView(ctx: Ctx, repo: RepoState, c: Comment) {
  const author = ctx.state.ensureUser(c.user);
  const at = c.thread.kind === 'pull' ? ctx.state.pull(repo, c.thread.number) : ctx.state.issue(repo, c.thread.number);
  const head =
    c.line && c.thread.kind === 'pull' ? ctx.state.syncHead(repo, ctx.state.pull(repo, c.thread.number)!) : null;
  const position = c.line && {
    ...{ base_sha: null, start_sha: null, head_sha: head ?? null, position_type: 'text' },
    ...{ old_path: c.line.path, new_path: c.line.path, old_line: null, new_line: c.line.line },
  };
  return {
    ...{ id: c.id, type: c.line ? 'DiffNote' : null, body: c.body, attachment: null, author: userView(ctx, author) },
    ...{ created_at: c.createdAt, updated_at: c.updatedAt, system: false, noteable_id: at?.id ?? null },
    ...{ noteable_type: c.thread.kind === 'pull' ? 'MergeRequest' : 'Issue', noteable_iid: c.thread.number },
    ...{ project_id: repo.id, resolvable: !!c.line, confidential: false, internal: false },
    ...(position ? { position } : {}),
  };
}

/** `sort` asc or desc (GitLab's default), by creation. */
function notesOf(ctx: Ctx, repo: RepoState, t: Thread): Reply {
  if (!ctx.state.hasThread(repo, t)) return glError(404, 'Not found');
  const notes = repo.comments.filter((c) => sameThread(c.thread, t)).map((c) => noteView(ctx, repo, c));
  return ok(ctx.query.get('sort') === 'asc' ? notes : notes.reverse());
}

function addNote(ctx: Ctx, repo: RepoState, t: Thread): Reply {
  if (!ctx.state.hasThread(repo, t)) return glError(404, 'Not found');
  const body = text(ctx.body.body);
  if (!body) return { status: 400, body: { error: 'body is missing' } };
  return ok(noteView(ctx, repo, ctx.state.addComment(repo, { thread: t, user: ctx.login!, body })), 201);
}

/** Only its author edits a note here (GitLab lets a project's Maintainers too). */
function editNote(ctx: Ctx, repo: RepoState, t: Thread, id: string): Reply {
  if (!text(ctx.body.body)) return { status: 400, body: { error: 'body is missing' } };
  const note = editOwnComment(ctx, repo, id, (c) => sameThread(c.thread, t));
  if (note === 'missing') return glError(404, 'Note Not Found');
  return note === 'notAuthor' ? glError(403) : ok(noteView(ctx, repo, note));
}

/** An award emoji (a reaction) on a thread or one of its notes; the caller's own again is GitLab's 404 "already been taken". */
function award(ctx: Ctx, repo: RepoState, t: Thread, noteId?: string): Reply {
  const name = text(ctx.body.name);
  if (!name) return { status: 400, body: { error: 'name is missing' } };
  const note = noteId === undefined ? undefined : ctx.state.comment(repo, Number(noteId));
  if (noteId !== undefined && !(note && sameThread(note.thread, t))) return glError(404, 'Note Not Found');
  const done = reactOn(ctx, repo, note ? { comment: note.id } : t, name);
  if (!done) return glError(404, 'Not found');
  if (!done.created) return glError(404, 'Award Emoji Name has already been taken Not Found');
  const { reaction: r } = done;
  const awardable = note
    ? { awardable_id: note.id, awardable_type: 'Note' }
    : { awardable_type: t.kind === 'pull' ? 'MergeRequest' : 'Issue' };
  return ok(
    {
      id: r.id,
      name: r.content,
      user: userView(ctx, ctx.state.ensureUser(r.user)),
      created_at: r.createdAt,
      ...awardable,
    },
    201,
  );
}

/** The notes and award emoji routes of issues (`issues`) or merge requests (`merge_requests`). */
const threadRoutes = (kind: Thread['kind'], path: string): Route[] => {
  const at = (n: string): Thread => ({ kind, number: Number(n) });
  return [
    project('GET', `/${path}/(\\d+)/notes`, (ctx, repo, n = '') => notesOf(ctx, repo, at(n))),
    project('POST', `/${path}/(\\d+)/notes`, { first: signedIn }, (ctx, repo, n = '') => addNote(ctx, repo, at(n))),
    project('PUT', `/${path}/(\\d+)/notes/(\\d+)`, { first: signedIn }, (ctx, repo, n = '', id = '') =>
      editNote(ctx, repo, at(n), id),
    ),
    project('POST', `/${path}/(\\d+)/award_emoji`, { first: signedIn }, (ctx, repo, n = '') => award(ctx, repo, at(n))),
    project('POST', `/${path}/(\\d+)/notes/(\\d+)/award_emoji`, { first: signedIn }, (ctx, repo, n = '', id = '') =>
      award(ctx, repo, at(n), id),
    ),
  ];
};

const ROUTES: Route[] = [
  ...groupRoutes,
  // Users by exact username (what a client looks one up with): an empty list when there is none.
  [
    'GET',
    /^\/users$/,
    (ctx) => {
      const u = ctx.state.user(ctx.query.get('username') ?? '');
      return ok(u ? [userView(ctx, u)] : []);
    },
  ],
  // A member, directly or through a group above the project (the namespace's user is its Owner); else 404.
  project('GET', '/members/all/(\\d+)', (ctx, repo, id = '') => {
    const user = [...ctx.state.users.values()].find((u) => u.id === Number(id));
    const level = user ? ctx.state.accessLevel(repo, user.login) : 0;
    return user && level ? ok({ ...userView(ctx, user), access_level: level }) : glError(404, 'Not found');
  }),
  ...threadRoutes('issue', 'issues'),
  ...threadRoutes('pull', 'merge_requests'),
  ['GET', /^\/user$/, (ctx) => (ctx.caller ? ok(userView(ctx, ctx.caller.user)) : glError(401))],
  ['POST', /^\/projects$/, createProject],
  project('GET', '', (ctx, repo) => ok(projectView(ctx, repo))),
  project('GET', '/forks', (ctx, repo) => {
    const mine = ctx.query.get('owned') === 'true';
    const forks = visibleForks(ctx, repo).filter((r) => !mine || r.owner.toLowerCase() === ctx.login?.toLowerCase());
    return ok(forks.map((r) => projectView(ctx, r)));
  }),
  // Made at once (GitLab imports in the background); already forked or the name taken: 409.
  project('POST', '/fork', { first: signedIn }, (ctx, repo) => {
    const me = ctx.login!;
    if (repo.visibility !== 'public' && ctx.state.accessLevel(repo, me) < ACCESS.reporter) return glError(403);
    if (ctx.state.forkOf(repo, me) || ctx.state.repo(me, repo.name)) return taken(409);
    return ok(projectView(ctx, ctx.state.addRepo(me, repo.name, { fork: repo })), 201);
  }),
  project('POST', '/merge_requests', { first: signedIn }, createMergeRequest),
  // Newest first.
  project('GET', '/merge_requests', (ctx, repo) => {
    const branch = ctx.query.get('source_branch');
    const fromBranch = (p: Pull) => branch === null || p.head.ref === branch;
    const found = pullsIn(repo, ctx.query.get('state') ?? 'all', mrState).filter(fromBranch);
    return ok(found.reverse().map((p) => mergeRequestView(ctx, repo, p)));
  }),
  // A project's hooks are its Maintainers' (and Owners'): anyone else who sees it is refused, 403.
  ...hookRoutes(project, {
    writes: { first: signedIn },
    refused: () => glError(403),
    gone: () => glError(404, 'Not found'),
    create: createHook,
    view: hookView,
    edit: { method: 'PUT', apply: editHook },
  }),
  ...ciRoutes,
  mergeRequest('/merge_requests/(\\d+)', {}, (ctx, repo, pull) => ok(mergeRequestView(ctx, repo, pull))),
  // Newest first, as GitLab lists them.
  mergeRequest('/merge_requests/(\\d+)/commits', {}, (ctx, repo, pull) =>
    ok([...ctx.state.pullCommits(repo, pull)].reverse().map((c) => commitView(ctx, repo, c))),
  ),
];

export const gitlabRest = (): RestHost => ({
  routes: ROUTES,
  error: glError,
  reason,
  // `Authorization: Bearer T` (OAuth or personal) or `PRIVATE-TOKEN: T`.
  credentials(req) {
    const priv = req.headers['private-token'];
    if (typeof priv === 'string') return { present: true, token: priv };
    const auth = req.headers.authorization;
    return { present: auth !== undefined, token: auth && /^bearer\s+(\S+)\s*$/i.exec(auth)?.[1] };
  },
  badCredentials: () => glError(401),
  expired: { status: 401, body: { error: 'invalid_token', error_description: EXPIRED } },
  badJson: () => glError(400, 'Bad request'),
  headers: (reply) => ({
    'content-type': 'application/json',
    'x-request-id': randomUUID().replace(/-/g, '').slice(0, 26).toUpperCase(),
    'x-gitlab-meta': '{}',
    ...(Array.isArray(reply.body) && {
      ...{ 'x-page': '1', 'x-per-page': '100', 'x-total': String(reply.body.length) },
      ...{ 'x-total-pages': '1', 'x-next-page': '', 'x-prev-page': '' },
    }),
  }),
});
