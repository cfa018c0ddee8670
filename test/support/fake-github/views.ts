import type { CommitInfo } from '../fake-host/bare.js';
import type { Urls } from '../fake-host/server.js';
import type { Pull, RepoState, State, UserState } from '../fake-host/state.js';

/** GitHub's JSON shapes for the fake's records. */

export type { Urls } from '../fake-host/server.js';

export function simpleUser(u: UserState, { webUrl, apiUrl }: Urls) {
  return {
    login: u.login,
    id: u.id,
    url: `${apiUrl}/users/${u.login}`,
    html_url: `${webUrl}/${u.login}`,
    type: 'User',
  };
}

export function fullUser(u: UserState, urls: Urls) {
  return {
    ...simpleUser(u, urls),
    name: u.name,
    email: u.email,
  };
}

export function repoView(
  state: State,
  repo: RepoState,
  caller: string | undefined,
  urls: Urls,
  withParent = true,
): Record<string, unknown> {
  const owner = state.ensureUser(repo.owner);
  const full = `${repo.owner}/${repo.name}`;
  const api = `${urls.apiUrl}/repos/${full}`;
  const forks = [...state.repos.values()].filter((r) => r.parent?.toLowerCase() === full.toLowerCase()).length;
  const view: Record<string, unknown> = {
    id: repo.id,
    name: repo.name,
    full_name: full,
    private: repo.private,
    owner: simpleUser(owner, urls),
    html_url: `${urls.webUrl}/${full}`,
    description: repo.description,
    fork: repo.fork,
    url: api,
    clone_url: `${urls.webUrl}/${full}.git`,
    visibility: repo.private ? 'private' : 'public',
    forks,
    default_branch: repo.defaultBranch,
    permissions: state.permissions(repo, caller),
  };
  if (withParent && repo.parent) {
    const parent = state.repoByFullName(repo.parent);
    if (parent) {
      view.parent = repoView(state, parent, caller, urls, false);
      view.source = repoView(state, state.networkRoot(repo), caller, urls, false);
    }
  }
  return view;
}

export function commitView(state: State, repo: RepoState, c: CommitInfo, urls: Urls) {
  const full = `${repo.owner}/${repo.name}`;
  const login = (email: string) => {
    const u = state.userByEmail(email);
    return u ? simpleUser(u, urls) : null;
  };
  return {
    sha: c.sha,
    url: `${urls.apiUrl}/repos/${full}/commits/${c.sha}`,
    html_url: `${urls.webUrl}/${full}/commit/${c.sha}`,
    commit: {
      url: `${urls.apiUrl}/repos/${full}/git/commits/${c.sha}`,
      author: c.author,
      committer: c.committer,
      message: c.message,
    },
    author: login(c.author.email),
    committer: login(c.committer.email),
  };
}

/** The commits a pull brings: on its head, not on its base (for a merged pull: as of the merge). */
export function pullView(state: State, repo: RepoState, pull: Pull, caller: string | undefined, urls: Urls) {
  const full = `${repo.owner}/${repo.name}`;
  const api = `${urls.apiUrl}/repos/${full}`;
  const headSha = state.syncHead(repo, pull) ?? null;
  const baseSha = state.git.branchHead(repo.dir, pull.base) ?? null;
  const headRepo = state.headRepo(pull);
  const commits = state.pullCommits(repo, pull);
  const author = state.ensureUser(pull.user);
  const baseOwner = state.ensureUser(repo.owner);
  const headOwner = state.ensureUser(pull.head.owner);
  return {
    url: `${api}/pulls/${pull.number}`,
    id: pull.id,
    html_url: `${urls.webUrl}/${full}/pull/${pull.number}`,
    number: pull.number,
    state: pull.state,
    title: pull.title,
    user: simpleUser(author, urls),
    body: pull.body,
    merged_at: pull.merged_at,
    merge_commit_sha: pull.merge_commit_sha,
    head: {
      label: `${headOwner.login}:${pull.head.ref}`,
      ref: pull.head.ref,
      sha: headSha,
      user: simpleUser(headOwner, urls),
      repo: headRepo ? repoView(state, headRepo, caller, urls, false) : null,
    },
    base: {
      label: `${baseOwner.login}:${pull.base}`,
      ref: pull.base,
      sha: pull.merged_base_sha ?? baseSha,
      user: simpleUser(baseOwner, urls),
      repo: repoView(state, repo, caller, urls, false),
    },
    draft: pull.draft,
    merged: pull.merged,
    maintainer_can_modify: pull.maintainer_can_modify,
    commits: commits.length,
  };
}

export function branchView(state: State, repo: RepoState, branch: string, sha: string, urls: Urls) {
  const info = state.git.commitInfo(repo.dir, sha);
  const isProtected = repo.protectedBranches.has(branch);
  return {
    name: branch,
    commit: info ? commitView(state, repo, info, urls) : { sha },
    protected: isProtected,
  };
}
