import { type Permissions, type RepoState, State } from '../fake-host/state.js';

/**
 * The fake's model of Gitea: fake-github's users, tokens, repositories and pulls (the same git
 * plumbing and Pull records, so tests share assertions), plus what Gitea has beside them:
 * `internal` repositories (any signed-in user reads them) and collaborators with read access only.
 */

/** Gitea's pre-receive hook refusal, as its `gitea hook` prints it (cmd/hook.go: "Gitea: " + message). */
export const GITEA_PROTECTED_REFUSAL = `    echo "Gitea: Not allowed to push to protected branch $branch" >&2`;

export type Visibility = 'public' | 'internal' | 'private';

const NONE: Permissions = { admin: false, maintain: false, push: false, triage: false, pull: false };

export class GiteaState extends State {
  private readonly internal = new WeakSet<RepoState>();
  private readonly readers = new WeakMap<RepoState, Set<string>>();

  constructor(root: string, scratch: string) {
    super(root, scratch, GITEA_PROTECTED_REFUSAL);
  }

  /**
   * Sets a repository's visibility. An internal repository is stored as private (anonymous
   * callers do not see it) and marked, so every signed-in user may read it.
   */
  setVisibility(repo: RepoState, visibility: Visibility): void {
    repo.private = visibility !== 'public';
    if (visibility === 'internal') this.internal.add(repo);
    else this.internal.delete(repo);
  }

  visibility(repo: RepoState): Visibility {
    return !repo.private ? 'public' : this.internal.has(repo) ? 'internal' : 'private';
  }

  addReader(repo: RepoState, login: string): void {
    const set = this.readers.get(repo) ?? new Set<string>();
    set.add(login.toLowerCase());
    this.readers.set(repo, set);
  }

  override permissions(repo: RepoState, login: string | undefined): Permissions {
    const granted = super.permissions(repo, login);
    if (granted.pull || !login) return granted;
    if (this.internal.has(repo) || this.readers.get(repo)?.has(login.toLowerCase())) return { ...NONE, pull: true };
    return granted;
  }
}
