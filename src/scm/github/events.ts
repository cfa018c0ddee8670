import { z } from 'zod';
import {
  COMMENT_ACTIONS,
  Comment,
  Envelope,
  RepoRef,
  ThreadFields,
  baseOf,
  commentOf,
  pullThread,
  repoOf,
  threadOf,
} from '../github-style-payloads.js';
import type { EventThread, ReadEvent, ReviewState } from '../host-events.js';
import { checkRun, checkSuite, commitStatus } from '../github-style-ci-events.js';
import { type EventReader, eventReader, quoted, readFields } from '../payload-fields.js';

/**
 * GitHub's webhook deliveries in emend's words (`gitHubKind.readEvent`), read from the payloads
 * GitHub documents (docs.github.com/en/webhooks/webhook-events-and-payloads): a conversation
 * comment, a review comment on a line, a review submitted, a label added to an issue or a pull
 * request. Only the fields emend needs are checked; anything else is `ignored` with the reason.
 */

const Issue = ThreadFields.extend({
  // Present (an object of links) when the issue is a pull request: GitHub's pull requests are issues too.
  pull_request: z.object({}).nullish(),
});

const Pull = ThreadFields.extend({
  // head.repo is null when the fork the pull request came from was deleted.
  head: z.object({ ref: z.string(), repo: RepoRef.nullable() }),
  base: z.object({ repo: RepoRef }),
});

const IssueComment = Envelope.extend({ issue: Issue, comment: Comment });
const IssueLabeled = Envelope.extend({ issue: Issue, label: z.object({ name: z.string() }) });
const PullLabeled = Envelope.extend({ pull_request: Pull, label: z.object({ name: z.string() }) });
const ReviewComment = Envelope.extend({
  pull_request: Pull,
  // line: the line in the new version of the file; null on a removed line, a comment on the whole
  // file (subject_type "file"), or one outdated by later pushes.
  comment: Comment.extend({ path: z.string(), line: z.number().int().nullish() }),
});
const Review = Envelope.extend({
  pull_request: Pull,
  review: z.object({ id: z.number().int(), body: z.string().nullish(), state: z.string(), html_url: z.string() }),
});

const Action = z.object({ action: z.string() });

/** A review's state in emend's words: GitHub's webhooks write it lower-case, its REST API upper-case. */
function reviewState(state: string): ReviewState | undefined {
  switch (state.toLowerCase()) {
    case 'approved':
      return 'approved';
    case 'changes_requested':
      return 'changes_requested';
    case 'commented':
      return 'commented';
    default:
      return undefined;
  }
}

/** An issue, or a pull request seen as an issue: an issue_comment payload carries no branch, so no headBranch. */
function issueThread(i: z.infer<typeof Issue>): EventThread {
  return threadOf(i, i.pull_request ? 'pull' : 'issue');
}

/** A pull request with its source branch, and the fork it lives in when not the base repository. */
function pullRequestThread(p: z.infer<typeof Pull>): EventThread {
  return pullThread(p, repoOf(p.base.repo));
}

/**
 * The payload's action, when it is one of `actions`, and its fields under `schema`; or why it is
 * not read (`notRead` words an action it does not read, given quoted).
 */
function readAction<const A extends string, T>(
  payload: unknown,
  actions: readonly A[],
  notRead: (action: string) => string,
  schema: z.ZodType<T>,
): { action: A; fields: T } | { ignored: string } {
  const a = readFields(Action, payload);
  if ('ignored' in a) return a;
  const action = actions.find((known) => known === a.fields.action);
  if (action === undefined) return { ignored: notRead(quoted(a.fields.action)) };
  const read = readFields(schema, payload);
  return 'ignored' in read ? read : { action, fields: read.fields };
}

function issueComment(payload: unknown): ReadEvent {
  const read = readAction(payload, COMMENT_ACTIONS, (a) => `an issue_comment ${a}, not one emend reads`, IssueComment);
  if ('ignored' in read) return read;
  const { action, fields: p } = read;
  return { kind: 'comment', action, ...baseOf(p, () => issueThread(p.issue)), comment: commentOf(p.comment) };
}

/**
 * A label added, on an issue (`issues`) or a pull request (`pull_request`): the two payloads
 * differ only in where the thread is.
 */
function labeled<T extends z.infer<typeof Envelope> & { label: { name: string } }>(
  schema: z.ZodType<T>,
  threadOf: (p: T) => EventThread,
): EventReader {
  return (payload, word) => {
    const read = readAction(payload, ['labeled'], (a) => `${word} ${a}: only a label added is read`, schema);
    if ('ignored' in read) return read;
    const p = read.fields;
    return { kind: 'labeled', label: p.label.name, ...baseOf(p, () => threadOf(p)) };
  };
}

function reviewComment(payload: unknown): ReadEvent {
  const read = readAction(
    payload,
    COMMENT_ACTIONS,
    (a) => `a pull_request_review_comment ${a}, not one emend reads`,
    ReviewComment,
  );
  if ('ignored' in read) return read;
  const { action, fields: p } = read;
  return {
    kind: 'line_comment',
    action,
    ...baseOf(p, () => pullRequestThread(p.pull_request)),
    comment: { ...commentOf(p.comment), path: p.comment.path, line: p.comment.line ?? null },
  };
}

function reviewSubmitted(payload: unknown): ReadEvent {
  const read = readAction(
    payload,
    ['submitted'],
    (a) => `pull_request_review ${a}: only a review submitted is read`,
    Review,
  );
  if ('ignored' in read) return read;
  const p = read.fields;
  const state = reviewState(p.review.state);
  if (!state) return { ignored: `the payload's review.state ${quoted(p.review.state)} is not a review emend reads` };
  return {
    kind: 'review',
    ...baseOf(p, () => pullRequestThread(p.pull_request)),
    // A review submitted with no text has body null.
    review: { id: String(p.review.id), state, body: p.review.body ?? '', url: p.review.html_url },
  };
}

/** `gitHubKind.readEvent`: a delivery under its X-GitHub-Event word. */
export const readGitHubEvent = eventReader('GitHub', {
  ping: () => ({ ignored: 'a ping' }),
  issue_comment: issueComment,
  issues: labeled(IssueLabeled, (p) => issueThread(p.issue)),
  pull_request: labeled(PullLabeled, (p) => pullRequestThread(p.pull_request)),
  pull_request_review_comment: reviewComment,
  pull_request_review: reviewSubmitted,
  check_suite: checkSuite,
  check_run: checkRun,
  status: commitStatus,
});
