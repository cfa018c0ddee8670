import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Bare, type CommitInfo, type Identity, isoSeconds } from './bare.js';

/**
 * The fake hosts' model, GitHub's shape (each host adds its own on top): users and their tokens,
 * repositories over bare git directories, pull requests.
 */

export interface UserState {
  login: string;
  id: number;
  name: string;
  email: string;
  createdAt: string;
}

export interface TokenState {
  login: string;
  /** A read-only (fine-grained) token: every write answers 403. */
  readOnly: boolean;
  scopes: string[];
}

export interface RepoState {
  id: number;
  owner: string;
  name: string;
  private: boolean;
  defaultBranch: string;
  fork: boolean;
  /** `owner/name` of the repository this one was forked from. */
  parent?: string;
  allowDrafts: boolean;
  /** Lower-cased logins with push access. */
  collaborators: Set<string>;
  protectedBranches: Set<string>;
  description: string | null;
  createdAt: string;
  updatedAt: string;
  dir: string;
}

/** A pull request as the fake stores it (what `pulls()` returns). */
export interface Pull {
  number: number;
  id: number;
  title: string;
  body: string | null;
  /** Author login. */
  user: string;
  head: { owner: string; repo: string; ref: string };
  /** The base branch name. */
  base: string;
  draft: boolean;
  state: 'open' | 'closed';
  merged: boolean;
  merged_at: string | null;
  closed_at: string | null;
  created_at: string;
  updated_at: string;
  maintainer_can_modify: boolean;
  merge_commit_sha: string | null;
  /** Set when merged: the head commit that was merged and the base commit before the merge. */
  merged_head_sha?: string;
  merged_base_sha?: string;
}

export interface Permissions {
  admin: boolean;
  maintain: boolean;
  push: boolean;
  triage: boolean;
  pull: boolean;
}

const NO_ACCESS: Permissions = { admin: false, maintain: false, push: false, triage: false, pull: false };

export const key = (owner: string, name: string): string => `${owner}/${name}`.toLowerCase();
export const now = (): string => isoSeconds(new Date());
const TOKEN_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 'ghp_' + 36 random characters, like a classic personal access token. */
export function newToken(prefix: string): string {
  const bytes = randomBytes(36);
  let out = prefix;
  for (const b of bytes) out += TOKEN_CHARS[b % TOKEN_CHARS.length];
  return out;
}

export class State {
  readonly users = new Map<string, UserState>();
  readonly tokens = new Map<string, TokenState>();
  readonly repos = new Map<string, RepoState>();
  readonly pullsByRepo = new Map<string, Pull[]>();
  readonly git: Bare;
  private nextUserId = 1001;
  private nextRepoId = 200001;
  private nextPullId = 3000001;

  /** `protectedRefusal`: the hook's words for a refused push to a protected branch (see Bare). */
  constructor(
    readonly root: string,
    scratch: string,
    protectedRefusal?: string,
  ) {
    this.git = new Bare(scratch, protectedRefusal);
  }

  // ---- users and tokens -------------------------------------------------------------------

  user(login: string): UserState | undefined {
    return this.users.get(login.toLowerCase());
  }

  ensureUser(login: string): UserState {
    const existing = this.user(login);
    if (existing) return existing;
    const user: UserState = {
      login,
      id: this.nextUserId++,
      name: login,
      email: `${login.toLowerCase()}@users.example.com`,
      createdAt: now(),
    };
    this.users.set(login.toLowerCase(), user);
    return user;
  }

  addToken(login: string, token: string, opts: { readOnly?: boolean; scopes?: string[] } = {}): void {
    this.tokens.set(token, {
      login: this.ensureUser(login).login,
      readOnly: opts.readOnly ?? false,
      scopes: opts.scopes ?? ['repo', 'workflow'],
    });
  }

  /** The user a token belongs to (undefined: unknown token). */
  byToken(token: string): { user: UserState; token: TokenState } | undefined {
    const t = this.tokens.get(token);
    const user = t && this.user(t.login);
    return t && user ? { user, token: t } : undefined;
  }

  /** The user whose commit email this is, for commit author/committer logins. */
  userByEmail(email: string): UserState | undefined {
    for (const u of this.users.values()) if (u.email.toLowerCase() === email.toLowerCase()) return u;
    return undefined;
  }

  identity(login: string): Identity {
    const u = this.ensureUser(login);
    return { name: u.name, email: u.email };
  }

  // ---- repositories -----------------------------------------------------------------------

