import type { ScmKindName } from '../config/scm-hosts.js';
import type { CiJob } from './ci.js';
import type { DeliveryHeaders } from './deliveries.js';
import type { ReadEvent } from './host-events.js';
import type { RepoPath, ScmUser, ThreadRef } from './refs.js';

export type { RepoPath, ScmUser, ThreadRef } from './refs.js';

/**
 * What the service needs of a code host (GitHub, GitLab, Gitea/Forgejo):
 * the account behind a token, repositories as the caller sees them, forks, pull requests (merge
 * requests on GitLab) and what happened to them. Task creation (access rules), the pr step,
 * merge tracking, connecting accounts and deploy-git use this interface, never an adapter's own
 * client, so another host is one more adapter behind it. Every failure is an ScmError.
 */

/** A repository as the service needs it, from the caller's point of view. */
export interface ScmRepo {
  /** The namespace: a user or organisation, or on GitLab a group path such as `group/subgroup`. */
  owner: string;
  name: string;
  fullName: string;
  /** Anything but public: GitLab's `internal` counts as private for the access rules. */
  private: boolean;
  visibility: 'public' | 'internal' | 'private';
  defaultBranch: string;
  htmlUrl: string;
  cloneUrl: string;
  fork: boolean;
  /** What the caller (the token's user; nobody when anonymous) may do. */
  canPush: boolean;
}

export interface ScmPull {
  number: number;
  url: string;
  title: string;
  draft: boolean;
  state: 'open' | 'closed';
  merged: boolean;
  mergedAt: Date | null;
  headSha: string;
  /** The source branch. */
  headRef: string;
  /** Its branch is in another repository (a fork, or one since deleted) than the pull request's. */
  fromFork: boolean;
}

export interface ScmCommit {
  sha: string;
  authorEmail: string | null;
  committerEmail: string | null;
  message: string;
}

/**
 * Refusals the pr step acts on, whatever words the host uses for them: a pull request from this
 * branch is already open; the repository takes no drafts.
 */
export type ScmRefusal = 'pull_exists' | 'drafts_disallowed';

/** The code host refused or failed: the status and the host's own message. Never carries the token. */
export class ScmError extends Error {
  override name = 'ScmError';
  constructor(
    readonly status: number | null,
    message: string,
    readonly refusal?: ScmRefusal,
  ) {
    super(message);
  }
}

/** A pull request the service opened or found open. */
export interface OpenedPull {
  number: number;
  url: string;
  draft: boolean;
}

/** Where a pull request's branch lives when it is not the target repository: the caller's fork. */
export interface PullSource {
  owner: string;
  name: string;
}

export interface NewPull {
  /** The target repository. */
  owner: string;
  name: string;
  /** The branch with the change, in the target repository or in `from`. */
  branch: string;
  from?: PullSource;
  base: string;
  title: string;
  body: string;
  draft: boolean;
}

/**
 * The code-host events emend asks a repository's webhook for, in emend's words (GitHub's names,
 * and `ci` for a commit's checks: GitHub check suites, check runs and statuses, GitLab pipelines,
 * Gitea statuses and Actions runs and jobs); each adapter asks its host for its own events that
 * carry them.
 */
export type HookEvent = 'issue_comment' | 'issues' | 'pull_request_review' | 'pull_request_review_comment' | 'ci';

/** A webhook to register: where the host delivers, the secret it signs (or sends) with, what for. */
export interface NewHook {
  url: string;
  secret: string;
  events: HookEvent[];
}

/** What a person may do on a repository, in emend's words: write or more (GitHub write/maintain/admin, GitLab Developer and up, Gitea write/admin/owner), read only, or nothing. */
export type RepoPermission = 'write' | 'read' | 'none';

/** A comment as emend reads or writes it; `id` in the host's words (a number as text). */
export interface ScmComment {
  id: string;
  author: string;
  body: string;
  url: string;
  createdAt: Date;
}

/** A comment on a line of a pull request's change (a review comment, a GitLab diff note). */
export interface ScmLineComment extends ScmComment {
  path: string;
  /** The line in the new version of the file; null when the comment is on a removed line or the file. */
  line: number | null;
}

/**
 * What a comment, an issue or a pull request gets as a reaction. `eyes` when emend takes a request up,
 * `+1` when it answers; each host names them its way (GitLab `eyes` / `thumbsup`).
 */
export type Reaction = 'eyes' | '+1' | 'confused';

