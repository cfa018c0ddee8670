import {
  type CodeHost,
  type CodeHostOptions,
  type HostKind,
  type NewHook,
  type NewPull,
  type OpenedPull,
  type PullSource,
  type ReactionTarget,
  type RepoPermission,
  type ScmComment,
  type ScmCommit,
  ScmError,
  type ScmLineComment,
  type ScmPull,
  type ScmRepo,
  ownerNamePath,
  ownerNamePull,
} from '../code-host.js';
import {
  type Call,
  type GiteaCommit,
  type GiteaPull,
  type GiteaRepo,
  type GiteaUser,
  allPages,
  giteaCall,
  repoPathOf,
} from './api.js';
import { type DeliveryHeaders, firstHeader, signedWith } from '../deliveries.js';
import { readGiteaEvent } from './events.js';
import { hookBody } from './hooks.js';
import { giteaCiJobs, giteaCiLog } from './ci.js';
import { giteaOrgs } from './orgs.js';

/**
 * Gitea's work-in-progress title prefixes (its WORK_IN_PROGRESS_PREFIXES default): Gitea has no
 * draft flag to set, a pull request whose title starts with one is its draft.
 */
const WIP = /^\s*(?:WIP:|\[WIP\])/i;
const DRAFT_PREFIX = 'WIP: ';

const same = (a: string | undefined, b: string | undefined): boolean =>
  a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();

/**
 * A repository that is not private is still not public when its owner is not: Gitea answers
 * `private: false, internal: false` for a `limited` organisation's repository (every signed-in
 * user reads it) and tells it only by `owner.visibility`.
 */
const hiddenOwner = (r: GiteaRepo) => r.owner.visibility === 'limited' || r.owner.visibility === 'private';

const repoOf = (r: GiteaRepo): ScmRepo => {
  const visibility = r.private ? 'private' : r.internal || hiddenOwner(r) ? 'internal' : 'public';
  return {
    owner: r.owner.login,
    name: r.name,
    fullName: r.full_name,
    private: visibility !== 'public',
    visibility,
    defaultBranch: r.default_branch || 'main',
    htmlUrl: r.html_url,
    cloneUrl: r.clone_url ?? `${r.html_url}.git`,
    fork: r.fork,
    canPush: !!(r.permissions?.push || r.permissions?.admin),
  };
};

const isDraft = (p: GiteaPull): boolean => (typeof p.draft === 'boolean' ? p.draft : WIP.test(p.title));
const openedOf = (p: GiteaPull): OpenedPull => ({ number: p.number, url: p.html_url, draft: isDraft(p) });

/** The caller's fork of owner/name: at its usual place, else among the repository's forks. */
async function findFork(call: Call, login: string, owner: string, name: string): Promise<GiteaRepo | undefined> {
  const what = `forking ${owner}/${name}`;
  const { status, data } = await call<GiteaRepo>(what, 'GET', repoPathOf(login, name), { accept: [404] });
  if (status === 200 && data.fork && same(data.parent?.full_name, `${owner}/${name}`)) return data;
  const forks = await allPages<GiteaRepo>(call, what, `${repoPathOf(owner, name)}/forks`, {}, (f) =>
    same(f.owner.login, login),
  );
  return forks.find((f) => same(f.owner.login, login));
}

/** The caller's fork (found, else made); Gitea answers 409 for a fork that exists under another name. */
async function fork(call: Call, owner: string, name: string): Promise<ScmRepo> {
  const what = `forking ${owner}/${name}`;
  const { data: me } = await call<GiteaUser>(what, 'GET', '/user');
  const existing = await findFork(call, me.login, owner, name);
  if (existing) return repoOf(existing);
  const made = await call<GiteaRepo>(what, 'POST', `${repoPathOf(owner, name)}/forks`, { body: {}, accept: [409] });
  if (made.status !== 409) return repoOf(made.data);
  const found = await findFork(call, me.login, owner, name);
  if (found) return repoOf(found);
  // A repository of that name that is not this fork: Gitea's own words.
  const words = (made.data as { message?: string } | undefined)?.message ?? 'Conflict';
  throw new ScmError(409, `${what}: the code host answered HTTP 409: ${words}`);
}

