import type { Ctx } from '../fake-host/rest.js';
import type { Delivery, HostActions } from '../fake-host/side.js';
import type { RepoState, Review, ReviewState, UserState } from '../fake-host/state.js';
import { commentView, issueView, pullView, repoView, userView } from './rest.js';
import { jobView, runOf, statusView } from './ci.js';

/**
 * Gitea's webhook payloads for what a person does (modules/structs/hook.go; services/webhook/
 * notifier.go). X-Gitea-Event carries the coarse word (HookEventType.Event(): `issues`,
 * `issue_comment`, `pull_request_rejected`…), X-Gitea-Event-Type the fine one (`issue_label`,
 * `pull_request_comment`, `pull_request_review_rejected`…). A hook asked for `issues` gets every
 * issue event, one asked for `pull_request` every pull request event (routers/api/v1/utils/hook.go).
 */

const about = (v: Ctx, repo: RepoState, by: UserState) => ({
  repository: repoView(v, repo, false),
  sender: userView(v, by),
});

/** A review's hook type and its X-Gitea-Event word. */
const REVIEW_TYPES: Record<ReviewState, [type: string, event: string]> = {
  approved: ['pull_request_review_approved', 'pull_request_approved'],
  changes_requested: ['pull_request_review_rejected', 'pull_request_rejected'],
  commented: ['pull_request_review_comment', 'pull_request_comment'],
};

/** A submitted review: the pull request, action `reviewed`, and `review` with only its type and text (no id, no line comments). */
function reviewed(v: Ctx, repo: RepoState, review: Review, by: UserState): Delivery {
  const [type, event] = REVIEW_TYPES[review.state];
  const pull = v.state.pull(repo, review.pull)!;
  return {
    to: ['pull_request_review', 'pull_request'],
    event,
    type,
    payload: {
      ...{ action: 'reviewed', number: pull.number, pull_request: pullView(v, repo, pull) },
      review: { type, content: review.body },
      ...about(v, repo, by),
    },
  };
}

export const giteaActions: HostActions = {
  issueOpened: (v, repo, issue, by) => [
    {
      to: ['issues'],
      event: 'issues',
      type: 'issues',
      payload: {
        ...{ action: 'opened', number: issue.number },
        issue: issueView(v, repo, { kind: 'issue', number: issue.number }),
        ...about(v, repo, by),
      },
    },
  ],
  // A pull request's comment is its own type (pull_request_comment) under the same event word.
  commented: (v, repo, c, action, by, before) => {
    const pull = c.thread.kind === 'pull';
    return [
      {
        to: pull ? ['pull_request_comment', 'pull_request'] : ['issue_comment', 'issues'],
        event: 'issue_comment',
        type: pull ? 'pull_request_comment' : 'issue_comment',
        payload: {
          ...{ action, issue: issueView(v, repo, c.thread), comment: commentView(v, repo, c) },
          ...(before !== undefined ? { changes: { body: { from: before } } } : {}),
          ...{ ...about(v, repo, by), is_pull: pull },
        },
      },
    ];
  },
  // Gitea does not say which label changed: the issue carries its labels now.
  labeled: (v, repo, issue, _label, _previous, by) => [
    {
      to: ['issue_label', 'issues'],
      event: 'issues',
      type: 'issue_label',
      payload: {
        ...{ action: 'label_updated', number: issue.number },
        issue: issueView(v, repo, { kind: 'issue', number: issue.number }),
        ...about(v, repo, by),
      },
    },
  ],
  // A line comment on its own is submitted as a review of type comment: that review's event, no path or line in it.
  lineCommented: (v, repo, _pull, _c, review, by) => [reviewed(v, repo, review, by)],
  reviewed: (v, repo, _pull, review, _comments, by) => [reviewed(v, repo, review, by)],
  // Each job's commit status (Actions posts one per job), each Actions job's workflow_job, then the run's workflow_run.
  ciReported: (v, repo, run, by) => {
    const jobs = run.jobs.filter((j) => !j.status);
    const [pull] = run.pulls;
    const forPull = pull ? { pull_request: pullView(v, repo, pull) } : {};
    const action = (w: string) => (w === 'running' ? 'in_progress' : 'completed');
    // Made once: the repository's view reads git, and every delivery carries the same.
    const around = about(v, repo, by);
    const state = jobs.some((j) => j.state === 'running') ? 'running' : 'done';
    return [
      ...run.jobs.map((j) => ({
        to: ['status'],
        event: 'status',
        type: 'status',
        payload: { ...statusView(v, repo, j), sha: run.sha, commit: { id: run.sha }, ...around },
      })),
      ...jobs.map((j) => ({
        to: ['workflow_job'],
        event: 'workflow_job',
        type: 'workflow_job',
        payload: { action: action(j.state), workflow_job: jobView(v, repo, j), ...forPull, ...around },
      })),
      ...(jobs.length > 0
        ? [
            {
              to: ['workflow_run'],
              event: 'workflow_run',
              type: 'workflow_run',
              payload: {
                action: action(state === 'running' ? 'running' : 'completed'),
                workflow_run: runOf(v, repo, run),
                ...forPull,
                ...around,
              },
            },
          ]
        : []),
    ];
  },
};
