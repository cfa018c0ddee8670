import type { Gitlab } from '@gitbeaker/rest';
import type {
  CodeHost,
  CodeHostOptions,
  HostKind,
  NewHook,
  NewPull,
  OpenedPull,
  PullSource,
  Reaction,
  RepoPermission,
  ScmComment,
  ScmCommit,
  ScmLineComment,
  ThreadRef,
  ScmPull,
  ScmRepo,
} from '../code-host.js';
import { type DeliveryHeaders, firstHeader, header, sameSecret } from '../deliveries.js';
import { readGitLabEvent } from './events.js';
import { gitLabCiJobs, gitLabCiLog } from './ci.js';
import { hookOptions } from './hook-options.js';
import { gitLabGroups } from './groups.js';
import { GitLabHttpError, gitLabApi, gitLabCall } from './requester.js';

/**
 * The GitLab adapter (gitlab.com or a self-managed server, by apiUrl) on gitbeaker, its HTTP sent
 * through the caller's fetch (src/scm/gitlab/requester.ts). Projects are named by their
 * `path_with_namespace` (nested groups: `group/sub/project`); pull requests are merge requests,
 * numbered by their iid. Every failure is an ScmError carrying the host's status and words.
 */

/** Developer: may push branches and open merge requests (Reporter, 20, reads only). */
const DEVELOPER = 30;
/** Guest: the lowest membership, which may read (and comment on) the project's issues. */
const GUEST = 10;
const DRAFT = /^\s*(\[draft\]|\(draft\)|draft:)\s*/i;

interface ProjectView {
  id: number;
  path: string;
  path_with_namespace: string;
  namespace: { full_path: string };
  visibility?: string;
  default_branch?: string | null;
  web_url: string;
  http_url_to_repo: string;
  forked_from_project?: unknown;
  permissions?: {
    project_access?: { access_level: number } | null;
    group_access?: { access_level: number } | null;
  };
}

interface MergeRequestView {
  iid: number;
  web_url: string;
  title: string;
  state: string;
  draft?: boolean;
  work_in_progress?: boolean;
  merged_at?: string | null;
  sha?: string | null;
  source_branch?: string;
  source_project_id?: number;
  target_project_id?: number;
}

const projectId = (owner: string, name: string): string => `${owner}/${name}`;

interface NoteView {
  id: number;
  type?: string | null;
  body: string;
  author?: { username: string } | null;
  created_at: string;
  system?: boolean;
  position?: { new_path?: string | null; old_path?: string | null; new_line?: number | null } | null;
}

/** GitLab's award emoji names for emend's reactions. */
const EMOJI: Record<Reaction, string> = { eyes: 'eyes', '+1': 'thumbsup', confused: 'confused' };

/** The notes API answers a second award of the same emoji by the same user "already been taken" (a 404, some versions 400). */
const alreadyAwarded = (err: unknown): boolean =>
  err instanceof GitLabHttpError && (err.status === 404 || err.status === 400) && /already been taken/i.test(err.words);

/** Notes keep no web address: it is the issue's or merge request's page with the note's anchor. */
const noteUrl = (web: string, thread: ThreadRef, id: number): string =>
  `${web}/-/${thread.kind === 'pull' ? 'merge_requests' : 'issues'}/${thread.number}#note_${id}`;

const commentOf = (web: string, thread: ThreadRef, n: NoteView): ScmComment => ({
  id: String(n.id),
  author: n.author?.username ?? '',
  body: n.body,
  url: noteUrl(web, thread, n.id),
  createdAt: new Date(n.created_at),
});

function repoOf(p: ProjectView): ScmRepo {
  const visibility = p.visibility === 'public' || p.visibility === 'internal' ? p.visibility : 'private';
  const access = Math.max(
    p.permissions?.project_access?.access_level ?? 0,
    p.permissions?.group_access?.access_level ?? 0,
  );
  return {
    owner: p.namespace.full_path,
    name: p.path,
    fullName: p.path_with_namespace,
    private: visibility !== 'public',
    visibility,
    defaultBranch: p.default_branch ?? 'main',
    htmlUrl: p.web_url,
    cloneUrl: p.http_url_to_repo,
    fork: !!p.forked_from_project,
    canPush: access >= DEVELOPER,
  };
}

const isDraft = (mr: MergeRequestView): boolean => !!(mr.draft ?? mr.work_in_progress ?? DRAFT.test(mr.title));
const openedOf = (mr: MergeRequestView): OpenedPull => ({ number: mr.iid, url: mr.web_url, draft: isDraft(mr) });