/** Where a reaction goes: the thread itself (a label), or one of its comments. */
export type ReactionTarget =
  | { on: 'thread'; thread: ThreadRef }
  | { on: 'comment'; thread: ThreadRef; commentId: string }
  | { on: 'line_comment'; thread: ThreadRef; commentId: string };

export interface CodeHost {
  /** The token's user (its login). */
  user(): Promise<string>;
  /** The repository as the caller sees it, or null when it does not exist or is hidden from them. */
  repo(owner: string, name: string): Promise<ScmRepo | null>;
  /** A new repository of the token's user. */
  createRepo(name: string, isPrivate: boolean, description?: string): Promise<ScmRepo>;
  /** The caller's fork of owner/name, made if missing. */
  fork(owner: string, name: string): Promise<ScmRepo>;
  /** Brings a fork's branch up to its parent's. */
  syncFork(owner: string, name: string, branch: string): Promise<void>;
  /** Opens a pull request; ScmError with `refusal` set when one is open already or drafts are refused. */
  openPull(p: NewPull): Promise<OpenedPull>;
  /** The open pull request on owner/name from `branch` (in `from` when given), if there is one. */
  openPullFrom(owner: string, name: string, branch: string, from?: PullSource): Promise<OpenedPull | undefined>;
  pull(owner: string, name: string, number: number): Promise<ScmPull>;
  pullCommits(owner: string, name: string, number: number): Promise<ScmCommit[]>;
  /** Registers a webhook on owner/name (the caller must be allowed to manage its hooks); the host's id for it. */
  createHook(owner: string, name: string, hook: NewHook): Promise<{ id: string }>;
  /**
   * Makes an existing webhook ask for `hook.events` (emend's hook as it registers one now): GitHub and
   * Gitea change its events only; GitLab's edit takes the URL and the token again, so they are sent
   * as `hook` has them. A hook the host no longer has is an ScmError 404.
   */
  updateHook(owner: string, name: string, id: string, hook: NewHook): Promise<void>;
  /** Removes a webhook; one the host no longer has (404) counts as removed. */
  deleteHook(owner: string, name: string, id: string): Promise<void>;
  /** What `user` may do on owner/name (asked by the repository's enabling account, which can see its members). */
  permission(owner: string, name: string, user: ScmUser): Promise<RepoPermission>;
  /** The thread's comments, oldest first, at most `limit` of the newest (not the issue's own text). */
  comments(owner: string, name: string, thread: ThreadRef, limit: number): Promise<ScmComment[]>;
  /** The line comments of a pull request's review (`reviewId`), or all of the pull request's when none is given. */
  lineComments(owner: string, name: string, pull: number, reviewId?: string): Promise<ScmLineComment[]>;
  /** Posts a comment on the thread. */
  comment(owner: string, name: string, thread: ThreadRef, body: string): Promise<ScmComment>;
  /** Replaces the text of a comment the caller wrote. */
  editComment(owner: string, name: string, thread: ThreadRef, commentId: string, body: string): Promise<void>;
  /** Adds a reaction as the caller; one it has already added is no error. */
  react(owner: string, name: string, target: ReactionTarget, reaction: Reaction): Promise<void>;
  /** The CI jobs of a commit (checks, statuses, pipeline jobs), the latest run of each. */
  ciJobs(owner: string, name: string, sha: string): Promise<CiJob[]>;
  /**
   * A job's log as the host keeps it, plain text, or null when it keeps none the API gives (a
   * status from another service, a log expired, a host whose API has no logs).
   */
  ciLog(owner: string, name: string, job: CiJob): Promise<string | null>;
}

/** A user as the host shows the token's own: the email is null when the host hides it. */
export interface ScmSelf {
  login: string;
  name: string;
  email: string | null;
}

/**
 * A GitLab group's or a Gitea organisation's side of the host, as a bot's token sees it
 * (docs/code-host.md, "GitLab groups and Gitea organisations"). Every failure is an ScmError.
 */
export interface GroupHost {
  /** The token's user. */
  self(): Promise<ScmSelf>;
  /** The group (GitLab: its full path, nested) or organisation as the caller sees it, or null when hidden or missing. */
  group(path: string): Promise<{ id: string; path: string } | null>;
  /** Registers a webhook on the group for every repository in it; the caller must manage its hooks. */
  createGroupHook(group: string, hook: NewHook): Promise<{ id: string }>;
  /** Removes a group webhook; one the host no longer has (404) counts as removed. */
  deleteGroupHook(group: string, id: string): Promise<void>;
}

