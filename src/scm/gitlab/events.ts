import { z } from 'zod';
import type { RepoPath, ScmUser } from '../code-host.js';
import type { EventThread, ReadEvent, ReviewState, ThreadEvent } from '../host-events.js';
import { eventReader, quoted, readFields } from '../payload-fields.js';
import { pipelineHook } from './ci-events.js';

/**
 * GitLab's webhook deliveries in emend's words (`gitLabKind.readEvent`), read from the payloads
 * GitLab documents (docs.gitlab.com/user/project/integrations/webhook_events/) and builds
 * (lib/gitlab/hook_data/*_builder.rb): notes on issues and merge requests (diff notes on a line),
 * labels added to either, and a merge request's approvals and requested changes. GitLab says
 * "merge request" and "iid" where emend says pull request and number.
 */

const Project = z.object({ path_with_namespace: z.string() });
const User = z.object({ username: z.string(), id: z.number().int() });
const Envelope = z.object({ project: Project, user: User });
const Label = z.object({ title: z.string() });

const IssueAttrs = z.object({
  iid: z.number().int(),
  title: z.string(),
  description: z.string().nullish(),
  url: z.string(),
});
const MergeRequestAttrs = IssueAttrs.extend({
  source_branch: z.string(),
  source_project_id: z.number().int(),
  target_project_id: z.number().int(),
  // The source project's hook data; null when the fork it came from is gone.
  source: Project.nullish(),
});

const Note = z.object({
  id: z.number().int(),
  note: z.string(),
  noteable_type: z.string(),
  system: z.boolean().nullish(),
  type: z.string().nullish(),
  // A diff note's place (Gitlab::Diff::Position): new_line is null on a removed line or a whole file.
  position: z
    .object({ new_path: z.string().nullish(), old_path: z.string().nullish(), new_line: z.number().int().nullish() })
    .nullish(),
  // create or update, since GitLab 16.11; older servers send a note hook on creation only, without it.
  action: z.string().nullish(),
  url: z.string(),
});
const NoteEvent = Envelope.extend({ object_attributes: Note });
const IssueNote = NoteEvent.extend({ issue: IssueAttrs });
const MergeRequestNote = NoteEvent.extend({ merge_request: MergeRequestAttrs });

/** `changes.labels`: the labels before and after; an added one is in current and not in previous. */
const LabelChange = z.object({ previous: z.array(Label).nullish(), current: z.array(Label).nullish() });
const Reviewer = z.object({ id: z.number().int(), state: z.string().nullish() });
/** `changes.reviewers` with each reviewer's state (unreviewed, reviewed, requested_changes, approved…). */
const ReviewerChange = z.object({ previous: z.array(Reviewer).nullish(), current: z.array(Reviewer).nullish() });

const IssueEvent = Envelope.extend({
  object_kind: z.string().nullish(),
  object_attributes: IssueAttrs,
  changes: z.object({ labels: LabelChange.nullish() }).nullish(),
});
const MergeRequestEvent = Envelope.extend({
  object_attributes: MergeRequestAttrs.extend({ action: z.string().nullish() }),
  changes: z.object({ labels: LabelChange.nullish(), reviewers: ReviewerChange.nullish() }).nullish(),
});

type Base = Pick<ThreadEvent, 'repo' | 'thread' | 'actor'>;

/** A project's full path as owner (the namespace, nested groups included) and name (the last segment). */
function repoOf(project: z.infer<typeof Project>): RepoPath | undefined {
  const at = project.path_with_namespace.lastIndexOf('/');
  if (at <= 0 || at === project.path_with_namespace.length - 1) return undefined;
  return { owner: project.path_with_namespace.slice(0, at), name: project.path_with_namespace.slice(at + 1) };
}

const noPath = (field: string, path: string): { ignored: string } => ({
  ignored: `the payload's ${field} ${quoted(path)} is not GROUP/…/PROJECT`,
});

function actorOf(u: z.infer<typeof User>): ScmUser {
  return { login: u.username, id: u.id };
}

function issueThread(i: z.infer<typeof IssueAttrs>): EventThread {
  return { kind: 'issue', number: i.iid, title: i.title, body: i.description ?? '', url: i.url };
}

/** A merge request with its source branch, and the source project when it is a fork. */
function mergeRequestThread(mr: z.infer<typeof MergeRequestAttrs>): EventThread | { ignored: string } {
  const thread: EventThread = {
    kind: 'pull',
    number: mr.iid,
    title: mr.title,
    body: mr.description ?? '',
    url: mr.url,
  };
  if (mr.source_project_id === mr.target_project_id) return { ...thread, headBranch: mr.source_branch };
  // A fork that is gone leaves no branch to push to: no headBranch rather than one that looks like the target's.
  if (!mr.source) return thread;
  const headRepo = repoOf(mr.source);
  if (!headRepo) return noPath('merge_request.source.path_with_namespace', mr.source.path_with_namespace);
  return { ...thread, headBranch: mr.source_branch, headRepo };
}

/** What every event shares: the project, the actor and the thread, or why one cannot be read. */
function baseOf(p: z.infer<typeof Envelope>, thread: EventThread | { ignored: string }): Base | { ignored: string } {
  if ('ignored' in thread) return thread;
  const repo = repoOf(p.project);
  if (!repo) return noPath('project.path_with_namespace', p.project.path_with_namespace);
  return { repo, thread, actor: actorOf(p.user) };
}

