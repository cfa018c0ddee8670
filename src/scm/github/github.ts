import { Octokit } from '@octokit/rest';
import {
  type CodeHost,
  type CodeHostOptions,
  type HookEvent,
  type HostKind,
  type NewHook,
  type NewPull,
  type PullSource,
  type Reaction,
  type ReactionTarget,
  type RepoPermission,
  type ScmComment,
  type ScmCommit,
  type ScmLineComment,
  SCM_REQUEST_TIMEOUT_MS,
  ScmError,
  type ScmPull,
  type ScmRefusal,
  type ScmRepo,
  ownerNamePath,
  ownerNamePull,
} from '../code-host.js';
import { type DeliveryHeaders, header, signedWith } from '../deliveries.js';
import { readGitHubEvent } from './events.js';
import { gitHubCiJobs, gitHubCiLog } from './ci.js';

/**
 * The brand of the code host this adapter speaks to (github.com or a GitHub Enterprise server,
 * whichever EMEND_SCM_*_URL names). The profile shows the login under this key beside `scm`.
 */
export const SCM_BRAND = 'github' as const;

/** GitHub's words for the refusals the pr step acts on (422 Validation Failed details). */
function refusalOf(message: string): ScmRefusal | undefined {
  if (/a pull request already exists for/i.test(message)) return 'pull_exists';
  if (/draft pull requests are not supported/i.test(message)) return 'drafts_disallowed';
  return undefined;
}

/** GitHub's error body in one line: its message, then the validation errors' messages. */
function describe(err: unknown, what: string): ScmError {
  const e = err as { name?: string; status?: number; response?: { data?: unknown }; message?: string };
  // Octokit reports a refused connection or a timeout as an HttpError 500 with no response.
  if (e?.name === 'HttpError' && typeof e.status === 'number' && e.status > 0 && e.response) {
    const data = (e.response?.data ?? {}) as {
      message?: string;
      errors?: ({ message?: string; code?: string; field?: string } | string)[];
    };
    const details = (data.errors ?? [])
      .map((x) => (typeof x === 'string' ? x : (x.message ?? [x.field, x.code].filter(Boolean).join(' '))))
      .filter(Boolean)
      .join('; ');
    const message = [data.message ?? e.message ?? 'error', details].filter(Boolean).join(': ');
    return new ScmError(e.status, `${what}: the code host answered HTTP ${e.status}: ${message}`, refusalOf(message));
  }
  const timeout = e?.name === 'TimeoutError' || /timeout|aborted/i.test(e?.message ?? '');
  return new ScmError(null, `${what}: the code host ${timeout ? 'did not answer in time' : 'could not be reached'}`);
}

const repoOf = (r: {
  name: string;
  full_name: string;
  owner: { login: string };
  private: boolean;
  visibility?: string;
  default_branch?: string;
  html_url: string;
  clone_url?: string;
  fork: boolean;
  permissions?: { push?: boolean; admin?: boolean };
}): ScmRepo => ({
  owner: r.owner.login,
  name: r.name,
  fullName: r.full_name,
  private: r.private,
  visibility: r.private ? (r.visibility === 'internal' ? 'internal' : 'private') : 'public',
  defaultBranch: r.default_branch ?? 'main',
  htmlUrl: r.html_url,
  cloneUrl: r.clone_url ?? `${r.html_url}.git`,
  fork: r.fork,
  canPush: !!(r.permissions?.push || r.permissions?.admin),
});

/** GitHub's roles (role_name, or the older `permission`) in emend's words: maintain and admin write, triage reads. */
const PERMISSIONS: Record<string, RepoPermission> = {
  admin: 'write',
  maintain: 'write',
  write: 'write',
  triage: 'read',
  read: 'read',
};

type CommentView = {
  id: number;
  body?: string;
  user?: { login: string } | null;
  html_url: string;
  created_at: string;
};

