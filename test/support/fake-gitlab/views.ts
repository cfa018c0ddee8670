import type { CommitInfo } from '../fake-host/bare.js';
import type { Urls } from '../fake-host/server.js';
import type { Pull, RepoState, UserState } from '../fake-host/state.js';
import type { GitLabModel, MergeRequestExtra } from './model.js';

/** GitLab's JSON shapes (REST v4), trimmed to the fields a client reads. */

export type { Urls } from '../fake-host/server.js';

export function userView(u: UserState, { webUrl }: Urls) {
  return {
    id: u.id,
    username: u.login,
    name: u.name,
    state: 'active',
    locked: false,
    web_url: `${webUrl}/${u.login}`,
    email: u.email,
  };
}

function namespaceView(model: GitLabModel, owner: string, { webUrl }: Urls) {
  const group = model.isGroup(owner) ? model.ensureGroup(owner) : undefined;
  const user = group ? undefined : model.user(owner);
  const path = owner.split('/').pop()!;
  return {
    id: group?.id ?? user?.id ?? 0,
    name: path,
    path,
    kind: group ? 'group' : 'user',
    full_path: owner,
    web_url: `${webUrl}/${group ? 'groups/' : ''}${owner}`,
  };
}

/** A project as `caller` sees it: `permissions` only for a signed-in caller, as GitLab does. */
export function projectView(model: GitLabModel, repo: RepoState, caller: string | undefined, urls: Urls) {
  const extra = model.extra(repo);
  const parent = repo.parent ? model.state.repoByFullName(repo.parent) : undefined;
  const level = model.accessLevel(repo, caller);
  const groupLevel = model.isGroup(repo.owner) ? level : 0;
  const projectLevel = extra.members.get(caller?.toLowerCase() ?? '') ?? (model.isGroup(repo.owner) ? 0 : level);
  const path = `${repo.owner}/${repo.name}`;
  return {
    id: repo.id,
    description: repo.description,
    name: repo.name,
    path: repo.name,
    path_with_namespace: path,
    default_branch: repo.defaultBranch,
    visibility: extra.visibility,
    web_url: `${urls.webUrl}/${path}`,
    http_url_to_repo: `${urls.webUrl}/${path}.git`,
    namespace: namespaceView(model, repo.owner, urls),
    ...(parent
      ? {
          forked_from_project: {
            id: parent.id,
            path: parent.name,
            path_with_namespace: `${parent.owner}/${parent.name}`,
            web_url: `${urls.webUrl}/${parent.owner}/${parent.name}`,
          },
        }
      : {}),
    ...(caller
      ? {
          permissions: {
            project_access: projectLevel ? { access_level: projectLevel, notification_level: 3 } : null,
            group_access: groupLevel ? { access_level: groupLevel, notification_level: 3 } : null,
          },
        }
      : {}),
  };
}

/** A merge request: state opened/closed/merged, `sha` its head, `draft` from the title. */
export function mergeRequestView(
  model: GitLabModel,
  repo: RepoState,
  pull: Pull,
  extra: MergeRequestExtra,
  head: string | undefined,
  urls: Urls,
) {
  const author = [...model.state.users.values()].find((u) => u.id === extra.authorId);
  const state = pull.merged ? 'merged' : pull.state === 'open' ? 'opened' : 'closed';
  return {
    id: pull.id,
    iid: pull.number,
    title: pull.title,
    description: pull.body,
    state,
    merged_at: pull.merged_at,
    source_project_id: extra.sourceProjectId,
    target_project_id: extra.targetProjectId,
    author: author ? userView(author, urls) : null,
    draft: pull.draft,
    work_in_progress: pull.draft,
    sha: head ?? null,
    web_url: `${urls.webUrl}/${repo.owner}/${repo.name}/-/merge_requests/${pull.number}`,
  };
}

export function commitView(repo: RepoState, c: CommitInfo, urls: Urls) {
  const [title = ''] = c.message.split('\n');
  return {
    id: c.sha,
    title,
    message: c.message,
    author_email: c.author.email,
    committer_email: c.committer.email,
    web_url: `${urls.webUrl}/${repo.owner}/${repo.name}/-/commit/${c.sha}`,
  };
}