  repo(owner: string, name: string): RepoState | undefined {
    return this.repos.get(key(owner, name));
  }

  repoByFullName(fullName: string): RepoState | undefined {
    // The last slash: a GitLab namespace (fake-gitlab's owners) may itself hold slashes.
    const slash = fullName.lastIndexOf('/');
    return slash > 0 ? this.repo(fullName.slice(0, slash), fullName.slice(slash + 1)) : undefined;
  }

  permissions(repo: RepoState, login: string | undefined): Permissions {
    const l = login?.toLowerCase();
    if (l && l === repo.owner.toLowerCase())
      return { admin: true, maintain: true, push: true, triage: true, pull: true };
    if (l && repo.collaborators.has(l)) return { admin: false, maintain: false, push: true, triage: true, pull: true };
    if (!repo.private) return { ...NO_ACCESS, pull: true };
    return { ...NO_ACCESS };
  }

  canSee(repo: RepoState, login: string | undefined): boolean {
    return this.permissions(repo, login).pull;
  }

  /** A new repository record and its bare directory (empty: no commits). */
  addRepo(
    owner: string,
    name: string,
    opts: {
      private?: boolean;
      branch?: string;
      allowDrafts?: boolean;
      description?: string | null;
      fork?: RepoState;
    } = {},
  ): RepoState {
    if (this.repo(owner, name)) throw new Error(`fake-github: repository ${owner}/${name} already exists`);
    const ownerUser = this.ensureUser(owner);
    const dir = join(this.root, ownerUser.login, `${name}.git`);
    const parent = opts.fork;
    if (parent) this.git.copy(parent.dir, dir);
    else this.git.init(dir, opts.branch ?? 'main');
    const repo: RepoState = {
      id: this.nextRepoId++,
      owner: ownerUser.login,
      name,
      private: opts.private ?? parent?.private ?? false,
      defaultBranch: parent?.defaultBranch ?? opts.branch ?? 'main',
      fork: parent !== undefined,
      ...(parent ? { parent: `${parent.owner}/${parent.name}` } : {}),
      allowDrafts: opts.allowDrafts ?? true,
      collaborators: new Set(),
      protectedBranches: new Set(),
      description: opts.description ?? parent?.description ?? null,
      createdAt: now(),
      updatedAt: now(),
      dir,
    };
    this.git.setHead(dir, repo.defaultBranch);
    this.git.setProtected(dir, []);
    this.repos.set(key(owner, name), repo);
    this.pullsByRepo.set(key(owner, name), []);
    return repo;
  }

  setProtected(repo: RepoState, branches: Iterable<string>): void {
    repo.protectedBranches = new Set(branches);
    this.git.setProtected(repo.dir, repo.protectedBranches);
  }

  /** The root of a fork network (follows parents). */
  networkRoot(repo: RepoState): RepoState {
    let r = repo;
    for (let i = 0; i < 100 && r.parent; i++) {
      const p = this.repoByFullName(r.parent);
      if (!p) break;
      r = p;
    }
    return r;
  }

  /** The caller's existing fork of `repo`, if any. */
  forkOf(repo: RepoState, login: string): RepoState | undefined {
    const full = `${repo.owner}/${repo.name}`.toLowerCase();
    for (const r of this.repos.values())
      if (r.owner.toLowerCase() === login.toLowerCase() && r.parent?.toLowerCase() === full) return r;
    return undefined;
  }

  /** A fork of `repo` under `login`: reuses an existing one; a taken name gets `-1`, `-2`, … like GitHub. */
  fork(repo: RepoState, login: string, name?: string): RepoState {
    const existing = this.forkOf(repo, login);
    if (existing) return existing;
    const base = name ?? repo.name;
    let candidate = base;
    for (let i = 1; this.repo(login, candidate); i++) candidate = `${base}-${i}`;
    return this.addRepo(login, candidate, { fork: repo });
  }

  /** A repository of `owner` in the same fork network as `repo` (the repo itself when owner owns it). */
  inNetwork(repo: RepoState, owner: string): RepoState | undefined {
    if (repo.owner.toLowerCase() === owner.toLowerCase()) return repo;
    const root = this.networkRoot(repo);
    for (const r of this.repos.values()) {
      if (r.owner.toLowerCase() === owner.toLowerCase() && this.networkRoot(r) === root) return r;
    }
    return undefined;
  }

