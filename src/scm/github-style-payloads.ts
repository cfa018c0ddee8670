import { z } from 'zod';
import type { RepoPath, ScmUser } from './code-host.js';
import type { EventComment, EventThread, ThreadEvent } from './host-events.js';
import { sameRepo } from './payload-fields.js';

/**
 * The webhook payload pieces Gitea (and Forgejo) copy from GitHub's, read once for both hosts'
 * readers (src/scm/github/events.ts, src/scm/gitea/events.ts): the repository and the sender of
 * every delivery, an issue's or a pull request's fields, a comment, and the comment actions.
 * Each host's own payloads (which actions and events it sends, where a pull request's base is)
 * stay in its reader.
 */

export const RepoRef = z.object({ name: z.string(), owner: z.object({ login: z.string() }) });
const Sender = z.object({ login: z.string(), id: z.number().int() });
export const Envelope = z.object({ repository: RepoRef, sender: Sender });

/** What an issue and a pull request both carry: the fields an EventThread is made of. */
export const ThreadFields = z.object({
  number: z.number().int(),
  title: z.string(),
  body: z.string().nullish(),
  html_url: z.string(),
});

export const Comment = z.object({ id: z.number().int(), body: z.string(), html_url: z.string() });

export const COMMENT_ACTIONS = ['created', 'edited', 'deleted'] as const;
type CommentAction = (typeof COMMENT_ACTIONS)[number];
export const isCommentAction = (a: string): a is CommentAction => (COMMENT_ACTIONS as readonly string[]).includes(a);

/** A pull request's source branch, and the repository it lives in (null when that fork was deleted). */
type Head = { head: { ref: string; repo?: z.infer<typeof RepoRef> | null } };

export function repoOf(r: z.infer<typeof RepoRef>): RepoPath {
  return { owner: r.owner.login, name: r.name };
}

function actorOf(s: z.infer<typeof Sender>): ScmUser {
  return { login: s.login, id: s.id };
}

/** The issue or pull request as its fields have it (no branch: the caller says which kind it is). */
export function threadOf(t: z.infer<typeof ThreadFields>, kind: 'issue' | 'pull'): EventThread {
  return { kind, number: t.number, title: t.title, body: t.body ?? '', url: t.html_url };
}

/** A pull request with its source branch, and the fork it lives in when not `base`. */
export function pullThread(p: z.infer<typeof ThreadFields> & Head, base: RepoPath): EventThread {
  const thread = threadOf(p, 'pull');
  // A deleted fork leaves no branch to push to: no headBranch rather than one that looks like the base's.
  if (!p.head.repo) return thread;
  const head = repoOf(p.head.repo);
  return { ...thread, headBranch: p.head.ref, ...(sameRepo(head, base) ? {} : { headRepo: head }) };
}

/** The repository, the actor and the thread (made knowing the hook's repository) of a delivery. */
export function baseOf(
  p: z.infer<typeof Envelope>,
  thread: (repo: RepoPath) => EventThread,
): Pick<ThreadEvent, 'repo' | 'thread' | 'actor'> {
  const repo = repoOf(p.repository);
  return { repo, thread: thread(repo), actor: actorOf(p.sender) };
}

export function commentOf(c: z.infer<typeof Comment>): EventComment {
  return { id: String(c.id), body: c.body, url: c.html_url };
}