export function gitLab(options: CodeHostOptions): CodeHost {
  const api = gitLabApi(options);
  const call = gitLabCall;
  const project = async (owner: string, name: string): Promise<ProjectView> =>
    (await api.Projects.show(projectId(owner, name))) as unknown as ProjectView;

  /** The caller's fork of owner/name, if they have one. */
  const ownFork = async (owner: string, name: string): Promise<ProjectView | undefined> => {
    const forks = (await api.Projects.allForks(projectId(owner, name), { owned: true })) as unknown as ProjectView[];
    return forks[0];
  };

  return {
    user: () =>
      call('checking the token', async () => ((await api.Users.showCurrentUser()) as { username: string }).username),

    repo: (owner: string, name: string) =>
      call(`reading ${owner}/${name}`, async () => {
        try {
          return repoOf(await project(owner, name));
        } catch (err) {
          if (err instanceof GitLabHttpError && err.status === 404) return null;
          throw err;
        }
      }),

    /** A project in the token user's own namespace; nothing committed (no README). */
    createRepo: (name: string, isPrivate: boolean, description?: string) =>
      call(`creating the repository ${name}`, async () =>
        repoOf(
          (await api.Projects.create({
            name,
            path: name,
            visibility: isPrivate ? 'private' : 'public',
            initializeWithReadme: false,
            ...(description ? { description } : {}),
          })) as unknown as ProjectView,
        ),
      ),

    /** The caller's existing fork (GitLab would refuse a second one by name), else a new one. */
    fork: (owner: string, name: string) =>
      call(`forking ${owner}/${name}`, async () => {
        const existing = await ownFork(owner, name);
        if (existing) return repoOf(existing);
        return repoOf((await api.Projects.fork(projectId(owner, name))) as unknown as ProjectView);
      }),

    /**
     * A no-op: GitLab's REST API has no fork sync ("Update fork" is the web UI's and GraphQL's).
     * Nothing needs it: the pr step pushes a branch built on the base's whole history, so the
     * fork's own branches being behind does not matter to the merge request.
     */
    syncFork: async () => {},

    openPull: (p: NewPull) => call(`opening a merge request on ${p.owner}/${p.name}`, () => openMergeRequest(api, p)),

    openPullFrom: (owner: string, name: string, branch: string, from?: PullSource) =>
      call(`reading the merge requests of ${owner}/${name}`, async () => {
        const sourceId = from ? (await project(from.owner, from.name)).id : undefined;
        const open = (await api.MergeRequests.all({
          projectId: projectId(owner, name),
          state: 'opened',
          sourceBranch: branch,
          perPage: 100,
          maxPages: 1,
        })) as unknown as MergeRequestView[];
        // GitLab filters by branch name only: the same name in the target project and in a fork are two MRs.
        const found = open.find((mr) => mr.source_project_id === (sourceId ?? mr.target_project_id));
        return found ? openedOf(found) : undefined;
      }),

    pull: (owner: string, name: string, number: number): Promise<ScmPull> =>
      call(`reading merge request ${owner}/${name}!${number}`, async () => {
        const mr = (await api.MergeRequests.show(projectId(owner, name), number)) as unknown as MergeRequestView;
        const merged = mr.state === 'merged';
        return {
          number: mr.iid,
          url: mr.web_url,
          title: mr.title,
          draft: isDraft(mr),
          state: mr.state === 'opened' || mr.state === 'locked' ? 'open' : 'closed',
          merged,
          mergedAt: merged && mr.merged_at ? new Date(mr.merged_at) : null,
          headSha: mr.sha ?? '',
          headRef: mr.source_branch ?? '',
          fromFork: mr.source_project_id !== mr.target_project_id,
        };
      }),

    pullCommits: (owner: string, name: string, number: number): Promise<ScmCommit[]> =>
      call(`reading the commits of ${owner}/${name}!${number}`, async () => {
        const commits = (await api.MergeRequests.allCommits(projectId(owner, name), number, {
          perPage: 100,
        })) as unknown as { id: string; author_email?: string; committer_email?: string; message: string }[];
        // GitLab lists them newest first; GitHub (and the callers' reading) oldest first.
        return commits
          .map((c) => ({
            sha: c.id,
            authorEmail: c.author_email ?? null,
            committerEmail: c.committer_email ?? null,
            message: c.message,
          }))
          .reverse();
      }),

    createHook: (owner: string, name: string, hook: NewHook) =>
      call(`adding a webhook to ${owner}/${name}`, async () => {
        const made = (await api.ProjectHooks.add(projectId(owner, name), hook.url, hookOptions(hook))) as {
          id: number;
        };
        return { id: String(made.id) };
      }),

    // GitLab's edit (PUT) needs the URL; the token goes again so that the hook keeps it.
    updateHook: (owner: string, name: string, id: string, hook: NewHook) =>
      call(`changing a webhook's events on ${owner}/${name}`, async () => {
        await api.ProjectHooks.edit(projectId(owner, name), Number(id), hook.url, hookOptions(hook));
      }),

    deleteHook: (owner: string, name: string, id: string) =>
      call(`removing a webhook from ${owner}/${name}`, async () => {
        try {
          await api.ProjectHooks.remove(projectId(owner, name), Number(id));
        } catch (err) {
          // Gone already (removed on GitLab, or the project with it): what deleting wanted.
          if (!(err instanceof GitLabHttpError && err.status === 404)) throw err;
        }
      }),

    /** The membership, inherited from groups too (members/all); no member (404) may do nothing here. */
    permission: (owner, name, user) =>
      call(`reading ${user.login}'s permission on ${owner}/${name}`, async (): Promise<RepoPermission> => {
        const id = user.id ?? (await userId(user.login));
        if (id === undefined) return 'none';
        try {
          const member = (await api.ProjectMembers.show(projectId(owner, name), id, {
            includeInherited: true,
          })) as unknown as { access_level: number };
          return member.access_level >= DEVELOPER ? 'write' : member.access_level >= GUEST ? 'read' : 'none';
        } catch (err) {
          if (err instanceof GitLabHttpError && err.status === 404) return 'none';
          throw err;
        }
      }),

    /** Oldest first; GitLab's own notes (system: "changed the title", …) are not comments. */
    comments: (owner, name, thread, limit) =>
      call(`reading the comments of ${owner}/${name}${mark(thread)}`, async () => {
        const [notes, web] = await Promise.all([allNotes(owner, name, thread), webUrl(owner, name)]);
        const said = notes.filter((n) => !n.system && n.type !== 'DiffNote');
        return limit > 0 ? said.slice(-limit).map((n) => commentOf(web, thread, n)) : [];
      }),

    /**
     * A merge request's diff notes. GitLab gives a review no id its notes keep, so `reviewId` picks
     * nothing out: every line comment of the merge request is returned.
     */
    lineComments: (owner, name, pull) =>
      call(`reading the line comments of ${owner}/${name}!${pull}`, async () => {
        const thread: ThreadRef = { kind: 'pull', number: pull };
        const [notes, web] = await Promise.all([allNotes(owner, name, thread), webUrl(owner, name)]);
        return notes
          .filter((n) => n.type === 'DiffNote' && n.position)
          .map(
            (n): ScmLineComment => ({
              ...commentOf(web, thread, n),
              path: n.position?.new_path ?? n.position?.old_path ?? '',
              line: n.position?.new_line ?? null,
            }),
          );
      }),

    comment: (owner, name, thread, body) =>
      call(`commenting on ${owner}/${name}${mark(thread)}`, async () => {
        const id = projectId(owner, name);
        const [note, web] = await Promise.all([
          (thread.kind === 'pull' ? api.MergeRequestNotes : api.IssueNotes).create(id, thread.number, body),
          webUrl(owner, name),
        ]);
        return commentOf(web, thread, note as unknown as NoteView);
      }),

    editComment: (owner, name, thread, commentId, body) =>
      call(`editing comment ${commentId} on ${owner}/${name}${mark(thread)}`, async () => {
        const notes = thread.kind === 'pull' ? api.MergeRequestNotes : api.IssueNotes;
        await notes.edit(projectId(owner, name), thread.number, Number(commentId), { body });
      }),

    /** An award emoji; a line comment is a note like any other. */
    react: (owner, name, target, reaction) =>
      call(`reacting on ${owner}/${name}${mark(target.thread)}`, async () => {
        const [id, iid, emoji] = [projectId(owner, name), target.thread.number, EMOJI[reaction]];
        const pull = target.thread.kind === 'pull';
        try {
          if (target.on === 'thread')
            await (pull ? api.MergeRequestAwardEmojis : api.IssueAwardEmojis).award(id, iid, emoji);
          else
            await (pull ? api.MergeRequestNoteAwardEmojis : api.IssueNoteAwardEmojis).award(
              id,
              iid,
              Number(target.commentId),
              emoji,
            );
        } catch (err) {
          if (!alreadyAwarded(err)) throw err;
        }
      }),

    ciJobs: (owner, name, sha) =>
      call(`reading the pipelines of ${owner}/${name}@${sha.slice(0, 8)}`, () =>
        gitLabCiJobs(api, projectId(owner, name), sha),
      ),

    ciLog: (owner, name, job) =>
      call(`reading the trace of ${job.name} on ${owner}/${name}`, () => gitLabCiLog(api, projectId(owner, name), job)),
  };

  /** A user's numeric id by username (the members API takes ids only), undefined when GitLab has none. */
  async function userId(login: string): Promise<number | undefined> {
    const found = (await api.Users.all({ username: login })) as unknown as { id: number; username: string }[];
    return found.find((u) => u.username.toLowerCase() === login.toLowerCase())?.id;
  }

  async function webUrl(owner: string, name: string): Promise<string> {
    return (await project(owner, name)).web_url;
  }

  /** Every note of the thread, oldest first (up to 20 pages of 100). */
  async function allNotes(owner: string, name: string, thread: ThreadRef): Promise<NoteView[]> {
    const notes = thread.kind === 'pull' ? api.MergeRequestNotes : api.IssueNotes;
    const options = { sort: 'asc' as const, orderBy: 'created_at' as const, perPage: 100, maxPages: 20 };
    return (await notes.all(projectId(owner, name), thread.number, options)) as unknown as NoteView[];
  }
}