const commentOf = (c: CommentView): ScmComment => ({
  id: String(c.id),
  author: c.user?.login ?? '',
  body: c.body ?? '',
  url: c.html_url,
  createdAt: new Date(c.created_at),
});

const lineCommentOf = (c: CommentView & { path: string; line?: number | null }): ScmLineComment => ({
  ...commentOf(c),
  path: c.path,
  line: c.line ?? null,
});

/**
 * An Octokit on the host's API with emend's per-request timeout and no console logging (its
 * warnings reach the caller as errors). `auth`/`authStrategy` as Octokit takes them.
 */
export function octokitOn(
  options: { apiUrl: string; fetch: typeof fetch; timeoutMs?: number },
  auth: Pick<ConstructorParameters<typeof Octokit>[0] & object, 'auth' | 'authStrategy'> = {},
): Octokit {
  const fetchWithTimeout: typeof fetch = (input, init) =>
    options.fetch(input, {
      ...init,
      signal: init?.signal ?? AbortSignal.timeout(options.timeoutMs ?? SCM_REQUEST_TIMEOUT_MS),
    });
  return new Octokit({
    ...auth,
    baseUrl: options.apiUrl,
    userAgent: 'emend',
    request: { fetch: fetchWithTimeout },
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });
}

/** Runs one call to the host; a failure is an ScmError saying what was asked. */
export async function scmCall<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw describe(err, what);
  }
}

/**
 * The GitHub adapter (github.com or GitHub Enterprise Server, by apiUrl) on Octokit. Every
 * failure is an ScmError carrying the host's status and message.
 */
