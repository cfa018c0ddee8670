/**
 * What the service needs of a code host (GitHub today; GitLab and Gitea/Forgejo are issue 19):
 * the account behind a token, repositories as the caller sees them, forks, pull requests (merge
 * requests on GitLab) and what happened to them. Task creation (access rules), the pr step,
 * merge tracking, connecting accounts and deploy-git use this interface, never an adapter's own
 * client, so another host is one more adapter behind it. Every failure is an ScmError.
 */

/** A repository as the service needs it, from the caller's point of view. */
export interface ScmRepo {
  owner: string;
  name: string;
  fullName: string;
  private: boolean;
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
  draft: boolean;
  state: 'open' | 'closed';
  merged: boolean;
  mergedAt: Date | null;
  headSha: string;
}

export interface ScmCommit {
  sha: string;
  authorEmail: string | null;
  committerEmail: string | null;
  message: string;
}

/** The code host refused or failed: the status and the host's own message. Never carries the token. */
export class ScmError extends Error {
  override name = 'ScmError';
  constructor(
    readonly status: number | null,
    message: string,
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

export interface NewPull {
  owner: string;
  name: string;
  /** The branch with the change: `branch`, or `owner:branch` from a fork. */
  head: string;
  base: string;
  title: string;
  body: string;
  draft: boolean;
}

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
  openPull(p: NewPull): Promise<OpenedPull>;
  /** The open pull request from `head` (owner:branch), if there is one. */
  openPullFrom(owner: string, name: string, head: string): Promise<OpenedPull | undefined>;
  pull(owner: string, name: string, number: number): Promise<ScmPull>;
  pullCommits(owner: string, name: string, number: number): Promise<ScmCommit[]>;
}