/** The open pull request from `branch` in `from` (or owner/name itself). */
async function openPullFrom(
  call: Call,
  owner: string,
  name: string,
  branch: string,
  from?: PullSource,
): Promise<OpenedPull | undefined> {
  const headOwner = from?.owner ?? owner;
  const headName = from?.name ?? name;
  const matches = (p: GiteaPull) =>
    p.head.ref === branch &&
    (p.head.repo ? same(p.head.repo.full_name, `${headOwner}/${headName}`) : same(headOwner, owner));
  const pulls = await allPages<GiteaPull>(
    call,
    `reading the pull requests of ${owner}/${name}`,
    `${repoPathOf(owner, name)}/pulls`,
    { state: 'open' },
    matches,
  );
  const found = pulls.find(matches);
  return found ? openedOf(found) : undefined;
}

/** A pull request's state as merge tracking reads it. */
async function readPull(call: Call, owner: string, name: string, number: number): Promise<ScmPull> {
  const what = `reading pull request ${owner}/${name}#${number}`;
  const { data } = await call<GiteaPull>(what, 'GET', `${repoPathOf(owner, name)}/pulls/${number}`);
  return {
    number: data.number,
    url: data.html_url,
    title: data.title,
    draft: isDraft(data),
    state: data.state === 'open' ? 'open' : 'closed',
    merged: !!data.merged,
    mergedAt: data.merged_at ? new Date(data.merged_at) : null,
    headSha: data.head.sha,
    headRef: data.head.ref,
    // A deleted fork leaves head.repo null; a server that does not say it (undefined) is taken at its base.
    fromFork: data.head.repo === null || (!!data.head.repo && !same(data.head.repo.full_name, `${owner}/${name}`)),
  };
}

/** Every commit of a pull request, page by page. */
async function readPullCommits(call: Call, owner: string, name: string, number: number): Promise<ScmCommit[]> {
  const path = `${repoPathOf(owner, name)}/pulls/${number}/commits`;
  // verification and files cost the server a signature check and a diff per commit; we read neither
  const query = { verification: 'false', files: 'false' };
  const commits = await allPages<GiteaCommit>(call, `reading the commits of ${owner}/${name}#${number}`, path, query);
  return commits.map((c) => ({
    sha: c.sha,
    authorEmail: c.commit.author?.email ?? null,
    committerEmail: c.commit.committer?.email ?? null,
    message: c.commit.message,
  }));
}

/** A repository's hook. */
async function createHook(call: Call, owner: string, name: string, hook: NewHook): Promise<{ id: string }> {
  const what = `adding a webhook to ${owner}/${name}`;
  const body = hookBody(hook);
  const { data } = await call<{ id: number }>(what, 'POST', `${repoPathOf(owner, name)}/hooks`, { body });
  return { id: String(data.id) };
}

/** A comment as Gitea's API shows one (issue and review comments alike). */
interface GiteaComment {
  id: number;
  body: string;
  user?: GiteaUser | null;
  html_url: string;
  created_at: string;
}

/** Gitea's access modes in emend's words (owner and admin write). */
const PERMISSIONS: Record<string, RepoPermission> = { owner: 'write', admin: 'write', write: 'write', read: 'read' };

const commentOf = (c: GiteaComment): ScmComment => ({
  id: String(c.id),
  author: c.user?.login ?? '',
  body: c.body,
  url: c.html_url,
  createdAt: new Date(c.created_at),
});

/** A user's permission; one Gitea does not know (404) may do nothing. */
async function permission(call: Call, owner: string, name: string, login: string): Promise<RepoPermission> {
  const path = `${repoPathOf(owner, name)}/collaborators/${encodeURIComponent(login)}/permission`;
  const what = `reading ${login}'s permission on ${owner}/${name}`;
  const { status, data } = await call<{ permission?: string }>(what, 'GET', path, { accept: [404] });
  return status === 404 ? 'none' : (PERMISSIONS[data.permission ?? ''] ?? 'none');
}

