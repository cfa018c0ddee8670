import type { FakeGitHub } from './server.js';
import type { RepoState, State } from './state.js';

/** The test-side calls on repositories that every fake code host (GitHub, GitLab, Gitea) answers alike. */
export type RepositorySide = Pick<
  FakeGitHub,
  'commit' | 'protectBranches' | 'branchHead' | 'files' | 'diff' | 'pulls' | 'mergePull'
>;

/**
 * Those calls over fake-github's State (which the other fakes build on), and `need`, the
 * repository or an error naming the fake: a test that names a missing repository fails at once.
 */
export function repositorySide(
  state: State,
  fake: string,
): RepositorySide & { need(owner: string, name: string): RepoState } {
  const need = (owner: string, name: string): RepoState => {
    const repo = state.repo(owner, name);
    if (!repo) throw new Error(`${fake}: no repository ${owner}/${name}`);
    return repo;
  };
  const rev = (repo: RepoState, ref: string): string => {
    const sha = state.git.resolve(repo.dir, ref);
    if (!sha) throw new Error(`${fake}: ${repo.owner}/${repo.name} has no ${ref}`);
    return sha;
  };
  return {
    need,
    commit: (owner, name, opts) => state.commit(need(owner, name), opts),
    protectBranches(owner, name, branches) {
      const repo = need(owner, name);
      state.setProtected(repo, [...repo.protectedBranches, ...branches]);
    },
    branchHead(owner, name, branch) {
      const repo = state.repo(owner, name);
      return repo ? state.git.branchHead(repo.dir, branch) : undefined;
    },
    files(owner, name, ref) {
      const repo = need(owner, name);
      return state.git.files(repo.dir, rev(repo, ref));
    },
    diff(owner, name, base, head) {
      const repo = need(owner, name);
      return state.git.diff(repo.dir, rev(repo, base), rev(repo, head));
    },
    pulls: (owner, name) => state.pulls(need(owner, name)).map((p) => ({ ...p, head: { ...p.head } })),
    mergePull: (owner, name, number) => state.mergePull(need(owner, name), number),
  };
}