/** What every adapter is made from: the host's API address, the fetch to use, the caller's token. */
export interface CodeHostOptions {
  apiUrl: string;
  fetch: typeof fetch;
  /** The account's token; without one, public data is read anonymously. */
  token?: string;
  /** How long one request may take before it fails as "did not answer in time" (default 20 s). */
  timeoutMs?: number;
}

/** A code host that does not answer must not hold a task, a request or a worker: 20 s per request. */
export const SCM_REQUEST_TIMEOUT_MS = 20_000;

/** A repository name as GitHub and Gitea take one: letters, digits, `-`, `_`, `.` (not . or ..). */
const REPO_NAME = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * HostKind.repoPath of a host whose repositories are OWNER/NAME (GitHub, Gitea): two segments, an
 * owner the host's own rule accepts and a repository name.
 */
export function ownerNamePath(segments: string[], validOwner: (owner: string) => boolean): RepoPath | string {
  if (segments.length !== 2) return 'the path must be OWNER/NAME';
  const [owner, name] = segments as [string, string];
  if (!validOwner(owner) || !REPO_NAME.test(name) || name === '.' || name === '..')
    return 'the owner or repository name is not valid';
  return { owner, name };
}

/** HostKind.pullOfPath of such a host: OWNER/NAME/`pulls`/N, `pulls` the word of its pull request pages. */
export function ownerNamePull(path: string, pulls: string): (RepoPath & { number: number }) | undefined {
  const m = new RegExp(`^([^/]+)/([^/]+)/${pulls}/(\\d+)$`).exec(path);
  return m ? { owner: m[1]!, name: m[2]!, number: Number(m[3]) } : undefined;
}

/**
 * What differs between kinds of code host beyond the API client: how their web addresses of
 * repositories and pull requests read, how git authenticates, where their OAuth endpoints are.
 * Each adapter exports one; src/scm/kinds.ts lists them.
 */
export interface HostKind {
  kind: ScmKindName;
  /** The product's name for people ("GitLab"): messages, the panel (web/src/api/host-kinds.ts is generated from it). */
  productName: string;
  /** What the product calls the token a user pastes to connect, with the scope it needs (the panel's hint). */
  tokenHint: string;
  /** The profile key that carries the login (the spec: "the real key name carries the hosting brand"). */
  brand: string;
  /** What the host calls a pull request, for messages ("merge request" on GitLab). */
  pullNoun: string;
  client(options: CodeHostOptions): CodeHost;
  /** Groups or organisations with a bot and one webhook for all their repositories (GitLab, Gitea; not GitHub, which has its App). */
  groups?(options: CodeHostOptions): GroupHost;
  /**
   * A repository path's segments (after the web URL, `.git` removed) as owner and name, or a
   * sentence saying why they are not one (GitLab allows nested groups; GitHub and Gitea two parts).
   */
  repoPath(segments: string[]): RepoPath | string;
  /** The path a pull request's web URL has after the web URL, read back, or undefined. */
  pullOfPath(path: string): (RepoPath & { number: number }) | undefined;
  /**
   * Whether a webhook delivery is the host's, made with `secret`: its signature of the raw `body`
   * (GitHub, Gitea) or the token it sends (GitLab), compared in constant time. A missing or
   * malformed header is false, never an exception. Header names in any case.
   */
  verifyDelivery(headers: DeliveryHeaders, body: Buffer, secret: string): boolean;
  /** The delivery's id, the same on a redelivery (what makes one recognisable). */
  deliveryId(headers: DeliveryHeaders): string | undefined;
  /** The event, in the host's words (GitHub `issue_comment`, GitLab `Note Hook`, Gitea `issue_comment`). */
  deliveryEvent(headers: DeliveryHeaders): string | undefined;
  /**
   * The delivery's payload (JSON, parsed) under its event word (`deliveryEvent`) in emend's words,
   * or why it is none emend reads. Never throws: a payload missing a field is `ignored` naming it.
   */
  readEvent(event: string, payload: unknown): ReadEvent;
  /** The HTTP Basic user name git sends with the token as password. */
  gitUser: string;
  oauth: {
    /** Paths under the web URL. */
    authorizePath: string;
    tokenPath: string;
    /** Scopes asked for to connect an account (push, open pull requests) and to sign in (identity only). */
    connectScope: string;
    loginScope: string;
  };
}
