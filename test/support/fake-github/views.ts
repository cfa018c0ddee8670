import type { CommitInfo } from '../fake-host/bare.js';
import type { Urls } from '../fake-host/server.js';
import type { Pull, RepoState, State, UserState } from '../fake-host/state.js';

/** GitHub's JSON shapes for the fake's records. */

export type { Urls } from '../fake-host/server.js';

const nodeId = (kind: string, id: number): string => Buffer.from(`${kind}:${id}`).toString('base64').replace(/=+$/, '');

export function simpleUser(u: UserState, { webUrl, apiUrl }: Urls) {
  return {
    login: u.login,
    id: u.id,
    node_id: nodeId('U', u.id),
    avatar_url: `${webUrl}/avatars/${u.login}`,
    gravatar_id: '',
    url: `${apiUrl}/users/${u.login}`,
    html_url: `${webUrl}/${u.login}`,
    repos_url: `${apiUrl}/users/${u.login}/repos`,
    type: 'User',
    site_admin: false,
  };
}

export function fullUser(state: State, u: UserState, urls: Urls) {
  const owned = [...state.repos.values()].filter((r) => r.owner === u.login);
  return {
    ...simpleUser(u, urls),
    name: u.name,
    company: null,
    blog: '',
    location: null,
    email: u.email,
    hireable: null,
    bio: null,
    twitter_username: null,
    public_repos: owned.filter((r) => !r.private).length,
    total_private_repos: owned.filter((r) => r.private).length,
    owned_private_repos: owned.filter((r) => r.private).length,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: u.createdAt,
    updated_at: u.createdAt,
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
  const open = state.pulls(repo).filter((p) => p.state === 'open').length;
  const host = new URL(urls.webUrl).host;
  const view: Record<string, unknown> = {
    id: repo.id,
    node_id: nodeId('R', repo.id),
    name: repo.name,
    full_name: full,
    private: repo.private,
    owner: simpleUser(owner, urls),
    html_url: `${urls.webUrl}/${full}`,
    description: repo.description,
    fork: repo.fork,
    url: api,
    forks_url: `${api}/forks`,
    pulls_url: `${api}/pulls{/number}`,
    branches_url: `${api}/branches{/branch}`,
    git_url: `git://${host}/${full}.git`,
    ssh_url: `git@${host}:${full}.git`,
    clone_url: `${urls.webUrl}/${full}.git`,
    svn_url: `${urls.webUrl}/${full}`,
    homepage: null,
    size: 0,
    stargazers_count: 0,
    watchers_count: 0,
    language: null,
    has_issues: true,
    has_projects: true,
    has_downloads: true,
    has_wiki: true,
    has_pages: false,
    has_discussions: false,
    forks_count: forks,
    mirror_url: null,
    archived: false,
    disabled: false,
    open_issues_count: open,
    license: null,
    allow_forking: true,
    is_template: false,
    web_commit_signoff_required: false,
    topics: [],
    visibility: repo.private ? 'private' : 'public',
    forks,
    open_issues: open,
    watchers: 0,
    default_branch: repo.defaultBranch,
    permissions: state.permissions(repo, caller),
    created_at: repo.createdAt,
    updated_at: repo.updatedAt,
    pushed_at: repo.updatedAt,
    network_count: forks,
    subscribers_count: 0,
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
    node_id: Buffer.from(`C:${c.sha}`).toString('base64'),
    url: `${urls.apiUrl}/repos/${full}/commits/${c.sha}`,
    html_url: `${urls.webUrl}/${full}/commit/${c.sha}`,
    comments_url: `${urls.apiUrl}/repos/${full}/commits/${c.sha}/comments`,
    commit: {
      url: `${urls.apiUrl}/repos/${full}/git/commits/${c.sha}`,
      author: c.author,
      committer: c.committer,
      message: c.message,
      tree: { sha: c.tree, url: `${urls.apiUrl}/repos/${full}/git/trees/${c.tree}` },
      comment_count: 0,
      verification: { verified: false, reason: 'unsigned', signature: null, payload: null },
    },
    author: login(c.author.email),
    committer: login(c.committer.email),
    parents: c.parents.map((sha) => ({
      sha,
      url: `${urls.apiUrl}/repos/${full}/commits/${sha}`,
      html_url: `${urls.webUrl}/${full}/commit/${sha}`,
    })),
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
  let additions = 0;
  let deletions = 0;
  let changedFiles = 0;
  const from = pull.merged_base_sha ?? baseSha;
  const mergeBase = headSha && from ? state.git.mergeBase(repo.dir, from, headSha) : undefined;
  if (mergeBase && headSha) {
    for (const line of state.git
      .run(repo.dir, ['diff', '--numstat', mergeBase, headSha, '--'])
      .split('\n')
      .filter(Boolean)) {
      const [a, d] = line.split('\t');
      additions += Number.parseInt(a ?? '0', 10) || 0;
      deletions += Number.parseInt(d ?? '0', 10) || 0;
      changedFiles++;
    }
  }
  let mergeable: boolean | null = null;
  if (pull.state === 'open' && headSha && baseSha)
    mergeable = state.git.mergeTree(repo.dir, baseSha, headSha) !== undefined;
  const author = state.ensureUser(pull.user);
  const perms = state.permissions(repo, pull.user);
  const association =
    author.login.toLowerCase() === repo.owner.toLowerCase() ? 'OWNER' : perms.push ? 'COLLABORATOR' : 'CONTRIBUTOR';
  const baseOwner = state.ensureUser(repo.owner);
  const headOwner = state.ensureUser(pull.head.owner);
  return {
    url: `${api}/pulls/${pull.number}`,
    id: pull.id,
    node_id: nodeId('PR', pull.id),
    html_url: `${urls.webUrl}/${full}/pull/${pull.number}`,
    diff_url: `${urls.webUrl}/${full}/pull/${pull.number}.diff`,
    patch_url: `${urls.webUrl}/${full}/pull/${pull.number}.patch`,
    issue_url: `${api}/issues/${pull.number}`,
    commits_url: `${api}/pulls/${pull.number}/commits`,
    review_comments_url: `${api}/pulls/${pull.number}/comments`,
    review_comment_url: `${api}/pulls/comments{/number}`,
    comments_url: `${api}/issues/${pull.number}/comments`,
    statuses_url: headSha ? `${api}/statuses/${headSha}` : null,
    number: pull.number,
    state: pull.state,
    locked: false,
    title: pull.title,
    user: simpleUser(author, urls),
    body: pull.body,
    labels: [],
    milestone: null,
    active_lock_reason: null,
    created_at: pull.created_at,
    updated_at: pull.updated_at,
    closed_at: pull.closed_at,
    merged_at: pull.merged_at,
    merge_commit_sha: pull.merge_commit_sha,
    assignee: null,
    assignees: [],
    requested_reviewers: [],
    requested_teams: [],
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
    _links: {
      self: { href: `${api}/pulls/${pull.number}` },
      html: { href: `${urls.webUrl}/${full}/pull/${pull.number}` },
      commits: { href: `${api}/pulls/${pull.number}/commits` },
    },
    author_association: association,
    auto_merge: null,
    draft: pull.draft,
    merged: pull.merged,
    mergeable,
    rebaseable: mergeable,
    mergeable_state: mergeable === null ? 'unknown' : mergeable ? 'clean' : 'dirty',
    merged_by: pull.merged ? simpleUser(baseOwner, urls) : null,
    comments: 0,
    review_comments: 0,
    maintainer_can_modify: pull.maintainer_can_modify,
    commits: commits.length,
    additions,
    deletions,
    changed_files: changedFiles,
  };
}

export function branchView(state: State, repo: RepoState, branch: string, sha: string, urls: Urls) {
  const full = `${repo.owner}/${repo.name}`;
  const api = `${urls.apiUrl}/repos/${full}`;
  const info = state.git.commitInfo(repo.dir, sha);
  const isProtected = repo.protectedBranches.has(branch);
  return {
    name: branch,
    commit: info ? commitView(state, repo, info, urls) : { sha },
    _links: { self: `${api}/branches/${encodeURIComponent(branch)}`, html: `${urls.webUrl}/${full}/tree/${branch}` },
    protected: isProtected,
    protection: {
      enabled: isProtected,
      required_status_checks: { enforcement_level: 'off', contexts: [], checks: [] },
    },
    protection_url: `${api}/branches/${encodeURIComponent(branch)}/protection`,
  };
}
