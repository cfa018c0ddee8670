import type { CiEvent } from './ci.js';
import type { RepoPath, ScmUser, ThreadRef } from './refs.js';

/**
 * A webhook delivery's payload in emend's words, whatever host sent it (each adapter's
 * `readEvent`). Only what triggers need: who did what on which issue or pull request, and how a
 * commit's CI went (a check, status, pipeline or workflow finished). The
 * receiver decides what to act on (the mention, the label, emend's own marker); the adapter only
 * translates, and says in words why a payload is none of these.
 */

/** The issue or pull request an event is about, as the payload carries it. */
export interface EventThread extends ThreadRef {
  title: string;
  /** The or pull request's own text ('' when it has none). */
  body: string;
  /** Its web page. */
  url: string;
  /** A pull request's source branch (its head ref); undefined on an issue. */
  headBranch?: string;
  /** A pull request's source repository when it is not the target (a fork), as OWNER/NAME path. */
  headRepo?: RepoPath;
}

/** The comment an event is about. */
export interface EventComment {
  id: string;
  body: string;
  url: string;
  /** On a line of a pull request's change: the file and the line in its new version (null: on a removed line). */
  path?: string;
  line?: number | null;
}

interface EventBase {
  /** The repository the hook is on (GitLab: the project's full namespace path as owner). */
  repo: RepoPath;
  thread: EventThread;
  /** Who acted. */
  actor: ScmUser;
}

/** A review's verdict in emend's words. */
export type ReviewState = 'changes_requested' | 'commented' | 'approved';

export type HostEvent =
  /** A comment on an issue or a pull request's conversation (GitLab: a note that is not on a line). */
  | (EventBase & { kind: 'comment'; action: 'created' | 'edited' | 'deleted'; comment: EventComment })
  /** A comment on a line of a pull request's change (GitHub review comment, GitLab diff note, Gitea review comment). */
  | (EventBase & { kind: 'line_comment'; action: 'created' | 'edited' | 'deleted'; comment: EventComment })
  /** A label added to an issue or pull request (`label`: its name). */
  | (EventBase & { kind: 'labeled'; label: string; labels?: string[] })
  /** A review submitted on a pull request: its state and its text. */
  | (EventBase & {
      kind: 'review';
      review: { id: string; state: ReviewState; body: string; url: string };
    })
  /**
   * A commit's CI reported (GitHub check suites, check runs and statuses, GitLab pipelines, Gitea
   * statuses and Actions runs and jobs): no thread, as the payload may name no pull request.
   */
  | { kind: 'ci'; repo: RepoPath; actor: ScmUser; ci: CiEvent };

/** The events about an issue or a pull request (every kind but `ci`). */
export type ThreadEvent = Exclude<HostEvent, { kind: 'ci' }>;

/** What an adapter reads from a delivery: an event, or why the payload is none emend reads (a sentence). */
export type ReadEvent = HostEvent | { ignored: string };