  /** A push by a person, written straight into the repository (hooks do not run). */
  commit(
    repo: RepoState,
    opts: {
      branch: string;
      files: Record<string, string | null>;
      links?: Record<string, string>;
      message?: string;
      author?: Identity;
      from?: string;
    },
  ): string {
    let parent = this.git.branchHead(repo.dir, opts.branch);
    if (parent === undefined) {
      const from = opts.from ?? repo.defaultBranch;
      parent = this.git.resolve(repo.dir, from);
      if (parent === undefined && opts.from !== undefined)
        throw new Error(`fake-github: ${repo.owner}/${repo.name} has no ${opts.from}`);
    }
    const sha = this.git.commitFiles(
      repo.dir,
      parent,
      opts.files,
      opts.message ?? 'change',
      opts.author ?? this.identity(repo.owner),
      opts.links,
    );
    this.git.setRef(repo.dir, opts.branch, sha);
    repo.updatedAt = now();
    return sha;
  }

  // ---- pull requests ----------------------------------------------------------------------

  pulls(repo: RepoState): Pull[] {
    return this.pullsByRepo.get(key(repo.owner, repo.name)) ?? [];
  }

  pull(repo: RepoState, number: number): Pull | undefined {
    return this.pulls(repo).find((p) => p.number === number);
  }

  /** The pull request's commits: on its head and not on its base (as of the merge once merged), oldest first. */
  pullCommits(repo: RepoState, pull: Pull): CommitInfo[] {
    const head = this.syncHead(repo, pull);
    if (!head) return [];
    const base = pull.merged_base_sha ?? this.git.branchHead(repo.dir, pull.base);
    return this.git.log(repo.dir, base, head);
  }

  headRepo(pull: Pull): RepoState | undefined {
    return this.repo(pull.head.owner, pull.head.repo);
  }

  /**
   * The pull's head commit, brought into the base repository as refs/pull/N/head (as GitHub keeps
   * it); for a merged pull, the head that was merged.
   */
  syncHead(repo: RepoState, pull: Pull): string | undefined {
    if (pull.merged_head_sha) return pull.merged_head_sha;
    const head = this.headRepo(pull);
    if (!head) return this.git.resolve(repo.dir, `refs/pull/${pull.number}/head`);
    const sha = this.git.fetchRef(repo.dir, head.dir, `refs/heads/${pull.head.ref}`, `refs/pull/${pull.number}/head`);
    return sha ?? this.git.resolve(repo.dir, `refs/pull/${pull.number}/head`);
  }

  addPull(
    repo: RepoState,
    fields: Omit<
      Pull,
      | 'number'
      | 'id'
      | 'state'
      | 'merged'
      | 'merged_at'
      | 'closed_at'
      | 'created_at'
      | 'updated_at'
      | 'merge_commit_sha'
    >,
  ): Pull {
    const list = this.pulls(repo);
    const pull: Pull = {
      ...fields,
      number: list.length + 1,
      id: this.nextPullId++,
      state: 'open',
      merged: false,
      merged_at: null,
      closed_at: null,
      created_at: now(),
      updated_at: now(),
      merge_commit_sha: null,
    };
    list.push(pull);
    this.syncHead(repo, pull);
    return pull;
  }

  /** Merges an open pull with a merge commit on its base branch; returns the merge commit. */
  mergePull(repo: RepoState, number: number, by?: string): string {
    const pull = this.pull(repo, number);
    if (!pull) throw new Error(`fake-github: ${repo.owner}/${repo.name} has no pull #${number}`);
    if (pull.state !== 'open')
      throw new Error(`fake-github: pull #${number} is ${pull.merged ? 'already merged' : 'closed'}`);
    const headSha = this.syncHead(repo, pull);
    const baseSha = this.git.branchHead(repo.dir, pull.base);
    if (!headSha || !baseSha) throw new Error(`fake-github: pull #${number} has no head or base commit`);
    const tree = this.git.mergeTree(repo.dir, baseSha, headSha);
    if (!tree) throw new Error(`fake-github: pull #${number} has merge conflicts`);
    const message = `Merge pull request #${number} from ${pull.head.owner}/${pull.head.ref}\n\n${pull.title}\n`;
    const sha = this.git.commitTree(repo.dir, tree, [baseSha, headSha], message, this.identity(by ?? repo.owner));
    this.git.setRef(repo.dir, pull.base, sha);
    const at = now();
    Object.assign(pull, {
      state: 'closed',
      merged: true,
      merged_at: at,
      closed_at: at,
      updated_at: at,
      merge_commit_sha: sha,
      merged_head_sha: headSha,
      merged_base_sha: baseSha,
    });
    return sha;
  }
}
