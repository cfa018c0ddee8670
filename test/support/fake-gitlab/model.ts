import { type Pull, type RepoState, State, type UserState, key } from '../fake-host/state.js';

/**
 * The fake's model of GitLab on top of fake-github's State (users, tokens, bare repositories,
 * pull requests kept as merge requests): what GitLab adds is groups (nested namespaces), three
 * visibilities, numeric access levels and merge requests' source projects.
 */

export const ACCESS = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;
export type Visibility = 'public' | 'internal' | 'private';

/** GitLab's words for a push to a protected branch, as its pre-receive check prints them (a hook's shell line). */
export const PROTECTED_REFUSAL =
  '    echo "GitLab: You are not allowed to push code to protected branches on this project." >&2';

/** `Draft:`, `[Draft]` or `(Draft)` at the start of a title marks a draft merge request. */
export const DRAFT_TITLE = /^\s*(\[draft\]|\(draft\)|draft:)\s*/i;

export interface GroupState {
  id: number;
  fullPath: string;
  /** Lower-cased username → access level, inherited by subgroups and their projects. */
  members: Map<string, number>;
}

export interface ProjectExtra {
  visibility: Visibility;
  /** Lower-cased username → access level on this project alone. */
  members: Map<string, number>;
}

/** What a merge request has beyond fake-github's Pull. */
export interface MergeRequestExtra {
  sourceProjectId: number;
  targetProjectId: number;
  authorId: number;
}

export class GitLabModel {
  readonly state: State;
  readonly groups = new Map<string, GroupState>();
  readonly projects = new Map<number, ProjectExtra>();
  readonly mergeRequests = new Map<number, MergeRequestExtra>();
  /** OAuth access tokens expired by `expireOAuth` (answered 401 invalid_token). */
  readonly expired = new Set<string>();
  private nextGroupId = 501;

  constructor(root: string, scratch: string) {
    this.state = new State(root, scratch, PROTECTED_REFUSAL);
  }

  /** The group at `fullPath` and its parents, made if missing. */
  ensureGroup(fullPath: string): GroupState {
    const parts = fullPath.split('/');
    let group: GroupState | undefined;
    for (let i = 1; i <= parts.length; i++) {
      const path = parts.slice(0, i).join('/');
      group = this.groups.get(path.toLowerCase());
      if (!group) {
        group = { id: this.nextGroupId++, fullPath: path, members: new Map() };
        this.groups.set(path.toLowerCase(), group);
      }
    }
    return group!;
  }

  /** A namespace is a group when it was made as one or holds a slash; otherwise it is a user's. */
  isGroup(namespace: string): boolean {
    return namespace.includes('/') || this.groups.has(namespace.toLowerCase());
  }

  projectById(id: number): RepoState | undefined {
    for (const r of this.state.repos.values()) if (r.id === id) return r;
    return undefined;
  }

  /** A project by its URL id: the numeric id or the (decoded) path_with_namespace. */
  project(id: string): RepoState | undefined {
    if (/^\d+$/.test(id)) return this.projectById(Number(id));
    const slash = id.lastIndexOf('/');
    return slash > 0 ? this.state.repo(id.slice(0, slash), id.slice(slash + 1)) : undefined;
  }

  extra(repo: RepoState): ProjectExtra {
    let extra = this.projects.get(repo.id);
    if (!extra) {
      extra = { visibility: repo.private ? 'private' : 'public', members: new Map() };
      this.projects.set(repo.id, extra);
    }
    return extra;
  }

  setVisibility(repo: RepoState, visibility: Visibility): void {
    this.extra(repo).visibility = visibility;
    repo.private = visibility !== 'public';
  }

  /** The caller's access level: the namespace's owner 50, else the highest membership (project, groups above). */
  accessLevel(repo: RepoState, username: string | undefined): number {
    if (!username) return 0;
    const u = username.toLowerCase();
    if (!this.isGroup(repo.owner) && repo.owner.toLowerCase() === u) return ACCESS.owner;
    let level = this.extra(repo).members.get(u) ?? 0;
    const parts = repo.owner.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const group = this.groups.get(parts.slice(0, i).join('/').toLowerCase());
      level = Math.max(level, group?.members.get(u) ?? 0);
    }
    return level;
  }

  /** Public: anyone; internal: any signed-in user; private: Reporter and up. */
  canRead(repo: RepoState, username: string | undefined): boolean {
    const visibility = this.extra(repo).visibility;
    if (visibility === 'public') return true;
    if (visibility === 'internal' && username) return true;
    return this.accessLevel(repo, username) >= ACCESS.reporter;
  }

  canPush(repo: RepoState, username: string | undefined): boolean {
    return this.accessLevel(repo, username) >= ACCESS.developer;
  }

  /** The caller's fork of `repo`, if any. */
  forkOf(repo: RepoState, username: string): RepoState | undefined {
    return this.state.forkOf(repo, username);
  }

  /** Every merge request targeting `repo`, with its GitLab extras. */
  mergeRequestsOf(repo: RepoState): { pull: Pull; extra: MergeRequestExtra }[] {
    return this.state.pulls(repo).map((pull) => ({ pull, extra: this.mergeRequests.get(pull.id)! }));
  }

  user(login: string): UserState | undefined {
    return this.state.user(login);
  }
}

export { key };
