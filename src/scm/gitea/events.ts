import { z } from 'zod';
import type { RepoPath, ScmUser } from '../code-host.js';
import type { EventThread, HostEvent, ReadEvent } from '../host-events.js';
import { quoted, readFields, sameRepo } from '../payload-fields.js';

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

const RepoRef = z.object({ name: z.string(), owner: z.object({ login: z.string() }) });
const Sender = z.object({ login: z.string(), id: z.number().int() });
const Envelope = z.object({ repository: RepoRef, sender: Sender });
const Label = z.object({ name: z.string() });

const Issue = z.object({
  number: z.number().int(),
  title: z.string(),
  body: z.string().nullish(),
  html_url: z.string(),
  labels: z.array(Label).nullish(),
  // Present when the issue is a pull request (its merge state and page).
  pull_request: z.object({}).nullish(),
});

const Pull = z.object({
  number: z.number().int(),
  title: z.string(),
  body: z.string().nullish(),
  html_url: z.string(),
  labels: z.array(Label).nullish(),
  // head.repo is null when the fork the pull request came from was deleted.
  head: z.object({ ref: z.string(), repo: RepoRef.nullish() }),
});

const Comment = z.object({ id: z.number().int(), body: z.string(), html_url: z.string() });

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

const COMMENT_ACTIONS = ['created', 'edited', 'deleted'] as const;
type CommentAction = (typeof COMMENT_ACTIONS)[number];
const isCommentAction = (a: string): a is CommentAction => (COMMENT_ACTIONS as readonly string[]).includes(a);

type ReviewState = 'approved' | 'changes_requested' | 'commented';
type Base = Pick<HostEvent, 'repo' | 'thread' | 'actor'>;

function repoOf(r: z.infer<typeof RepoRef>): RepoPath {
  return { owner: r.owner.login, name: r.name };
}

function actorOf(s: z.infer<typeof Sender>): ScmUser {
  return { login: s.login, id: s.id };
}

/** The issue as the payload has it (a pull request seen as an issue has no branch here). */
function issueThread(i: z.infer<typeof Issue>, kind: 'issue' | 'pull'): EventThread {
  return { kind, number: i.number, title: i.title, body: i.body ?? '', url: i.html_url };
}

/** A pull request with its source branch, and the fork it lives in when not the hook's repository. */
function pullThread(p: z.infer<typeof Pull>, repo: RepoPath): EventThread {
  const thread: EventThread = { kind: 'pull', number: p.number, title: p.title, body: p.body ?? '', url: p.html_url };
  // A deleted fork leaves no branch to push to: no headBranch rather than one that looks like the base's.
  if (!p.head.repo) return thread;
  const head = repoOf(p.head.repo);
  return { ...thread, headBranch: p.head.ref, ...(sameRepo(head, repo) ? {} : { headRepo: head }) };
}

function baseOf(p: z.infer<typeof Envelope>, thread: (repo: RepoPath) => EventThread): Base {
  const repo = repoOf(p.repository);
  return { repo, thread: thread(repo), actor: actorOf(p.sender) };
}

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

function issueLabeled(payload: unknown, word: string): ReadEvent {
  const not = labelAction(payload, word);
  if (not) return not;
  const read = readFields(IssueLabels, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  // Gitea sends a pull request's label changes under their own word; an issue that is one is still read as a pull.
  return labeled(
    baseOf(p, () => issueThread(p.issue, p.issue.pull_request ? 'pull' : 'issue')),
    p.issue.labels,
  );
}

function pullLabeled(payload: unknown, word: string): ReadEvent {
  const not = labelAction(payload, word);
  if (not) return not;
  const read = readFields(PullLabels, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  return labeled(
    baseOf(p, (repo) => pullThread(p.pull_request, repo)),
    p.pull_request.labels,
  );
}

function issueComment(payload: unknown): ReadEvent {
  const read = readFields(IssueComment, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  if (!isCommentAction(p.action)) return { ignored: `an issue_comment ${quoted(p.action)}, not one emend reads` };
  const isPull = p.is_pull === true || !!p.issue.pull_request;
  const pull = p.pull_request;
  const base = baseOf(p, (repo) =>
    isPull && pull ? pullThread(pull, repo) : issueThread(p.issue, isPull ? 'pull' : 'issue'),
  );
  return {
    kind: 'comment',
    action: p.action,
    ...base,
    comment: { id: String(p.comment.id), body: p.comment.body, url: p.comment.html_url },
  };
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
export function readGiteaEvent(event: string, payload: unknown): ReadEvent {
  switch (event) {
    // issue_comment is also the word older Gitea sent a review of comments under (as a PullRequestPayload).
    case 'issue_comment':
    case 'pull_request_comment':
      return commentOrReview(payload);
    case 'issues':
    case 'issue_label':
      return issueLabeled(payload, event);
    case 'pull_request':
    case 'pull_request_label':
      return pullLabeled(payload, event);
    case 'pull_request_approved':
    case 'pull_request_review_approved':
      return review(payload, 'approved');
    case 'pull_request_rejected':
    case 'pull_request_review_rejected':
      return review(payload, 'changes_requested');
    case 'pull_request_review_comment':
      return review(payload, 'commented');
    default:
      return { ignored: `Gitea's ${quoted(event)} event is not one emend reads` };
  }
}
