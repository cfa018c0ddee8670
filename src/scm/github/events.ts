import { z } from 'zod';
import type { RepoPath, ScmUser } from '../code-host.js';
import type { EventThread, ReadEvent } from '../host-events.js';
import { quoted, readFields, sameRepo } from '../payload-fields.js';

/**
 * GitHub's webhook deliveries in emend's words (`gitHubKind.readEvent`), read from the payloads
 * GitHub documents (docs.github.com/en/webhooks/webhook-events-and-payloads): a conversation
 * comment, a review comment on a line, a review submitted, a label added to an issue or a pull
 * request. Only the fields emend needs are checked; anything else is `ignored` with the reason.
 */

const RepoRef = z.object({ name: z.string(), owner: z.object({ login: z.string() }) });
const Sender = z.object({ login: z.string(), id: z.number().int() });
const Envelope = z.object({ repository: RepoRef, sender: Sender });

const Issue = z.object({
  number: z.number().int(),
  title: z.string(),
  body: z.string().nullish(),
  html_url: z.string(),
  // Present (an object of links) when the issue is a pull request: GitHub's pull requests are issues too.
  pull_request: z.object({}).nullish(),
});

const Pull = z.object({
  number: z.number().int(),
  title: z.string(),
  body: z.string().nullish(),
  html_url: z.string(),
  // head.repo is null when the fork the pull request came from was deleted.
  head: z.object({ ref: z.string(), repo: RepoRef.nullable() }),
  base: z.object({ repo: RepoRef }),
});

const Comment = z.object({ id: z.number().int(), body: z.string(), html_url: z.string() });

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
const COMMENT_ACTIONS = ['created', 'edited', 'deleted'] as const;
type CommentAction = (typeof COMMENT_ACTIONS)[number];
const isCommentAction = (a: string): a is CommentAction => (COMMENT_ACTIONS as readonly string[]).includes(a);

type ReviewState = 'approved' | 'changes_requested' | 'commented';

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

function repoOf(r: z.infer<typeof RepoRef>): RepoPath {
  return { owner: r.owner.login, name: r.name };
}

function actorOf(s: z.infer<typeof Sender>): ScmUser {
  return { login: s.login, id: s.id };
}

/** An issue, or a pull request seen as an issue: an issue_comment payload carries no branch, so no headBranch. */
function issueThread(i: z.infer<typeof Issue>): EventThread {
  return {
    kind: i.pull_request ? 'pull' : 'issue',
    number: i.number,
    title: i.title,
    body: i.body ?? '',
    url: i.html_url,
  };
}

/** A pull request with its source branch, and the fork it lives in when not the base repository. */
function pullThread(p: z.infer<typeof Pull>): EventThread {
  const thread: EventThread = { kind: 'pull', number: p.number, title: p.title, body: p.body ?? '', url: p.html_url };
  // A deleted fork leaves no branch to push to: no headBranch rather than one that looks like the base's.
  if (!p.head.repo) return thread;
  const head = repoOf(p.head.repo);
  return { ...thread, headBranch: p.head.ref, ...(sameRepo(head, repoOf(p.base.repo)) ? {} : { headRepo: head }) };
}

/** The payload's action, or why there is none to read. */
function actionOf(payload: unknown): { action: string } | { ignored: string } {
  const read = readFields(Action, payload);
  return 'ignored' in read ? read : read.fields;
}

function issueComment(payload: unknown): ReadEvent {
  const a = actionOf(payload);
  if ('ignored' in a) return a;
  if (!isCommentAction(a.action)) return { ignored: `an issue_comment ${quoted(a.action)}, not one emend reads` };
  const read = readFields(IssueComment, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  return {
    kind: 'comment',
    action: a.action,
    repo: repoOf(p.repository),
    thread: issueThread(p.issue),
    actor: actorOf(p.sender),
    comment: { id: String(p.comment.id), body: p.comment.body, url: p.comment.html_url },
  };
}

/**
 * A label added, on an issue (`issues`) or a pull request (`pull_request`): the two payloads
 * differ only in where the thread is.
 */
function labeled<T extends z.infer<typeof Envelope> & { label: { name: string } }>(
  word: string,
  schema: z.ZodType<T>,
  threadOf: (p: T) => EventThread,
): (payload: unknown) => ReadEvent {
  return (payload) => {
    const a = actionOf(payload);
    if ('ignored' in a) return a;
    if (a.action !== 'labeled') return { ignored: `${word} ${quoted(a.action)}: only a label added is read` };
    const read = readFields(schema, payload);
    if ('ignored' in read) return read;
    const p = read.fields;
    return {
      kind: 'labeled',
      label: p.label.name,
      repo: repoOf(p.repository),
      thread: threadOf(p),
      actor: actorOf(p.sender),
    };
  };
}

const issueLabeled = labeled('issues', IssueLabeled, (p) => issueThread(p.issue));
const pullLabeled = labeled('pull_request', PullLabeled, (p) => pullThread(p.pull_request));

function reviewComment(payload: unknown): ReadEvent {
  const a = actionOf(payload);
  if ('ignored' in a) return a;
  if (!isCommentAction(a.action))
    return { ignored: `a pull_request_review_comment ${quoted(a.action)}, not one emend reads` };
  const read = readFields(ReviewComment, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  return {
    kind: 'line_comment',
    action: a.action,
    repo: repoOf(p.repository),
    thread: pullThread(p.pull_request),
    actor: actorOf(p.sender),
    comment: {
      id: String(p.comment.id),
      body: p.comment.body,
      url: p.comment.html_url,
      path: p.comment.path,
      line: p.comment.line ?? null,
    },
  };
}

function reviewSubmitted(payload: unknown): ReadEvent {
  const a = actionOf(payload);
  if ('ignored' in a) return a;
  if (a.action !== 'submitted')
    return { ignored: `pull_request_review ${quoted(a.action)}: only a review submitted is read` };
  const read = readFields(Review, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  const state = reviewState(p.review.state);
  if (!state) return { ignored: `the payload's review.state ${quoted(p.review.state)} is not a review emend reads` };
  return {
    kind: 'review',
    repo: repoOf(p.repository),
    thread: pullThread(p.pull_request),
    actor: actorOf(p.sender),
    // A review submitted with no text has body null.
    review: { id: String(p.review.id), state, body: p.review.body ?? '', url: p.review.html_url },
  };
}

/** `gitHubKind.readEvent`: a delivery under its X-GitHub-Event word. */
export function readGitHubEvent(event: string, payload: unknown): ReadEvent {
  switch (event) {
    case 'ping':
      return { ignored: 'a ping' };
    case 'issue_comment':
      return issueComment(payload);
    case 'issues':
      return issueLabeled(payload);
    case 'pull_request':
      return pullLabeled(payload);
    case 'pull_request_review_comment':
      return reviewComment(payload);
    case 'pull_request_review':
      return reviewSubmitted(payload);
    default:
      return { ignored: `GitHub's ${quoted(event)} event is not one emend reads` };
  }
}
