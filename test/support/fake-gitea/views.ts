import type { CommitInfo } from '../fake-host/bare.js';
import type { Urls } from '../fake-host/server.js';
import type { Pull, RepoState, UserState } from '../fake-host/state.js';
import type { GiteaState } from './state.js';

/** Gitea's JSON shapes (modules/structs) for the fake's records: the fields Gitea sends, most of them. */

export type { Urls } from '../fake-host/server.js';

export function userView(u: UserState, { webUrl }: Urls) {
  return {
    id: u.id,
    login: u.login,
    login_name: '',
    source_id: 0,
    full_name: u.name === u.login ? '' : u.name,
    email: u.email,
    avatar_url: `${webUrl}/avatars/${u.login}`,
    html_url: `${webUrl}/${u.login}`,
    language: '',
    is_admin: false,
    last_login: u.createdAt,
    created: u.createdAt,
    restricted: false,
    active: true,
    prohibit_login: false,
    location: '',
    website: '',
    description: '',
    visibility: 'public',
    followers_count: 0,
    following_count: 0,
    starred_repos_count: 0,
    username: u.login,
  };
}

export function repoView(
  state: GiteaState,
  repo: RepoState,
  caller: string | undefined,
  urls: Urls,
  withParent = true,
): Record<string, unknown> {
  const full = `${repo.owner}/${repo.name}`;
  const perms = state.permissions(repo, caller);
  const forks = [...state.repos.values()].filter((r) => r.parent?.toLowerCase() === full.toLowerCase()).length;
  const openPulls = state.pulls(repo).filter((p) => p.state === 'open').length;
  const parent = withParent && repo.parent ? state.repoByFullName(repo.parent) : undefined;
  const host = new URL(urls.webUrl).host;
  return {
    id: repo.id,
    owner: userView(state.ensureUser(repo.owner), urls),
    name: repo.name,
    full_name: full,
    description: repo.description ?? '',
    empty: state.git.branches(repo.dir).length === 0,
    private: repo.private && state.visibility(repo) === 'private',
    fork: repo.fork,
    template: false,
    parent: parent ? repoView(state, parent, caller, urls, false) : null,
    mirror: false,
    size: 0,
    language: '',
    languages_url: `${urls.apiUrl}/repos/${full}/languages`,
    html_url: `${urls.webUrl}/${full}`,
    url: `${urls.apiUrl}/repos/${full}`,
    link: '',
    ssh_url: `git@${host}:${full}.git`,
    clone_url: `${urls.webUrl}/${full}.git`,
    original_url: '',
    website: '',
    stars_count: 0,
    forks_count: forks,
    watchers_count: 0,
    open_issues_count: 0,
    open_pr_counter: openPulls,
    release_counter: 0,
    default_branch: repo.defaultBranch,
    archived: false,
    created_at: repo.createdAt,
    updated_at: repo.updatedAt,
    archived_at: '1970-01-01T00:00:00Z',
    permissions: { admin: perms.admin, push: perms.push, pull: perms.pull },
    has_issues: true,
    has_wiki: true,
    has_pull_requests: true,
    has_projects: true,
    has_releases: true,
    has_packages: true,
    has_actions: true,
    ignore_whitespace_conflicts: false,
    allow_merge_commits: true,
    allow_rebase: true,
    allow_rebase_explicit: true,
    allow_squash_merge: true,
    allow_fast_forward_only_merge: true,
    allow_rebase_update: true,
    default_delete_branch_after_merge: false,
    default_merge_style: 'merge',
    default_allow_maintainer_edit: false,
    avatar_url: '',
    internal: state.visibility(repo) === 'internal',
    mirror_interval: '',
    object_format_name: 'sha1',
    mirror_updated: '0001-01-01T00:00:00Z',
    repo_transfer: null,
    topics: [],
    licenses: [],
  };
}

/** Gitea's work-in-progress prefixes (WORK_IN_PROGRESS_PREFIXES default): such a pull is a draft. */
export const isWip = (title: string): boolean => /^\s*(?:WIP:|\[WIP\])/i.test(title);

function branchInfo(state: GiteaState, repo: RepoState | undefined, ref: string, sha: string | null, urls: Urls) {
  return {
    label: ref,
    ref,
    sha: sha ?? '',
    repo_id: repo?.id ?? 0,
    repo: repo ? repoView(state, repo, undefined, urls, false) : null,
  };
}

export function pullView(state: GiteaState, repo: RepoState, pull: Pull, urls: Urls) {
  const full = `${repo.owner}/${repo.name}`;
  const headSha = state.syncHead(repo, pull) ?? null;
  const baseSha = pull.merged_base_sha ?? state.git.branchHead(repo.dir, pull.base) ?? null;
  const mergeBase = headSha && baseSha ? state.git.mergeBase(repo.dir, baseSha, headSha) : undefined;
  const mergeable =
    pull.state === 'open' && headSha && baseSha ? !!state.git.mergeTree(repo.dir, baseSha, headSha) : false;
  const baseOwner = state.ensureUser(repo.owner);
  return {
    id: pull.id,
    url: `${urls.webUrl}/${full}/pulls/${pull.number}`,
    number: pull.number,
    user: userView(state.ensureUser(pull.user), urls),
    title: pull.title,
    body: pull.body ?? '',
    labels: [],
    milestone: null,
    assignee: null,
    assignees: null,
    requested_reviewers: null,
    requested_reviewers_teams: null,
    state: pull.state,
    draft: isWip(pull.title),
    is_locked: false,
    comments: 0,
    review_comments: 0,
    additions: 0,
    deletions: 0,
    changed_files: 0,
    html_url: `${urls.webUrl}/${full}/pulls/${pull.number}`,
    diff_url: `${urls.webUrl}/${full}/pulls/${pull.number}.diff`,
    patch_url: `${urls.webUrl}/${full}/pulls/${pull.number}.patch`,
    mergeable,
    merged: pull.merged,
    merged_at: pull.merged_at,
    merge_commit_sha: pull.merge_commit_sha,
    merged_by: pull.merged ? userView(baseOwner, urls) : null,
    allow_maintainer_edit: pull.maintainer_can_modify,
    base: branchInfo(state, repo, pull.base, baseSha, urls),
    head: branchInfo(state, state.headRepo(pull), pull.head.ref, headSha, urls),
    merge_base: mergeBase ?? '',
    due_date: null,
    created_at: pull.created_at,
    updated_at: pull.updated_at,
    closed_at: pull.closed_at,
    pin_order: 0,
  };
}

export function commitView(state: GiteaState, repo: RepoState, c: CommitInfo, urls: Urls) {
  const full = `${repo.owner}/${repo.name}`;
  const byEmail = (email: string) => {
    const u = state.userByEmail(email);
    return u ? userView(u, urls) : null;
  };
  return {
    url: `${urls.apiUrl}/repos/${full}/git/commits/${c.sha}`,
    sha: c.sha,
    created: c.committer.date,
    html_url: `${urls.webUrl}/${full}/commit/${c.sha}`,
    commit: {
      url: `${urls.apiUrl}/repos/${full}/git/commits/${c.sha}`,
      author: c.author,
      committer: c.committer,
      message: `${c.message}\n`,
      tree: { url: `${urls.apiUrl}/repos/${full}/git/trees/${c.tree}`, sha: c.tree, created: c.committer.date },
    },
    author: byEmail(c.author.email),
    committer: byEmail(c.committer.email),
    parents: c.parents.map((sha) => ({ url: `${urls.apiUrl}/repos/${full}/git/commits/${sha}`, sha, created: '' })),
  };
}
