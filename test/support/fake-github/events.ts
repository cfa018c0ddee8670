import type { Ctx } from '../fake-host/rest.js';
import type { HostActions } from '../fake-host/side.js';
import type { RepoState, UserState } from '../fake-host/state.js';
import { commentView, issueView, pullView, repoView, reviewCommentView, reviewView, userView } from './rest.js';
import { checkRunView, checkSuiteView, pullRefs, statusView } from './ci.js';
import { fullName } from '../fake-host/state.js';

/**
 * GitHub's webhook payloads for what a person does (docs.github.com "Webhook events and payloads"):
 * the event word is the subscription's, each payload has `action`, the repository and the sender,
 * its records as the REST API shows them.
 */

const about = (v: Ctx, repo: RepoState, by: UserState) => ({
  repository: repoView(v, repo, false),
  sender: userView(v, by),
});

export const githubActions: HostActions = {
  issueOpened: (v, repo, issue, by) => [
    {
      to: ['issues'],
      event: 'issues',
      payload: {
        action: 'opened',
        issue: issueView(v, repo, { kind: 'issue', number: issue.number }),
        ...about(v, repo, by),
      },
    },
  ],
  // A pull request's conversation comment is an issue comment: `issue.pull_request` tells them apart.
  commented: (v, repo, c, action, by, before) => [
    {
      to: ['issue_comment'],
      event: 'issue_comment',
      payload: {
        action,
        issue: issueView(v, repo, c.thread),
        comment: commentView(v, repo, c),
        ...(before !== undefined ? { changes: { body: { from: before } } } : {}),
        ...about(v, repo, by),
      },
    },
  ],
  labeled: (v, repo, issue, label, _previous, by) => [
    {
      to: ['issues'],
      event: 'issues',
      payload: {
        action: 'labeled',
        issue: issueView(v, repo, { kind: 'issue', number: issue.number }),
        label: { name: label },
        ...about(v, repo, by),
      },
    },
  ],
  lineCommented: (v, repo, pull, c, _review, by) => [
    {
      to: ['pull_request_review_comment'],
      event: 'pull_request_review_comment',
      payload: {
        action: 'created',
        comment: reviewCommentView(v, repo, c),
        pull_request: pullView(v, repo, pull),
        ...about(v, repo, by),
      },
    },
  ],
  // Each line comment of a submitted review is delivered as one of its own, then the review.
  reviewed: (v, repo, pull, review, comments, by) => [
    ...comments.flatMap((c) => githubActions.lineCommented(v, repo, pull, c, review, by)),
    {
      to: ['pull_request_review'],
      event: 'pull_request_review',
      payload: {
        action: 'submitted',
        review: reviewView(v, repo, review, true),
        pull_request: pullView(v, repo, pull),
        ...about(v, repo, by),
      },
    },
  ],
  // Each check run as it finished (created while running), then the suite once none runs; each status on its own.
  ciReported: (v, repo, run, by) => {
    const checks = run.jobs.filter((j) => !j.status);
    const running = checks.some((j) => j.state === 'running');
    const around = about(v, repo, by);
    return [
      ...checks.map((j) => ({
        to: ['check_run'],
        event: 'check_run',
        payload: {
          action: j.state === 'running' ? 'created' : 'completed',
          check_run: checkRunView(v, repo, j, pullRefs(run)),
          ...around,
        },
      })),
      ...(checks.length > 0 && !running
        ? [
            {
              to: ['check_suite'],
              event: 'check_suite',
              payload: { action: 'completed', check_suite: checkSuiteView(run, checks), ...around },
            },
          ]
        : []),
      ...run.jobs
        .filter((j) => j.status)
        .map((j) => ({
          to: ['status'],
          event: 'status',
          payload: {
            ...statusView(j),
            sha: run.sha,
            name: fullName(repo),
            branches: [{ name: run.branch, commit: { sha: run.sha } }],
            ...around,
          },
        })),
    ];
  },
};
