import type { CommitInfo } from '../fake-host/bare.js';
import type { Ctx } from '../fake-host/rest.js';
import { type Pull, type RepoState, type UserState, fullName } from '../fake-host/state.js';

/** GitHub's JSON shapes for the fake's records, trimmed to the fields clients read. */

export const simpleUser = ({ urls }: Ctx, u: UserState) => ({
  login: u.login,
  id: u.id,
  url: `${urls.apiUrl}/users/${u.login}`,
  html_url: `${urls.webUrl}/${u.login}`,
  type: 'User',
});

export function repoView(ctx: Ctx, repo: RepoState, withParent = true): Record<string, unknown> {
  const { state, urls } = ctx;
  const full = fullName(repo);
  const parent = withParent && repo.parent ? state.repoByFullName(repo.parent) : undefined;
  return {
    id: repo.id,
    name: repo.name,
    full_name: full,
    private: repo.visibility !== 'public',
    owner: simpleUser(ctx, state.ensureUser(repo.owner)),
    html_url: `${urls.webUrl}/${full}`,
    description: repo.description,
    fork: repo.fork,
    url: `${urls.apiUrl}/repos/${full}`,
    clone_url: `${urls.webUrl}/${full}.git`,
    visibility: repo.visibility,
    forks: state.forksOf(repo).length,
    default_branch: repo.defaultBranch,
    permissions: state.permissions(repo, ctx.login),
    ...(parent ? { parent: repoView(ctx, parent, false), source: repoView(ctx, state.networkRoot(repo), false) } : {}),
  };
}

export function commitView(ctx: Ctx, repo: RepoState, c: CommitInfo) {
  const { apiUrl, webUrl } = ctx.urls;
  const full = fullName(repo);
  const user = (email: string) => {
    const u = ctx.state.userByEmail(email);
    return u ? simpleUser(ctx, u) : null;
  };
  return {
    sha: c.sha,
    url: `${apiUrl}/repos/${full}/commits/${c.sha}`,
    html_url: `${webUrl}/${full}/commit/${c.sha}`,
    commit: {
      url: `${apiUrl}/repos/${full}/git/commits/${c.sha}`,
      author: c.author,
      committer: c.committer,
      message: c.message,
    },
    author: user(c.author.email),
    committer: user(c.committer.email),
  };
}

/** `head.sha` is the pull's head now (as of the merge once merged); `commits` those it brings. */
export function pullView(ctx: Ctx, repo: RepoState, pull: Pull) {
  const { state, urls } = ctx;
  const full = fullName(repo);
  const side = (owner: string, ref: string, sha: string | null, on: RepoState | undefined) => ({
    label: `${state.ensureUser(owner).login}:${ref}`,
    ref,
    sha,
    user: simpleUser(ctx, state.ensureUser(owner)),
    repo: on ? repoView(ctx, on, false) : null,
  });
  const baseSha = pull.merged_base_sha ?? state.git.branchHead(repo.dir, pull.base) ?? null;
  return {
    url: `${urls.apiUrl}/repos/${full}/pulls/${pull.number}`,
    id: pull.id,
    html_url: `${urls.webUrl}/${full}/pull/${pull.number}`,
    number: pull.number,
    state: pull.state,
    title: pull.title,
    user: simpleUser(ctx, state.ensureUser(pull.user)),
    body: pull.body,
    merged_at: pull.merged_at,
    merge_commit_sha: pull.merge_commit_sha,
    head: side(pull.head.owner, pull.head.ref, state.syncHead(repo, pull) ?? null, state.headRepo(pull)),
    base: side(repo.owner, pull.base, baseSha, repo),
    draft: pull.draft,
    merged: pull.merged,
    maintainer_can_modify: pull.maintainer_can_modify,
    commits: state.pullCommits(repo, pull).length,
  };
}