/** Gitea answers the whole list at once, oldest first (no pages). */
async function comments(call: Call, owner: string, name: string, n: number, limit: number): Promise<ScmComment[]> {
  const path = `${repoPathOf(owner, name)}/issues/${n}/comments`;
  const { data } = await call<GiteaComment[]>(`reading the comments of ${owner}/${name}#${n}`, 'GET', path);
  return limit > 0 ? (Array.isArray(data) ? data : []).slice(-limit).map(commentOf) : [];
}

/** One review's line comments, or every review's in turn; `position` is the line on the new side (0: none). */
async function lineComments(call: Call, owner: string, name: string, n: number, reviewId?: string) {
  const what = `reading the line comments of ${owner}/${name}#${n}`;
  const reviews = `${repoPathOf(owner, name)}/pulls/${n}/reviews`;
  const ids = reviewId ? [reviewId] : (await allPages<{ id: number }>(call, what, reviews)).map((r) => String(r.id));
  const out: ScmLineComment[] = [];
  for (const id of ids) {
    const path = `${reviews}/${encodeURIComponent(id)}/comments`;
    const { data } = await call<(GiteaComment & { path: string; position?: number })[]>(what, 'GET', path);
    for (const c of Array.isArray(data) ? data : [])
      out.push({ ...commentOf(c), path: c.path, line: c.position || null });
  }
  return out;
}

/** A line comment is an issue comment to Gitea: its reactions take the issue comment route. An existing one is 200. */
async function react(call: Call, owner: string, name: string, target: ReactionTarget, content: string) {
  const base = repoPathOf(owner, name);
  const path =
    target.on === 'thread'
      ? `${base}/issues/${target.thread.number}/reactions`
      : `${base}/issues/comments/${encodeURIComponent(target.commentId)}/reactions`;
  await call(`reacting on ${owner}/${name}#${target.thread.number}`, 'POST', path, { body: { content } });
}

/**
 * The Gitea and Forgejo adapter (one REST API under /api/v1) on typed fetch calls. Every
 * failure is an ScmError with the host's status and words.
 */
