import type { CommitInfo } from '../fake-host/bare.js';
import { editOwnComment, hookRoutes, lineCommentsOf, openPull, pullsIn, reactOn } from '../fake-host/ops.js';
import { syncBranch, visibleForks } from '../fake-host/ops.js';
import { type Ctx, type Reply, type RestHost, type Route, credentials, ok, pick } from '../fake-host/rest.js';
import { reasonPhrases, repoRoutes, repoUrls, sharedCommit, sharedRepo, text } from '../fake-host/rest.js';
import type { Urls } from '../fake-host/server.js';
import { ACCESS, type Comment, type GroupState, type Hook, type Pull } from '../fake-host/state.js';
import type { ReactionState, RepoState } from '../fake-host/state.js';
import { type Review, type Thread, type UserState, fullName } from '../fake-host/state.js';
import { ciRoutes } from './ci.js';

/**
 * Gitea's REST subset under /api/v1 (modules/structs shapes, most of their fields). Errors are
 * `{"message", "url"}` (url: the instance's swagger page), validation failures with `errors`
 * too, as its APIError writes them.
 */

/** Gitea syncs a fork at POST …/merge-upstream; Forgejo at POST …/sync_fork[/{branch}] and has no merge-upstream. */
export type Flavour = 'gitea' | 'forgejo';

/** Gitea's work-in-progress prefixes (WORK_IN_PROGRESS_PREFIXES default): such a pull is a draft. */
const isWip = (title: string): boolean => /^\s*(?:WIP:|\[WIP\])/i.test(title);

export const userView = ({ urls }: Ctx, u: UserState) => ({
  ...{ ...pick(u, 'id', 'login', 'email'), full_name: u.name === u.login ? '' : u.name },
  ...{ html_url: `${urls.webUrl}/${u.login}`, description: '', visibility: 'public', username: u.login },
});

export function repoView(ctx: Ctx, repo: RepoState, withParent = true, caller = ctx.login): Record<string, unknown> {
  const { state } = ctx;
  const { admin, push, pull } = state.permissions(repo, caller);
  const parent = withParent && repo.parent ? state.repoByFullName(repo.parent) : undefined;
  return sharedRepo(ctx, repo, userView, {
    ...{ description: repo.description ?? '', size: 0, link: '', empty: state.git.branches(repo.dir).length === 0 },
    // Gitea has no internal repository: one every signed-in user reads is a `limited` owner's, told
    // only by `owner.visibility` (`internal` marks a private owner's, which the fake has none of).
    ...{ private: repo.visibility === 'private', internal: false },
    ...(repo.visibility === 'internal'
      ? { owner: { ...userView(ctx, state.ensureUser(repo.owner)), visibility: 'limited' } }
      : {}),
    ...{ parent: parent ? repoView(ctx, parent, false) : null, permissions: { admin, push, pull } },
  });
}

export function pullView(ctx: Ctx, repo: RepoState, pull: Pull) {
  const { state } = ctx;
  const at = `${repoUrls(ctx, repo).web}/pulls/${pull.number}`;
  const side = (on: RepoState | undefined, ref: string, sha: string | undefined) => ({
    ...{ label: ref, ref, sha: sha ?? '' },
    repo: on ? repoView(ctx, on, false, undefined) : null,
  });
  return {
    ...pick(pull, 'id', 'number', 'title', 'state', 'merged', 'merged_at'),
    ...{ url: at, html_url: at, body: pull.body ?? '', draft: isWip(pull.title) },
    user: userView(ctx, state.ensureUser(pull.user)),
    base: side(repo, pull.base, pull.merged_base_sha ?? state.git.branchHead(repo.dir, pull.base)),
    head: side(state.headRepo(pull), pull.head.ref, state.syncHead(repo, pull)),
  };
}

const by = (ctx: Ctx, login: string) => userView(ctx, ctx.state.ensureUser(login));
const pageOf = (t: Thread) => (t.kind === 'pull' ? 'pulls' : 'issues');

