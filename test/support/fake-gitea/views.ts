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
    full_name: u.name === u.login ? '' : u.name,
    email: u.email,
    html_url: `${webUrl}/${u.login}`,
    description: '',
    visibility: 'public',
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
  const parent = withParent && repo.parent ? state.repoByFullName(repo.parent) : undefined;
  return {
    id: repo.id,
    owner: userView(state.ensureUser(repo.owner), urls),
    name: repo.name,
    full_name: full,
    description: repo.description ?? '',
    empty: state.git.branches(repo.dir).length === 0,
    private: repo.private && state.visibility(repo) === 'private',
    fork: repo.fork,
    parent: parent ? repoView(state, parent, caller, urls, false) : null,
    size: 0,
    html_url: `${urls.webUrl}/${full}`,
    url: `${urls.apiUrl}/repos/${full}`,
    link: '',
    clone_url: `${urls.webUrl}/${full}.git`,
    default_branch: repo.defaultBranch,
    permissions: { admin: perms.admin, push: perms.push, pull: perms.pull },
    internal: state.visibility(repo) === 'internal',
  };
}

/** Gitea's work-in-progress prefixes (WORK_IN_PROGRESS_PREFIXES default): such a pull is a draft. */
export const isWip = (title: string): boolean => /^\s*(?:WIP:|\[WIP\])/i.test(title);

function branchInfo(state: GiteaState, repo: RepoState | undefined, ref: string, sha: string | null, urls: Urls) {
  return {
    label: ref,
    ref,
    sha: sha ?? '',
    repo: repo ? repoView(state, repo, undefined, urls, false) : null,
  };
}

export function pullView(state: GiteaState, repo: RepoState, pull: Pull, urls: Urls) {
  const full = `${repo.owner}/${repo.name}`;
  const headSha = state.syncHead(repo, pull) ?? null;
  const baseSha = pull.merged_base_sha ?? state.git.branchHead(repo.dir, pull.base) ?? null;
  return {
    id: pull.id,
    url: `${urls.webUrl}/${full}/pulls/${pull.number}`,
    number: pull.number,
    user: userView(state.ensureUser(pull.user), urls),
    title: pull.title,
    body: pull.body ?? '',
    state: pull.state,
    draft: isWip(pull.title),
    html_url: `${urls.webUrl}/${full}/pulls/${pull.number}`,
    merged: pull.merged,
    merged_at: pull.merged_at,
    base: branchInfo(state, repo, pull.base, baseSha, urls),
    head: branchInfo(state, state.headRepo(pull), pull.head.ref, headSha, urls),
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
  };
}