export function gitHub(options: CodeHostOptions): CodeHost {
  const octokit = octokitOn(options, { auth: options.token });
  const call = scmCall;

  return {
    /** The token's user. */
    user: () => call('checking the token', async () => (await octokit.rest.users.getAuthenticated()).data.login),

    /** The repository as the caller sees it, or null when it does not exist or is hidden from them. */
    repo: (owner: string, name: string) =>
      call(`reading ${owner}/${name}`, async () => {
        try {
          return repoOf((await octokit.rest.repos.get({ owner, repo: name })).data);
        } catch (err) {
          if ((err as { status?: number }).status === 404) return null;
          throw err;
        }
      }),

    createRepo: (name: string, isPrivate: boolean, description?: string) =>
      call(`creating the repository ${name}`, async () =>
        repoOf(
          (
            await octokit.rest.repos.createForAuthenticatedUser({
              name,
              private: isPrivate,
              description,
              auto_init: false,
            })
          ).data,
        ),
      ),

    /** The caller's fork of owner/name (made if missing; GitHub returns the existing one). */
    fork: (owner: string, name: string) =>
      call(`forking ${owner}/${name}`, async () =>
        repoOf((await octokit.rest.repos.createFork({ owner, repo: name })).data),
      ),

    /** Brings a fork's branch up to its parent's. */
    syncFork: (owner: string, name: string, branch: string) =>
      call(`syncing the fork ${owner}/${name}`, async () => {
        await octokit.rest.repos.mergeUpstream({ owner, repo: name, branch });
      }),

    openPull: (p: NewPull) =>
      call(`opening a pull request on ${p.owner}/${p.name}`, async () => {
        const { data } = await octokit.rest.pulls.create({
          owner: p.owner,
          repo: p.name,
          head: p.from ? `${p.from.owner}:${p.branch}` : p.branch,
          base: p.base,
          title: p.title,
          body: p.body,
          draft: p.draft,
          maintainer_can_modify: true,
        });
        return { number: data.number, url: data.html_url, draft: !!data.draft };
      }),

    openPullFrom: (owner: string, name: string, branch: string, from?: PullSource) =>
      call(`reading the pull requests of ${owner}/${name}`, async () => {
        const head = `${from?.owner ?? owner}:${branch}`;
        const { data } = await octokit.rest.pulls.list({ owner, repo: name, head, state: 'open', per_page: 1 });
        const found = data[0];
        return found ? { number: found.number, url: found.html_url, draft: !!found.draft } : undefined;
      }),

    pull: (owner: string, name: string, number: number): Promise<ScmPull> =>
      call(`reading pull request ${owner}/${name}#${number}`, async () => {
        const { data } = await octokit.rest.pulls.get({ owner, repo: name, pull_number: number });
        const headRepo = data.head.repo?.full_name;
        return {
          number: data.number,
          url: data.html_url,
          title: data.title,
          draft: !!data.draft,
          state: data.state as 'open' | 'closed',
          merged: !!data.merged,
          mergedAt: data.merged_at ? new Date(data.merged_at) : null,
          headSha: data.head.sha,
          headRef: data.head.ref,
          fromFork: headRepo?.toLowerCase() !== `${owner}/${name}`.toLowerCase(),
        };
      }),

    pullCommits: (owner: string, name: string, number: number): Promise<ScmCommit[]> =>
      call(`reading the commits of ${owner}/${name}#${number}`, async () => {
        const commits = await octokit.paginate(octokit.rest.pulls.listCommits, {
          owner,
          repo: name,
          pull_number: number,
          per_page: 100,
        });
        return commits.map((c) => ({
          sha: c.sha,
          authorEmail: c.commit.author?.email ?? null,
          committerEmail: c.commit.committer?.email ?? null,
          message: c.commit.message,
        }));
      }),

    /** emend's event names are GitHub's own (its checks: three of them); JSON bodies, signed with the secret, TLS verified. */
    createHook: (owner: string, name: string, hook: NewHook) =>
      call(`adding a webhook to ${owner}/${name}`, async () => {
        const { data } = await octokit.rest.repos.createWebhook({
          owner,
          repo: name,
          name: 'web',
          config: { url: hook.url, content_type: 'json', secret: hook.secret, insecure_ssl: '0' },
          events: [...new Set(hook.events.flatMap((e) => HOOK_EVENTS[e]))],
          active: true,
        });
        return { id: String(data.id) };
      }),

    // The config (URL, secret) stays as registered: only the events change.
    updateHook: (owner: string, name: string, id: string, hook: NewHook) =>
      call(`changing a webhook's events on ${owner}/${name}`, async () => {
        await octokit.rest.repos.updateWebhook({
          owner,
          repo: name,
          hook_id: Number(id),
          events: [...new Set(hook.events.flatMap((e) => HOOK_EVENTS[e]))],
          active: true,
        });
      }),

    deleteHook: (owner: string, name: string, id: string) =>
      call(`removing a webhook from ${owner}/${name}`, async () => {
        try {
          await octokit.rest.repos.deleteWebhook({ owner, repo: name, hook_id: Number(id) });
        } catch (err) {
          // Gone already (removed on GitHub, or the repository with it): what deleting wanted.
          if ((err as { status?: number }).status !== 404) throw err;
        }
      }),

    /** A user GitHub does not know (404) may do nothing. */
    permission: (owner, name, user) =>
      call(`reading ${user.login}'s permission on ${owner}/${name}`, async () => {
        try {
          const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({
            owner,
            repo: name,
            username: user.login,
          });
          return PERMISSIONS[data.role_name] ?? PERMISSIONS[data.permission] ?? 'none';
        } catch (err) {
          if ((err as { status?: number }).status === 404) return 'none';
          throw err;
        }
      }),

    /** A pull request's conversation is its issue's on GitHub; listed oldest first, so every page is read. */
    comments: (owner, name, thread, limit) =>
      call(`reading the comments of ${owner}/${name}#${thread.number}`, async () => {
        const all = await octokit.paginate(octokit.rest.issues.listComments, {
          owner,
          repo: name,
          issue_number: thread.number,
          per_page: 100,
        });
        return limit > 0 ? all.slice(-limit).map(commentOf) : [];
      }),

    lineComments: (owner, name, pull, reviewId) =>
      call(`reading the line comments of ${owner}/${name}#${pull}`, async () => {
        const at = { owner, repo: name, pull_number: pull, per_page: 100 };
        const found = reviewId
          ? await octokit.paginate(octokit.rest.pulls.listCommentsForReview, { ...at, review_id: Number(reviewId) })
          : await octokit.paginate(octokit.rest.pulls.listReviewComments, at);
        return found.map(lineCommentOf);
      }),

    comment: (owner, name, thread, body) =>
      call(`commenting on ${owner}/${name}#${thread.number}`, async () => {
        const { data } = await octokit.rest.issues.createComment({
          owner,
          repo: name,
          issue_number: thread.number,
          body,
        });
        return commentOf(data);
      }),

    editComment: (owner, name, _thread, commentId, body) =>
      call(`editing comment ${commentId} on ${owner}/${name}`, async () => {
        await octokit.rest.issues.updateComment({ owner, repo: name, comment_id: Number(commentId), body });
      }),

    /** GitHub answers 200 for a reaction the caller had already: nothing to tell apart. */
    react: (owner, name, target: ReactionTarget, reaction: Reaction) =>
      call(`reacting on ${owner}/${name}#${target.thread.number}`, async () => {
        const at = { owner, repo: name, content: reaction };
        if (target.on === 'thread')
          await octokit.rest.reactions.createForIssue({ ...at, issue_number: target.thread.number });
        else if (target.on === 'comment')
          await octokit.rest.reactions.createForIssueComment({ ...at, comment_id: Number(target.commentId) });
        else
          await octokit.rest.reactions.createForPullRequestReviewComment({
            ...at,
            comment_id: Number(target.commentId),
          });
      }),

    ciJobs: (owner, name, sha) =>
      call(`reading the checks of ${owner}/${name}@${sha.slice(0, 7)}`, () => gitHubCiJobs(octokit, owner, name, sha)),

    ciLog: (owner, name, job) =>
      call(`reading the log of ${job.name} on ${owner}/${name}`, () => gitHubCiLog(octokit, owner, name, job)),
  };
}