/** An issue, or a pull request as the issues API shows one (`pull_request` set): Gitea numbers them as one. */
export function issueView(ctx: Ctx, repo: RepoState, t: Thread) {
  const { api, web } = repoUrls(ctx, repo);
  const issue = ctx.state.issue(repo, t.number);
  const pull = ctx.state.pull(repo, t.number);
  const it = issue ?? { ...pull!, body: pull!.body ?? '', labels: [] as string[] };
  const html = `${web}/${pageOf(t)}/${t.number}`;
  const meta = pull && { merged: pull.merged, merged_at: pull.merged_at, draft: isWip(pull.title), html_url: html };
  return {
    ...{ ...pick(it, 'id', 'number', 'title', 'body', 'state'), user: by(ctx, it.user) },
    ...{ url: `${api}/issues/${t.number}`, html_url: html, comments: ctx.state.threadComments(repo, t).length },
    labels: it.labels.map((name, i) => ({ id: i + 1, name, color: 'e11d21', description: '', url: '' })),
    pull_request: meta ?? null,
    repository: { id: repo.id, name: repo.name, owner: repo.owner, full_name: fullName(repo) },
  };
}

/** A comment (of the conversation, or on a line: Gitea keeps both as issue comments, one id space). */
export function commentView(ctx: Ctx, repo: RepoState, c: Comment) {
  const { api, web } = repoUrls(ctx, repo);
  const page = `${web}/${pageOf(c.thread)}/${c.thread.number}`;
  return {
    ...{ id: c.id, html_url: `${page}#issuecomment-${c.id}`, issue_url: `${web}/issues/${c.thread.number}` },
    ...{ pull_request_url: c.thread.kind === 'pull' ? page : '', user: by(ctx, c.user), original_author: '' },
    ...{ body: c.body, created_at: c.createdAt, updated_at: c.updatedAt, api_url: `${api}/issues/comments/${c.id}` },
  };
}

/** A review comment as Gitea's PullReviewComment: `position` the line on the new side. */
const reviewCommentView = (ctx: Ctx, repo: RepoState, c: Comment) => ({
  ...{ id: c.id, body: c.body, user: by(ctx, c.user), resolver: null, pull_request_review_id: c.line!.review ?? 0 },
  ...{ path: c.line!.path, position: c.line!.line, original_position: 0, diff_hunk: '', commit_id: '' },
  ...{ created_at: c.createdAt, updated_at: c.updatedAt },
  html_url: `${repoUrls(ctx, repo).web}/pulls/${c.thread.number}#issuecomment-${c.id}`,
  pull_request_url: `${repoUrls(ctx, repo).web}/pulls/${c.thread.number}`,
});

const REVIEW_STATES = { approved: 'APPROVED', changes_requested: 'REQUEST_CHANGES', commented: 'COMMENT' } as const;

const reviewView = (ctx: Ctx, repo: RepoState, r: Review) => ({
  ...{ id: r.id, user: by(ctx, r.user), body: r.body, state: REVIEW_STATES[r.state], official: false },
  comments_count: lineCommentsOf(repo, r.pull, r.id).length,
  ...{ html_url: `${repoUrls(ctx, repo).web}/pulls/${r.pull}#issuecomment-${r.id}`, submitted_at: r.submittedAt },
  pull_request_url: `${repoUrls(ctx, repo).web}/pulls/${r.pull}`,
});

/** Gitea's access modes as its permission API words them: owner, admin, write, read (anyone on a public repository), none. */
function permissionOf(ctx: Ctx, repo: RepoState, login: string) {
  const level = ctx.state.accessLevel(repo, login);
  if (level >= ACCESS.owner) return 'owner';
  if (level >= ACCESS.maintainer) return 'admin';
  if (level >= ACCESS.developer) return 'write';
  return level >= ACCESS.reporter || repo.visibility !== 'private' ? 'read' : 'none';
}

/** The reactions a default Gitea allows (setting.UI.Reactions). */
const CONTENTS = ['+1', '-1', 'laugh', 'hooray', 'confused', 'heart', 'rocket', 'eyes'];

/** GitHub's commit with Gitea's own: its url is the git commit's, its message ends in a newline, and its tree. */
function commitView(ctx: Ctx, repo: RepoState, c: CommitInfo) {
  const view = sharedCommit(ctx, repo, c, userView);
  const tree = { url: `${repoUrls(ctx, repo).api}/git/trees/${c.tree}`, sha: c.tree, created: c.committer.date };
  return { ...view, url: view.commit.url, commit: { ...view.commit, message: `${c.message}\n`, tree } };
}