/** Titles in `current` and not in `previous`, in current's order. */
function labelsAdded(change: z.infer<typeof LabelChange> | null | undefined): string[] {
  const before = new Set((change?.previous ?? []).map((l) => l.title));
  return (change?.current ?? []).map((l) => l.title).filter((t) => !before.has(t));
}

/** A label event: the first label added as `label`, all of them as `labels`. */
function labeled(base: Base, added: string[]): ReadEvent {
  const [first] = added;
  if (first === undefined) return { ignored: 'no label was added (labels were only removed)' };
  return { kind: 'labeled', ...base, label: first, labels: added };
}

function noteHook(payload: unknown): ReadEvent {
  const read = readFields(NoteEvent, payload);
  if ('ignored' in read) return read;
  const note = read.fields.object_attributes;
  if (note.system) return { ignored: "a system note (GitLab's own record of a change)" };
  const action = note.action ?? 'create';
  if (action !== 'create' && action !== 'update') return { ignored: `a note ${quoted(action)}, not one emend reads` };
  // GitLab sends no note hook when a note is deleted.
  const verb = action === 'create' ? 'created' : 'edited';
  const comment = { id: String(note.id), body: note.note, url: note.url };

  if (note.noteable_type === 'Issue') {
    const issue = readFields(IssueNote, payload);
    if ('ignored' in issue) return issue;
    const base = baseOf(issue.fields, issueThread(issue.fields.issue));
    return 'ignored' in base ? base : { kind: 'comment', action: verb, ...base, comment };
  }
  if (note.noteable_type !== 'MergeRequest')
    return { ignored: `a note on a ${quoted(note.noteable_type)}, not on an issue or a merge request` };

  const mr = readFields(MergeRequestNote, payload);
  if ('ignored' in mr) return mr;
  const base = baseOf(mr.fields, mergeRequestThread(mr.fields.merge_request));
  if ('ignored' in base) return base;
  if (!note.position) {
    if (note.type === 'DiffNote') return { ignored: 'a DiffNote without object_attributes.position' };
    return { kind: 'comment', action: verb, ...base, comment };
  }
  const path = note.position.new_path ?? note.position.old_path;
  if (!path) return { ignored: 'the payload has no object_attributes.position.new_path' };
  return {
    kind: 'line_comment',
    action: verb,
    ...base,
    comment: { ...comment, path, line: note.position.new_line ?? null },
  };
}

function issueHook(payload: unknown): ReadEvent {
  const read = readFields(IssueEvent, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  // Other work items (tasks, epics, incidents…) come as object_kind work_item under the same header.
  if (p.object_kind && p.object_kind !== 'issue') return { ignored: `a ${quoted(p.object_kind)}, not an issue` };
  if (!p.changes?.labels) return { ignored: 'the issue event changes no labels (emend reads only labels added)' };
  const base = baseOf(p, issueThread(p.object_attributes));
  return 'ignored' in base ? base : labeled(base, labelsAdded(p.changes.labels));
}

/**
 * The review a merge request event records: an approval (action `approval`, one person's; the
 * `approved` that follows when all required approvals are in is left out, as it repeats it), or a
 * reviewer's state turning to requested_changes or reviewed in `changes.reviewers` (sent when a
 * review is submitted, by GitLab versions that send it; older ones send only the review's summary
 * as a note). GitLab's payload has no review id and no review text: both are '' (the text, if
 * any, comes as its own note).
 */
function mergeRequestReview(p: z.infer<typeof MergeRequestEvent>, base: Base): ReadEvent {
  const action = p.object_attributes.action ?? '';
  const review = (state: ReviewState): ReadEvent => ({
    kind: 'review',
    ...base,
    review: { id: '', state, body: '', url: p.object_attributes.url },
  });
  if (action === 'approval') return review('approved');
  if (action === 'approved')
    return { ignored: 'the merge request is fully approved (each approval came as its own event)' };
  const reviewers = p.changes?.reviewers;
  if (action !== 'update' || !reviewers)
    return { ignored: `a merge request ${quoted(action || 'event')} with no label added and no review` };
  const before = new Map((reviewers.previous ?? []).map((r) => [r.id, r.state]));
  const changed = (reviewers.current ?? []).filter(
    (r) => (r.state === 'requested_changes' || r.state === 'reviewed') && before.get(r.id) !== r.state,
  );
  const own = changed.find((r) => r.id === p.user.id) ?? changed[0];
  if (!own) return { ignored: 'no reviewer requested changes or submitted a review' };
  return review(own.state === 'requested_changes' ? 'changes_requested' : 'commented');
}

function mergeRequestHook(payload: unknown): ReadEvent {
  const read = readFields(MergeRequestEvent, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  const base = baseOf(p, mergeRequestThread(p.object_attributes));
  if ('ignored' in base) return base;
  if (p.changes?.labels) {
    const added = labelsAdded(p.changes.labels);
    // A change of labels alone that adds none is a removal; one beside a review is read as the review.
    if (added.length > 0 || (!p.changes.reviewers && p.object_attributes.action !== 'approval'))
      return labeled(base, added);
  }
  return mergeRequestReview(p, base);
}

/** `gitLabKind.readEvent`: a delivery under its X-Gitlab-Event word. */
export const readGitLabEvent = eventReader('GitLab', {
  'Note Hook': noteHook,
  'Issue Hook': issueHook,
  'Merge Request Hook': mergeRequestHook,
  'Pipeline Hook': pipelineHook,
});
