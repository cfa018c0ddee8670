import type { Ctx } from '../fake-host/rest.js';
import type { Delivery, HostActions } from '../fake-host/side.js';
import { type Comment, type Issue, type RepoState, type UserState, fullName } from '../fake-host/state.js';
import { mergeRequestView, noteView, threadUrl } from './rest.js';
import { glStatus, pipelineUrl } from './ci.js';
import { runState } from '../fake-host/ci.js';

/**
 * GitLab's webhook payloads for what a person does (docs.gitlab.com "Webhook events"): `object_kind`
 * and `event_type`, the `user` who acted, the `project`, `object_attributes` (the note, issue or
 * merge request itself, with its `action`), and the issue or merge request a note is on. The
 * event word is the X-Gitlab-Event header (`Note Hook`, `Issue Hook`, `Merge Request Hook`); the
 * hooks get it by their switch (note_events, issues_events, merge_requests_events).
 */

const hookUser = (v: Ctx, u: UserState) => ({
  ...{ id: u.id, name: u.name, username: u.login, email: u.email },
  avatar_url: `${v.urls.webUrl}/uploads/-/system/user/avatar/${u.id}/avatar.png`,
});

function hookProject(v: Ctx, repo: RepoState) {
  const web = `${v.urls.webUrl}/${fullName(repo)}`;
  return {
    ...{ id: repo.id, name: repo.name, description: repo.description, web_url: web, avatar_url: null },
    ...{ git_http_url: `${web}.git`, namespace: repo.owner.split('/').pop(), path_with_namespace: fullName(repo) },
    ...{ visibility_level: { private: 0, internal: 10, public: 20 }[repo.visibility] },
    ...{ default_branch: repo.defaultBranch, homepage: web, http_url: `${web}.git` },
  };
}

const around = (v: Ctx, repo: RepoState, by: UserState) => ({
  user: hookUser(v, by),
  project_id: repo.id,
  project: hookProject(v, repo),
  repository: {
    name: repo.name,
    url: `${v.urls.webUrl}/${fullName(repo)}.git`,
    homepage: hookProject(v, repo).web_url,
  },
});

/** Labels as GitLab's hooks show them: objects with a title. */
const labels = (names: string[]) => names.map((title, i) => ({ id: i + 1, title, type: 'ProjectLabel' }));

function issueAttributes(v: Ctx, repo: RepoState, issue: Issue) {
  return {
    ...{ id: issue.id, iid: issue.number, title: issue.title, description: issue.body, state: 'opened' },
    ...{ author_id: v.state.ensureUser(issue.user).id, project_id: repo.id, created_at: issue.createdAt },
    ...{ url: threadUrl(v, repo, { kind: 'issue', number: issue.number }), labels: labels(issue.labels) },
  };
}

function mergeRequestAttributes(v: Ctx, repo: RepoState, number: number) {
  const pull = v.state.pull(repo, number)!;
  const mr = mergeRequestView(v, repo, pull);
  const source = v.state.headRepo(pull);
  return {
    ...{ id: mr.id, iid: mr.iid, title: mr.title, description: mr.description ?? '', state: mr.state, url: mr.web_url },
    ...{ source_branch: pull.head.ref, target_branch: pull.base, source_project_id: mr.source_project_id },
    ...{ target_project_id: repo.id, author_id: v.state.ensureUser(pull.user).id, last_commit: { id: mr.sha } },
    source: source ? hookProject(v, source) : null,
    target: hookProject(v, repo),
  };
}