/** The caller's own user: its full name as it is, and when it was made. */
const selfView = (ctx: Ctx, u: UserState) => ({ ...userView(ctx, u), full_name: u.name, created: u.createdAt });

/** `page` and `limit` (at most 50: Gitea's MAX_RESPONSE_ITEMS) of `items`, as `view` shows them; x-total-count. */
function page<T>(ctx: Ctx, items: T[], view: (item: T) => unknown): Reply {
  const limit = Math.min(50, Math.max(1, Number(ctx.query.get('limit')) || 30));
  const from = (Math.max(1, Number(ctx.query.get('page')) || 1) - 1) * limit;
  return ok(items.slice(from, from + limit).map(view), 200, { 'x-total-count': String(items.length) });
}

/** The hook types Gitea's API takes (webhook_service.IsValidHookTaskType). */
const HOOK_TYPES = ['gitea', 'gogs', 'slack', 'discord', 'dingtalk', 'telegram', 'msteams', 'feishu', 'matrix'];

/** `type` is kept in the stored config; the secret never shown. */
const hookView = (_: Ctx, __: unknown, { config: { type, ...config }, ...h }: Hook) => ({
  ...{ id: h.id, type, config: { url: h.url, ...config }, ...pick(h, 'events', 'active') },
  authorization_header: '',
});

