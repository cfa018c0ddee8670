/**
 * A repository's CI as a code host reports it, in emend's words: the jobs (GitHub check runs and
 * commit statuses, GitLab pipeline jobs, Gitea commit statuses and Actions jobs) of one commit,
 * and what a delivery about them says. Each adapter reads its host's own shapes
 * (src/scm/<host>/ci.ts for the API, ci-events.ts for the webhooks); the triggers decide what to
 * do about a failure (src/triggers/ci-round.ts).
 */

/**
 * Where a job is: still queued or running, finished and passed (skipped and neutral count as
 * passed), failed, or cancelled (nothing to fix: someone or a newer run stopped it).
 */
export type CiState = 'pending' | 'passed' | 'failed' | 'cancelled';

/** One job (check, status) of a commit. */
export interface CiJob {
  /** The host's id of it: a check run's or Actions job's id, a GitLab job's, or a commit status's context. */
  id: string;
  name: string;
  state: CiState;
  /** Its web page (the host's job page, or the page a status links to), when the host gives one. */
  url: string | null;
  /** The step that failed, as the host names it (GitHub and Gitea Actions steps, GitLab's stage). */
  step?: string;
  /**
   * Whether the host keeps its log and lets it be read through the API (its own CI: GitHub
   * Actions, GitLab CI, Gitea Actions); a commit status another service posted has none.
   */
  hasLog: boolean;
  /** The host's one line about it: a status's description, GitLab's failure reason, a check's title. */
  summary?: string;
  /** What ran it, for people ("GitHub Actions", "GitLab CI", a status from another service). */
  source: string;
}

/** What a CI delivery says: one check, status, pipeline or workflow run finished (or changed) on a commit. */
export interface CiEvent {
  /** The commit it ran on. */
  sha: string;
  state: CiState;
  /** What reported: the check suite or run, the status context, the pipeline, the workflow run or job. */
  name: string;
  /** The pull requests (merge requests) the payload names; none when it names none (a commit status). */
  pulls: number[];
  /** The branch it ran on, where the payload says. */
  branch?: string;
  /** Its web page, where the payload has one. */
  url?: string;
}

/**
 * A host's word for a job in emend's: success, skipped and neutral pass; failure, error, timed
 * out and action required fail; cancelled is its own; anything else (queued, running, created,
 * waiting) is still pending.
 */
export function ciStateOf(word: string | null | undefined): CiState {
  switch ((word ?? '').toLowerCase()) {
    case 'success':
    case 'passed':
    case 'skipped':
    case 'neutral':
    case 'manual':
      return 'passed';
    case 'failure':
    case 'failed':
    case 'error':
    case 'errored':
    case 'timed_out':
    case 'action_required':
    case 'startup_failure':
      return 'failed';
    case 'cancelled':
    case 'canceled':
      return 'cancelled';
    default:
      return 'pending';
  }
}