/** GitHub's hook events for each of emend's: its names, and a commit's checks as check suites, check runs and statuses. */
const HOOK_EVENTS: Record<HookEvent, string[]> = {
  issue_comment: ['issue_comment'],
  issues: ['issues'],
  pull_request_review: ['pull_request_review'],
  pull_request_review_comment: ['pull_request_review_comment'],
  ci: ['check_suite', 'check_run', 'status'],
};

/** `sha256=` and the hex HMAC-SHA256 of the raw body under the hook's secret. */
function verifyDelivery(headers: DeliveryHeaders, body: Buffer, secret: string): boolean {
  const signature = header(headers, 'x-hub-signature-256');
  return !!signature?.startsWith('sha256=') && signedWith(signature.slice('sha256='.length), body, secret);
}

const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;

/** GitHub and GitHub Enterprise Server: OWNER/NAME repositories, /pull/N, OAuth apps. */
export const gitHubKind: HostKind = {
  kind: 'github',
  productName: 'GitHub',
  tokenHint: 'personal access token (repo scope)',
  brand: SCM_BRAND,
  pullNoun: 'pull request',
  client: gitHub,
  repoPath: (segments) => ownerNamePath(segments, (owner) => OWNER.test(owner)),
  pullOfPath: (path) => ownerNamePull(path, 'pull'),
  verifyDelivery,
  deliveryId: (headers) => header(headers, 'x-github-delivery'),
  deliveryEvent: (headers) => header(headers, 'x-github-event'),
  readEvent: readGitHubEvent,
  gitUser: 'x-access-token',
  oauth: {
    authorizePath: '/login/oauth/authorize',
    tokenPath: '/login/oauth/access_token',
    connectScope: 'repo',
    loginScope: 'read:user',
  },
};
