import { z } from 'zod';
import type { RepoPath } from '../code-host.js';
import {
  Comment,
  Envelope,
  RepoRef,
  ThreadFields,
  baseOf,
  commentOf,
  isCommentAction,
  pullThread,
  threadOf,
} from '../github-style-payloads.js';
import type { EventThread, ReadEvent, ReviewState, ThreadEvent } from '../host-events.js';
import { type EventReader, eventReader, quoted, readFields } from '../payload-fields.js';
import { commitStatus, workflowJob, workflowRun } from '../github-style-ci-events.js';

/**
 * Gitea's and Forgejo's webhook deliveries in emend's words (`giteaKind.readEvent`), read from the
 * payloads Gitea builds (modules/structs/hook.go, services/webhook/notifier.go); Forgejo sends the
 * same JSON. Gitea's event header (X-Gitea-Event, X-Forgejo-Event) carries a coarse word
 * (modules/webhook/type.go, `HookEventType.Event`): `issues` for every issue event labels
 * included, `pull_request` likewise, `issue_comment` for comments on both, and
 * `pull_request_approved` / `pull_request_rejected` / `pull_request_comment` for reviews. The
 * fine word (X-Gitea-Event-Type: `issue_label`, `pull_request_review_rejected`…) is read too, so
 * either header can feed this.
 */

const Label = z.object({ name: z.string() });

const Issue = ThreadFields.extend({
  labels: z.array(Label).nullish(),
  // Present when the issue is a pull request (its merge state and page).
  pull_request: z.object({}).nullish(),
});

const Pull = ThreadFields.extend({
  labels: z.array(Label).nullish(),
  // head.repo is null when the fork the pull request came from was deleted.
  head: z.object({ ref: z.string(), repo: RepoRef.nullish() }),
});

const IssueComment = Envelope.extend({
  action: z.string(),
  issue: Issue,
  comment: Comment,
  is_pull: z.boolean().nullish(),
  // The whole pull request beside the issue, sent by newer Gitea on a pull request's comments.
  pull_request: Pull.nullish(),
});
const IssueLabels = Envelope.extend({ issue: Issue });
const PullLabels = Envelope.extend({ pull_request: Pull });
/** A review: Gitea's ReviewPayload has its type (the event's fine word) and text, no id and no lines. */
const Review = Envelope.extend({ pull_request: Pull, review: z.object({ type: z.string(), content: z.string() }) });

const Action = z.object({ action: z.string() });
/** Whether a payload under an ambiguous word is a comment (IssueCommentPayload) or a review (PullRequestPayload). */
const Shape = z.object({ comment: z.object({}).nullish(), review: z.object({}).nullish() });

type Base = Pick<ThreadEvent, 'repo' | 'thread' | 'actor'>;

/**
 * Gitea's label event says labels changed (action label_updated, on an addition and on a removal
 * alike) and sends the labels the thread has now, not the one added: `labels` lists them all and
 * `label` is the first; the receiver matches any. With none left, it was a removal.
 */
function labeled(base: Base, labels: z.infer<typeof Label>[] | null | undefined): ReadEvent {
  const names = (labels ?? []).map((l) => l.name);
  const [first] = names;
  if (first === undefined) return { ignored: 'no label is left on it (a label was removed)' };
  return { kind: 'labeled', ...base, label: first, labels: names };
}

function labelAction(payload: unknown, word: string): { ignored: string } | undefined {
  const a = readFields(Action, payload);
  if ('ignored' in a) return a;
  if (a.fields.action === 'label_updated') return undefined;
  if (a.fields.action === 'label_cleared') return { ignored: 'every label was removed' };
  return { ignored: `${word} ${quoted(a.fields.action)}: only a change of labels is read` };
}

/**
 * A change of labels on an issue (`issues`, `issue_label`) or a pull request (`pull_request`,
 * `pull_request_label`): the payloads differ only in where the thread and its labels are.
 */
function labelsChanged<T extends z.infer<typeof Envelope>, Thread extends { labels?: z.infer<typeof Label>[] | null }>(
  schema: z.ZodType<T>,
  threadIn: (p: T) => Thread,
  toThread: (t: Thread, repo: RepoPath) => EventThread,
): EventReader {
  return (payload, word) => {
    const not = labelAction(payload, word);
    if (not) return not;
    const read = readFields(schema, payload);
    if ('ignored' in read) return read;
    const thread = threadIn(read.fields);
    return labeled(
      baseOf(read.fields, (repo) => toThread(thread, repo)),
      thread.labels,
    );
  };
}

const issueLabeled = labelsChanged(
  IssueLabels,
  (p) => p.issue,
  // Gitea sends a pull request's label changes under their own word; an issue that is one is still read as a pull.
  (issue) => threadOf(issue, issue.pull_request ? 'pull' : 'issue'),
);
const pullLabeled = labelsChanged(
  PullLabels,
  (p) => p.pull_request,
  (pull, repo) => pullThread(pull, repo),
);

function issueComment(payload: unknown): ReadEvent {
  const read = readFields(IssueComment, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  if (!isCommentAction(p.action)) return { ignored: `an issue_comment ${quoted(p.action)}, not one emend reads` };
  const isPull = p.is_pull === true || !!p.issue.pull_request;
  const pull = p.pull_request;
  const base = baseOf(p, (repo) =>
    isPull && pull ? pullThread(pull, repo) : threadOf(p.issue, isPull ? 'pull' : 'issue'),
  );
  return { kind: 'comment', action: p.action, ...base, comment: commentOf(p.comment) };
}

/**
 * A review submitted. Gitea's payload has no review id (`id` is '') and, for a review with line
 * comments, neither their paths nor their lines: a review of comments is `commented`, and the
 * receiver fetches the pull request's line comments itself.
 */
function review(payload: unknown, state: ReviewState): ReadEvent {
  const read = readFields(Review, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  return {
    kind: 'review',
    ...baseOf(p, (repo) => pullThread(p.pull_request, repo)),
    review: { id: '', state, body: p.review.content, url: p.pull_request.html_url },
  };
}

/** Under a word both comments and reviews come by: a payload with a comment is one, a review's is the other. */
function commentOrReview(payload: unknown): ReadEvent {
  const shape = readFields(Shape, payload);
  if ('ignored' in shape) return shape;
  return !shape.fields.comment && shape.fields.review ? review(payload, 'commented') : issueComment(payload);
}

/** `giteaKind.readEvent`: a delivery under its X-Gitea-Event (X-Forgejo-Event) word, or the fine X-…-Event-Type. */
export const readGiteaEvent = eventReader('Gitea', {
  // issue_comment is also the word older Gitea sent a review of comments under (as a PullRequestPayload).
  issue_comment: commentOrReview,
  pull_request_comment: commentOrReview,
  issues: issueLabeled,
  issue_label: issueLabeled,
  pull_request: pullLabeled,
  pull_request_label: pullLabeled,
  pull_request_approved: (payload) => review(payload, 'approved'),
  pull_request_review_approved: (payload) => review(payload, 'approved'),
  pull_request_rejected: (payload) => review(payload, 'changes_requested'),
  pull_request_review_rejected: (payload) => review(payload, 'changes_requested'),
  pull_request_review_comment: (payload) => review(payload, 'commented'),
  status: commitStatus,
  workflow_run: workflowRun,
  workflow_job: workflowJob,
});
