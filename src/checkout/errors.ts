export type TaskCheckoutErrorReason =
  | 'bad_request'
  | 'auth'
  | 'repo_not_found'
  | 'missing_branch'
  | 'timeout'
  | 'aborted'
  | 'git';

/** What went wrong while preparing a checkout, in words a task's log can show; never holds a token. */
export class TaskCheckoutError extends Error {
  constructor(
    readonly reason: TaskCheckoutErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'TaskCheckoutError';
  }
}