/** How GitLab writes a reference to an issue (#N) or a merge request (!N). */
const mark = (thread: ThreadRef): string => `${thread.kind === 'pull' ? '!' : '#'}${thread.number}`;

/**
 * A merge request, draft by GitLab's `Draft: ` title prefix. From a fork it is created on the
 * fork (the source project) with `target_project_id`, as GitLab wants.
 */
async function openMergeRequest(api: InstanceType<typeof Gitlab>, p: NewPull): Promise<OpenedPull> {
  const title = p.draft && !DRAFT.test(p.title) ? `Draft: ${p.title}` : p.title;
  const target = projectId(p.owner, p.name);
  const source = p.from ? projectId(p.from.owner, p.from.name) : target;
  const targetProjectId = p.from ? ((await api.Projects.show(target)) as unknown as ProjectView).id : undefined;
  const mr = (await api.MergeRequests.create(source, p.branch, p.base, title, {
    description: p.body,
    removeSourceBranch: false,
    ...(targetProjectId !== undefined ? { targetProjectId } : {}),
  })) as unknown as MergeRequestView;
  return openedOf(mr);
}

/** GitLab signs nothing: it sends the hook's secret token back as X-Gitlab-Token, which must equal the secret. */
const verifyDelivery = (headers: DeliveryHeaders, _body: Buffer, secret: string): boolean =>
  sameSecret(header(headers, 'x-gitlab-token'), secret);

