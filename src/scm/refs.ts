/**
 * The small names a code host's things go by, shared by the CodeHost interface (code-host.ts) and
 * the events read from its deliveries (host-events.ts), which both import them from here.
 */

/** A repository's place on a host: owner (a namespace path on GitLab) and name. */
export interface RepoPath {
  owner: string;
  name: string;
}

/** A person on the host: the login, and the numeric id where the host's API needs it (GitLab). */
export interface ScmUser {
  login: string;
  id?: number;
}

/** An issue or a pull request (merge request): comments on the two go to different places on GitLab. */
export interface ThreadRef {
  kind: 'issue' | 'pull';
  number: number;
}