/** Gitea's REST host; `urls` for the swagger link of its error bodies. */
export function giteaRest(urls: Urls, flavour: Flavour = 'gitea'): RestHost {
  const error = (status: number, message: string, errors?: string[]): Reply => ({
    status,
    body: { message, ...(errors ? { errors } : {}), url: `${urls.webUrl}/api/swagger` },
  });
  const required = (field: string) => error(422, `[${field}]: Required`, [`[${field}]: Required`]);
  const notFound = () => error(404, 'not found');

  /** A write needs a token (401 `token is required`) that is not read-only (403, the scope it lacks). */
  const writer = (ctx: Ctx): Reply | undefined =>
    !ctx.caller
      ? error(401, 'token is required')
      : ctx.caller.token.readOnly
        ? error(403, 'token does not have at least one of required scope(s): [write:repository]')
        : undefined;

  const { onRepo, onPull } = repoRoutes('/repos/([^/]+)/([^/]+)', (ctx, o, r) => ctx.state.repo(o!, r!), notFound);

  /** Brings the fork's branch up to its parent's: `answer` how it went, or the refusal. */
  const sync = (ctx: Ctx, repo: RepoState, branch: string, notFork: string, answer: (style: string) => Reply) => {
    const refused = writer(ctx);
    if (refused) return refused;
    if (!ctx.state.permissions(repo, ctx.login).push) return error(403, 'user should have write access');
    const synced = syncBranch(ctx, repo, branch);
    if (synced === 'none' || synced === 'fast-forward') return answer(synced === 'none' ? '' : synced);
    if (synced === 'notFork') return error(400, notFork);
    // Gitea merges a diverged branch; no test needs that, so the fake refuses it as a conflict.
    if (synced === 'diverged') return error(409, 'merge upstream failed: there are conflicts');
    return error(404, `branch does not exist [name: ${branch}]`);
  };

  /** As its API checks it: a known type, a config with `url` and `content_type` (json or form); inactive unless asked. */
  const newHook = (ctx: Ctx, add: (fields: Omit<Hook, 'id'>) => Hook): Reply => {
    const [type, config] = [String(ctx.body.type), (ctx.body.config ?? {}) as Record<string, unknown>];
    if (!HOOK_TYPES.includes(type)) return error(422, `Invalid hook type: ${type}`);
    const missing = ['url', 'content_type'].find((k) => typeof config[k] !== 'string');
    if (missing) return error(422, `Missing config option: ${missing}`);
    if (config.content_type !== 'json' && config.content_type !== 'form') return error(422, 'Invalid content type');
    const events = Array.isArray(ctx.body.events) && ctx.body.events.length ? ctx.body.events.map(String) : ['push'];
    const [url, secret, own] = [
      String(config.url),
      text(config.secret) ?? '',
      { type, content_type: config.content_type },
    ];
    const hook = add({ url, secret, events, active: ctx.body.active === true, config: own });
    return ok(hookView(ctx, undefined, hook), 201);
  };
  const createHook = (ctx: Ctx, repo: RepoState) => newHook(ctx, (f) => ctx.state.addHook(repo, f));
  /** PATCH …/hooks/{id} (EditHookOption): `config`'s keys, `events` (replacing the list) and `active`, each as given. */
  const editHook = (ctx: Ctx, hook: Hook): Reply | undefined => {
    const config = ctx.body.config as Record<string, unknown> | undefined;
    if (config?.url !== undefined) hook.url = String(config.url);
    if (config?.secret !== undefined) hook.secret = String(config.secret);
    if (config?.content_type !== undefined) hook.config.content_type = String(config.content_type);
    if (Array.isArray(ctx.body.events)) hook.events = ctx.body.events.map(String);
    if (typeof ctx.body.active === 'boolean') hook.active = ctx.body.active;
    return undefined;
  };

  /**
   * An organisation (a group of the State without a slash) and its hooks, which Gitea delivers every
   * event of the organisation's repositories: its owners' (reqOrgOwnership), 403 for anyone else.
   */
  const onOrg = (
    method: string,
    tail: string,
    owners: boolean,
    then: (ctx: Ctx, org: GroupState, ...p: string[]) => Reply,
  ): Route => [
    method,
    new RegExp(`^/orgs/([^/]+)${tail}$`),
    (ctx, name = '', ...rest) => {
      const org = name.includes('/') ? undefined : ctx.state.groupOf(name);
      if (!org) return error(404, 'GetOrgByName');
      if (!owners) return then(ctx, org, ...rest);
      if (!ctx.caller) return error(401, 'token is required');
      if (ctx.state.groupLevel(org, ctx.login) < ACCESS.owner) return error(403, 'Must be an organization owner');
      return then(ctx, org, ...rest);
    },
  ];
  const orgRoutes: Route[] = [
    onOrg('GET', '', false, (_, org) =>
      ok({ id: org.id, name: org.fullPath, username: org.fullPath, full_name: '', visibility: 'public' }),
    ),
    onOrg('GET', '/hooks', true, (ctx, org) => ok(org.hooks.map((h) => hookView(ctx, undefined, h)))),
    onOrg('POST', '/hooks', true, (ctx, org) => writer(ctx) ?? newHook(ctx, (f) => ctx.state.addGroupHook(org, f))),
    onOrg('DELETE', '/hooks/(\\d+)', true, (_, org, id = '') => {
      const at = org.hooks.findIndex((h) => String(h.id) === id);
      if (at < 0) return notFound();
      org.hooks.splice(at, 1);
      return { status: 204 };
    }),
  ];

  const createRepo = (ctx: Ctx): Reply => {
    const name = ctx.body.name;
    if (typeof name !== 'string' || name === '') return required('Name');
    if (!/^[A-Za-z0-9._-]+$/.test(name) || name === '.' || name === '..')
      return error(422, `name is invalid [${name}]: must be valid alpha or numeric or dash(-_) or dot characters`);
    if (ctx.state.repo(ctx.login!, name)) return error(409, 'The repository with the same name already exists.');
    const visibility = ctx.body.private === true ? 'private' : 'public';
    const repo = ctx.state.addRepo(ctx.login!, name, { visibility, description: text(ctx.body.description) ?? null });
    return ok(repoView(ctx, repo), 201);
  };

  /** 202 with the new fork; 409 when the caller has a fork of it already or a repository of that name. */
  const createFork = (ctx: Ctx, repo: RepoState): Reply => {
    const me = ctx.login!;
    const existing = ctx.state.forkOf(repo, me);
    const paths = existing && `repo path: ${fullName(repo)}, fork path: ${fullName(existing)}`;
    if (paths) return error(409, `repository is already forked by user [uname: ${me}, ${paths}]`);
    const name = text(ctx.body.name) ?? repo.name;
    if (ctx.state.repo(me, name)) return error(409, `repository already exists [uname: ${me}, name: ${name}]`);
    return ok(repoView(ctx, ctx.state.addRepo(me, name, { fork: repo })), 202);
  };

  const createPull = (ctx: Ctx, repo: RepoState): Reply => {
    const { title, head, base, body } = ctx.body;
    if (typeof title !== 'string' || title === '') return required('Title');
    if (typeof head !== 'string' || typeof base !== 'string' || head === '' || base === '') return required('Head');
    const nothing = error(422, 'Invalid PullRequest: There are no changes between the head and the base');
    if (head === base) return nothing;
    // head: `branch`, `owner:branch` or `owner/repo:branch` (parseCompareInfo)
    const colon = head.indexOf(':');
    const [spec, ref] = colon >= 0 ? [head.slice(0, colon), head.slice(colon + 1)] : ['', head];
    const [owner, name] = spec.includes('/') ? spec.split('/') : [spec || repo.owner, undefined];
    const from = name ? ctx.state.repo(owner!, name) : ctx.state.inNetwork(repo, owner!);
    if (!from || !ctx.state.canSee(from, ctx.login)) return notFound();
    const fields = { title, body: text(body) ?? '', base, draft: isWip(title), maintainer_can_modify: false };
    const pull = openPull(ctx, repo, { ...fields, from, ref });
    if ('exists' in pull) {
      const { id, number } = pull.exists;
      const ids = `id: ${id}, issue_id: ${number}, head_repo_id: ${from.id}, base_repo_id: ${repo.id}`;
      const targets = `${ids}, head_branch: ${ref}, base_branch: ${base}`;
      return error(409, `pull request already exists for these targets [${targets}]`);
    }
    if ('refused' in pull)
      return pull.refused === 'noCommits'
        ? nothing
        : error(404, `BaseRepo.IsBranchExist: ${pull.refused === 'noHead' ? ref : base}`);
    return ok(pullView(ctx, repo, pull), 201);
  };

  /** 201 a new reaction, 200 the caller's own again; `on` undefined: nothing there (404). */
  const react = (ctx: Ctx, repo: RepoState, on: ReactionState['on'] | undefined): Reply => {
    const content = String(ctx.body.content ?? '');
    if (!CONTENTS.includes(content)) return error(403, `'${content}' is not an allowed reaction`);
    const done = on && reactOn(ctx, repo, on, content);
    if (!done) return notFound();
    const { reaction: r, created } = done;
    return ok({ user: by(ctx, r.user), content: r.content, created_at: r.createdAt }, created ? 201 : 200);
  };
  const threadOf = (ctx: Ctx, repo: RepoState, n: string) => ctx.state.threadOf(repo, Number(n));

  const conversation: Route[] = [
    // Asked by the repository's admins about anyone, by anyone else about themselves only.
    onRepo('GET', '/collaborators/([^/]+)/permission', (ctx, repo, login = '') => {
      const self = ctx.login?.toLowerCase() === login.toLowerCase();
      if (!self && ctx.state.accessLevel(repo, ctx.login) < ACCESS.maintainer)
        return error(
          403,
          'Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own',
        );
      const user = ctx.state.user(login);
      if (!user) return error(404, `user does not exist [uid: 0, name: ${login}]`);
      const permission = permissionOf(ctx, repo, user.login);
      return ok({ permission, role_name: permission, user: userView(ctx, user) });
    }),
    // Every comment at once, oldest first (Gitea does not page this list).
    onRepo('GET', '/issues/(\\d+)/comments', (ctx, repo, n = '') => {
      const t = threadOf(ctx, repo, n);
      return t ? ok(ctx.state.threadComments(repo, t).map((c) => commentView(ctx, repo, c))) : notFound();
    }),
    onRepo('POST', '/issues/(\\d+)/comments', { after: writer }, (ctx, repo, n = '') => {
      const t = threadOf(ctx, repo, n);
      if (!t) return notFound();
      const body = text(ctx.body.body);
      if (!body) return required('Body');
      return ok(commentView(ctx, repo, ctx.state.addComment(repo, { thread: t, user: ctx.login!, body })), 201);
    }),
    onRepo('PATCH', '/issues/comments/(\\d+)', { after: writer }, (ctx, repo, id = '') => {
      if (!text(ctx.body.body)) return required('Body');
      const c = editOwnComment(ctx, repo, id, () => true);
      if (c === 'missing') return notFound();
      return c === 'notAuthor' ? error(403, 'user should be the poster of the comment') : ok(commentView(ctx, repo, c));
    }),
    onPull('/pulls/(\\d+)/reviews', {}, (ctx, repo, pull) =>
      page(
        ctx,
        repo.reviews.filter((r) => r.pull === pull.number),
        (r) => reviewView(ctx, repo, r),
      ),
    ),
    onRepo('GET', '/pulls/(\\d+)/reviews/(\\d+)/comments', (ctx, repo, n = '', id = '') => {
      const review = repo.reviews.find((r) => r.id === Number(id) && r.pull === Number(n));
      if (!review) return notFound();
      return ok(lineCommentsOf(repo, review.pull, review.id).map((c) => reviewCommentView(ctx, repo, c)));
    }),
    onRepo('POST', '/issues/(\\d+)/reactions', { after: writer }, (ctx, repo, n = '') =>
      react(ctx, repo, threadOf(ctx, repo, n)),
    ),
    // A review comment is an issue comment to Gitea: its reactions go here too.
    onRepo('POST', '/issues/comments/(\\d+)/reactions', { after: writer }, (ctx, repo, id = '') => {
      const c = ctx.state.comment(repo, Number(id));
      return react(ctx, repo, c ? { comment: c.id } : undefined);
    }),
  ];

  const routes: Route[] = [
    ...conversation,
    ...ciRoutes,
    ...orgRoutes,
    ['GET', /^\/user$/, (ctx) => (ctx.caller ? ok(selfView(ctx, ctx.caller.user)) : error(401, 'token is required'))],
    ['POST', /^\/user\/repos$/, (ctx) => writer(ctx) ?? createRepo(ctx)],
    onRepo('GET', '', (ctx, repo) => ok(repoView(ctx, repo))),
    onRepo('POST', '/forks', { after: writer }, createFork),
    onRepo('GET', '/forks', (ctx, repo) => page(ctx, visibleForks(ctx, repo), (r) => repoView(ctx, r))),
    flavour === 'gitea'
      ? onRepo('POST', '/merge-upstream', (ctx, repo) => {
          const branch = text(ctx.body.branch);
          if (!branch) return required('Branch');
          return sync(ctx, repo, branch, 'repo is not a fork', (style) => ok({ merge_style: style }));
        })
      : onRepo('POST', '/sync_fork(?:/([^/]+))?', (ctx, repo, branch) =>
          sync(ctx, repo, branch || repo.defaultBranch, 'The Repo must be a fork', () => ({ status: 204 })),
        ),
    onRepo('POST', '/pulls', { after: writer }, createPull),
    // `state`: open (default), closed or all; newest first, as Gitea sorts by default.
    onRepo('GET', '/pulls', (ctx, repo) =>
      page(ctx, pullsIn(repo, ctx.query.get('state') ?? 'open').reverse(), (p) => pullView(ctx, repo, p)),
    ),
    // A repository's hooks are its admins' (reqAdmin): anyone else who sees it is refused, 403.
    ...hookRoutes(onRepo, {
      writes: { after: writer },
      refused: () => error(403, 'user should be an owner or a collaborator with admin write of a repository'),
      gone: notFound,
      create: createHook,
      view: hookView,
      edit: { method: 'PATCH', apply: editHook },
    }),
    onPull('/pulls/(\\d+)', {}, (ctx, repo, pull) => ok(pullView(ctx, repo, pull))),
    onPull('/pulls/(\\d+)/commits', {}, (ctx, repo, pull) =>
      page(ctx, ctx.state.pullCommits(repo, pull), (c) => commitView(ctx, repo, c)),
    ),
  ];

  return {
    routes,
    error,
    reason: reasonPhrases({ 404: 'not found' }),
    credentials: (req) => credentials(req.headers.authorization, true),
    // Any route, an unknown or expired token (Basic or `token`/`Bearer`).
    badCredentials: () => error(401, 'invalid username, password or token'),
    badJson: () => error(422, 'invalid JSON body'),
    headers: () => ({ 'content-type': 'application/json;charset=utf-8' }),
  };
}
