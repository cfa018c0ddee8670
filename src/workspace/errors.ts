export type WorkspaceErrorReason =
  | 'bad_request'
  | 'auth'
  | 'repo_not_found'
  | 'missing_branch'
  | 'timeout'
  | 'aborted'
  | 'git';

/** What went wrong while preparing a workspace, in words a task's log can show; never holds a token. */
export class WorkspaceError extends Error {
  constructor(
    readonly reason: WorkspaceErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'WorkspaceError';
  }
}