/** A note's Note Hook: `action` create or update; a DiffNote with its position. */
function noteHook(v: Ctx, repo: RepoState, c: Comment, action: 'create' | 'update', by: UserState): Delivery {
  const note = noteView(v, repo, c);
  const on =
    c.thread.kind === 'pull'
      ? { merge_request: mergeRequestAttributes(v, repo, c.thread.number) }
      : { issue: issueAttributes(v, repo, v.state.issue(repo, c.thread.number)!) };
  return {
    to: ['note_events'],
    event: 'Note Hook',
    payload: {
      ...{ object_kind: 'note', event_type: 'note', ...around(v, repo, by) },
      object_attributes: {
        ...{ id: c.id, note: c.body, noteable_type: note.noteable_type, noteable_id: note.noteable_id },
        ...{ author_id: v.state.ensureUser(c.user).id, created_at: c.createdAt, updated_at: c.updatedAt },
        ...{ project_id: repo.id, system: false, type: note.type, action, discussion_id: `d${c.id}` },
        url: `${threadUrl(v, repo, c.thread)}#note_${c.id}`,
        ...('position' in note ? { position: note.position } : {}),
      },
      ...on,
    },
  };
}

export const gitlabActions: HostActions = {
  issueOpened: (v, repo, issue, by) => [
    {
      to: ['issues_events'],
      event: 'Issue Hook',
      payload: {
        ...{ object_kind: 'issue', event_type: 'issue', ...around(v, repo, by) },
        object_attributes: { ...issueAttributes(v, repo, issue), action: 'open' },
        labels: labels(issue.labels),
      },
    },
  ],
  // GitLab sends nothing when a note is deleted.
  commented: (v, repo, c, action, by) =>
    action === 'deleted' ? [] : [noteHook(v, repo, c, action === 'created' ? 'create' : 'update', by)],
  labeled: (v, repo, issue, _label, previous, by) => [
    {
      to: ['issues_events'],
      event: 'Issue Hook',
      payload: {
        ...{ object_kind: 'issue', event_type: 'issue', ...around(v, repo, by) },
        object_attributes: { ...issueAttributes(v, repo, issue), action: 'update' },
        labels: labels(issue.labels),
        changes: { labels: { previous: labels(previous), current: labels(issue.labels) } },
      },
    },
  ],
  lineCommented: (v, repo, _pull, c, _review, by) => [noteHook(v, repo, c, 'create', by)],
  // A review is published as notes (its diff notes, then its text); approving also sends a
  // Merge Request Hook with action `approved`. Requesting changes sends nothing of its own.
  summaryIsComment: true,
  reviewed: (v, repo, pull, review, comments, by, summary) => [
    ...[...comments, ...(summary ? [summary] : [])].map((c) => noteHook(v, repo, c, 'create', by)),
    ...(review.state === 'approved'
      ? [
          {
            to: ['merge_requests_events'],
            event: 'Merge Request Hook',
            payload: {
              ...{ object_kind: 'merge_request', event_type: 'merge_request', ...around(v, repo, by) },
              object_attributes: { ...mergeRequestAttributes(v, repo, pull.number), action: 'approved' },
            },
          },
        ]
      : []),
  ],
  // One Pipeline Hook for the pipeline: a merge request pipeline names the merge request, its ref refs/merge-requests/N/head.
  ciReported: (v, repo, run, by) => {
    const jobs = run.jobs.filter((j) => !j.status);
    const [mr] = run.pulls;
    return [
      {
        to: ['pipeline_events'],
        event: 'Pipeline Hook',
        payload: {
          ...{ object_kind: 'pipeline', ...around(v, repo, by) },
          object_attributes: {
            ...{ id: run.id, iid: run.id, sha: run.sha, status: glStatus(runState(jobs)) },
            ...{ ref: mr ? `refs/merge-requests/${mr.number}/head` : run.branch, tag: false },
            ...{ source: mr ? 'merge_request_event' : 'push', url: pipelineUrl(v, repo, run.id) },
          },
          merge_request: mr ? { ...mergeRequestAttributes(v, repo, mr.number), id: mr.id } : null,
          builds: jobs.map((j) => ({
            ...{ id: j.id, name: j.name, stage: j.stage, status: glStatus(j.state) },
            failure_reason: j.state === 'failure' ? 'script_failure' : null,
          })),
        },
      },
    ];
  },
};