export function gitea(options: CodeHostOptions): CodeHost {
  const call = giteaCall(options);
  return {
    user: async () => (await call<GiteaUser>('checking the token', 'GET', '/user')).data.login,

    repo: async (owner, name) => {
      const { status, data } = await call<GiteaRepo>(`reading ${owner}/${name}`, 'GET', repoPathOf(owner, name), {
        accept: [404],
      });
      return status === 404 ? null : repoOf(data);
    },

    createRepo: async (name, isPrivate, description) => {
      const body = { name, private: isPrivate, description: description ?? '', auto_init: false };
      return repoOf((await call<GiteaRepo>(`creating the repository ${name}`, 'POST', '/user/repos', { body })).data);
    },

    fork: (owner, name) => fork(call, owner, name),

    /**
     * Gitea syncs a fork at …/merge-upstream (added in 1.23); Forgejo has its own …/sync_fork/{branch}
     * and no merge-upstream. A server with neither answers 404, which the caller logs and passes.
     */
    syncFork: async (owner, name, branch) => {
      const what = `syncing the fork ${owner}/${name}`;
      const base = repoPathOf(owner, name);
      const giteaWay = await call(what, 'POST', `${base}/merge-upstream`, { body: { branch }, accept: [404] });
      if (giteaWay.status !== 404) return;
      await call(what, 'POST', `${base}/sync_fork/${encodeURIComponent(branch)}`);
    },

    openPull: async (p: NewPull) => {
      const title = p.draft && !WIP.test(p.title) ? `${DRAFT_PREFIX}${p.title}` : p.title;
      const head = p.from ? `${p.from.owner}:${p.branch}` : p.branch;
      const body = { head, base: p.base, title, body: p.body };
      const what = `opening a pull request on ${p.owner}/${p.name}`;
      return openedOf((await call<GiteaPull>(what, 'POST', `${repoPathOf(p.owner, p.name)}/pulls`, { body })).data);
    },

    openPullFrom: (owner, name, branch, from) => openPullFrom(call, owner, name, branch, from),

    pull: (owner, name, number) => readPull(call, owner, name, number),

    pullCommits: (owner, name, number) => readPullCommits(call, owner, name, number),

    createHook: (owner, name, hook) => createHook(call, owner, name, hook),

    // EditHookOption: the events (and `active`) only; the config (URL, secret) stays as registered.
    updateHook: async (owner, name, id, hook) => {
      const path = `${repoPathOf(owner, name)}/hooks/${encodeURIComponent(id)}`;
      const { events, active } = hookBody(hook);
      await call(`changing a webhook's events on ${owner}/${name}`, 'PATCH', path, { body: { events, active } });
    },

    // 404: gone already (removed on Gitea, or the repository with it), what deleting wanted.
    deleteHook: async (owner, name, id) => {
      const path = `${repoPathOf(owner, name)}/hooks/${encodeURIComponent(id)}`;
      await call(`removing a webhook from ${owner}/${name}`, 'DELETE', path, { accept: [404] });
    },

    permission: (owner, name, user) => permission(call, owner, name, user.login),

    comments: (owner, name, thread, limit) => comments(call, owner, name, thread.number, limit),

    lineComments: (owner, name, pull, reviewId) => lineComments(call, owner, name, pull, reviewId),

    comment: async (owner, name, thread, body) => {
      const path = `${repoPathOf(owner, name)}/issues/${thread.number}/comments`;
      const what = `commenting on ${owner}/${name}#${thread.number}`;
      return commentOf((await call<GiteaComment>(what, 'POST', path, { body: { body } })).data);
    },

    editComment: async (owner, name, _thread, commentId, body) => {
      const path = `${repoPathOf(owner, name)}/issues/comments/${encodeURIComponent(commentId)}`;
      await call(`editing comment ${commentId} on ${owner}/${name}`, 'PATCH', path, { body: { body } });
    },

    react: (owner, name, target, reaction) => react(call, owner, name, target, reaction),

    ciJobs: (owner, name, sha) => giteaCiJobs(call, owner, name, sha),

    ciLog: (owner, name, job) => giteaCiLog(call, owner, name, job),
  };
}

/** The hex HMAC-SHA256 of the raw body; Forgejo sends it as X-Forgejo-Signature too. */
const verifyDelivery = (headers: DeliveryHeaders, body: Buffer, secret: string): boolean =>
  signedWith(firstHeader(headers, 'x-gitea-signature', 'x-forgejo-signature'), body, secret);

// Gitea's rule for a user or organisation: it starts with a letter or digit, has no two of `-._`
// in a row and does not end in one.
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,38}[A-Za-z0-9])?$/;

/** Gitea and Forgejo: OWNER/NAME repositories, /pulls/N, OAuth2 applications with Gitea ≥ 1.20 scopes. */
export const giteaKind: HostKind = {
  kind: 'gitea',
  productName: 'Gitea',
  tokenHint: 'access token (write:repository, read:user)',
  brand: 'gitea',
  pullNoun: 'pull request',
  client: gitea,
  groups: giteaOrgs,
  repoPath: (segments) => ownerNamePath(segments, (owner) => OWNER.test(owner) && !/[-._]{2}/.test(owner)),
  pullOfPath: (path) => ownerNamePull(path, 'pulls'),
  verifyDelivery,
  deliveryId: (headers) => firstHeader(headers, 'x-gitea-delivery', 'x-forgejo-delivery'),
  deliveryEvent: (headers) => firstHeader(headers, 'x-gitea-event', 'x-forgejo-event'),
  readEvent: readGiteaEvent,
  // Gitea takes the Basic password as the token whatever the user name (services/auth/basic.go).
  gitUser: 'x-access-token',
  oauth: {
    authorizePath: '/login/oauth/authorize',
    tokenPath: '/login/oauth/access_token',
    connectScope: 'write:repository read:user',
    loginScope: 'read:user',
  },
};