/** A GitLab path segment: letters, digits, `_`, `.`, `-`; not starting with `-`, not ending `.git`/`.atom`. */
const SEGMENT = /^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,254}$/;

/** gitlab.com and self-managed GitLab: projects in nested groups, /-/merge_requests/N, OAuth applications. */
export const gitLabKind: HostKind = {
  kind: 'gitlab',
  productName: 'GitLab',
  tokenHint: 'personal access token (api scope)',
  brand: 'gitlab',
  pullNoun: 'merge request',
  client: gitLab,
  groups: gitLabGroups,
  repoPath: (segments) => {
    // GitLab's web routes sit behind `/-/` (…/project/-/tree/main): such a URL names a page, not a project.
    if (segments.includes('-')) return 'the path names a page of the project, not the project (drop the /-/… part)';
    if (segments.length < 2 || segments.length > 20) return 'the path must be GROUP/…/PROJECT (2 to 20 parts)';
    const bad = segments.find((s) => !SEGMENT.test(s) || /\.(git|atom)$/i.test(s) || s === '.' || s === '..');
    if (bad !== undefined) return `"${bad}" is not a valid GitLab group or project path`;
    return { owner: segments.slice(0, -1).join('/'), name: segments[segments.length - 1]! };
  },
  pullOfPath: (path) => {
    const m = /^(.+)\/([^/]+)\/-\/merge_requests\/(\d+)$/.exec(path);
    return m ? { owner: m[1]!, name: m[2]!, number: Number(m[3]) } : undefined;
  },
  verifyDelivery,
  // Idempotency-Key (GitLab ≥ 17.4) is the one kept on a retry; older servers have only the event's UUID.
  deliveryId: (headers) => firstHeader(headers, 'idempotency-key', 'x-gitlab-event-uuid'),
  deliveryEvent: (headers) => header(headers, 'x-gitlab-event'),
  readEvent: readGitLabEvent,
  gitUser: 'oauth2',
  oauth: {
    authorizePath: '/oauth/authorize',
    tokenPath: '/oauth/token',
    connectScope: 'api',
    loginScope: 'read_user',
  },
};
