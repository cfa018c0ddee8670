import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Bare, type CommitContent, type CommitInfo, isoSeconds } from './bare.js';
import type { CiJobState } from './ci.js';

/**
 * The one model behind the three fake hosts: users and their tokens, groups (GitLab's nested
 * namespaces; no other host makes any), repositories over bare git directories with a visibility
 * and members at access levels, pull requests (GitLab's merge requests too). Each host only words
 * and shapes it; who may read and push is decided here once.
 */

/** GitLab's numeric levels, used for every host: a GitHub collaborator is a developer, a Gitea reader a reporter. */
export const ACCESS = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;
export type Visibility = 'public' | 'internal' | 'private';

export type UserState = { login: string; id: number; name: string; email: string; createdAt: string };

/**
 * `readOnly`: REST writes and pushes are refused; `oauth`: the OAuth provider's, `expired` once it ends it;
 * `expiresAt`: dead from then on (ms, on the State's clock).
 */
export type TokenState = {
  login: string;
  readOnly: boolean;
  scopes: string[];
  oauth?: boolean;
  expired?: boolean;
  expiresAt?: number;
};

/**
 * `members`: lower-cased login → access level, inherited by subgroups and their repositories;
 * `hooks`: the group's (GitLab) or organisation's (Gitea) webhooks, delivered every event of its
 * repositories (and its subgroups').
 */
export type GroupState = { id: number; fullPath: string; members: Map<string, number>; hooks: Hook[] };

export interface RepoState {
  id: number;
  owner: string;
  name: string;
  visibility: Visibility;
  defaultBranch: string;
  fork: boolean;
  /** `owner/name` of the repository this one was forked from. */
  parent?: string;
  allowDrafts: boolean;
  /** Lower-cased login → access level on this repository alone. */
  members: Map<string, number>;
  protectedBranches: Set<string>;
  description: string | null;
  dir: string;
  pulls: Pull[];
  hooks: Hook[];
  issues: Issue[];
  /** Every comment of the repository: on an issue's or a pull's conversation, or on a line of a pull (`line`). */
  comments: Comment[];
  reviews: Review[];
  reactions: ReactionState[];
  /** The CI jobs reported on its commits, oldest first (ci.ts). */
  ci: CiJobState[];
}

/** An issue or a pull request (GitLab's merge request), as comments and reactions name it. */
export type Thread = { kind: 'issue' | 'pull'; number: number };

export interface Issue {
  number: number;
  id: number;
  title: string;
  body: string;
  user: string;
  labels: string[];
  state: 'open' | 'closed';
  createdAt: string;
}

/** A comment: `line` when it is on a line of a pull's change (`review`: the review it belongs to, if any). */
export interface Comment {
  id: number;
  thread: Thread;
  user: string;
  body: string;
  createdAt: string;
  updatedAt: string;
  line?: { path: string; line: number; review?: number };
}

export type ReviewState = 'changes_requested' | 'commented' | 'approved';

export interface Review {
  id: number;
  pull: number;
  user: string;
  state: ReviewState;
  body: string;
  submittedAt: string;
}

/** A reaction (GitLab: an award emoji) in the host's word, on a thread or on a comment (by id). */
export type ReactionState = {
  id: number;
  on: Thread | { comment: number };
  user: string;
  content: string;
  createdAt: string;
};

/**
 * A webhook as the fake stores it (what `hooks()` returns): `events` in the host's words (GitLab:
 * the switches on), `config` the host's other settings as it shows them (never the secret).
 */
export type Hook = {
  id: number;
  url: string;
  secret: string;
  events: string[];
  active: boolean;
  config: Record<string, unknown>;
};

/** A pull request as the fake stores it (what `pulls()` returns): `user` its author, `base` the base branch. */
export interface Pull {
  number: number;
  id: number;
  title: string;
  body: string | null;
  user: string;
  head: { owner: string; repo: string; ref: string };
  base: string;
  draft: boolean;
  state: 'open' | 'closed';
  merged: boolean;
  merged_at: string | null;
  maintainer_can_modify: boolean;
  merge_commit_sha: string | null;
  /** Set when merged: the head commit that was merged and the base commit before the merge. */
  merged_head_sha?: string;
  merged_base_sha?: string;
}

/** What the one who opens a pull request says of it. */
export type PullFields = Pick<Pull, 'title' | 'body' | 'base' | 'draft' | 'maintainer_can_modify'>;

/** A new repository: a fork copies `fork`'s branches and settings. */
export type NewRepo = Partial<Pick<RepoState, 'visibility' | 'allowDrafts' | 'description'>> & {
  branch?: string;
  fork?: RepoState;
};

/** A commit by a person: `files` (null deletes) on `branch`; a new branch starts at `from` (default: the default branch). */
export type CommitOptions = CommitContent & { branch: string; from?: string };

export const sameThread = (a: Thread, b: Thread): boolean => a.kind === b.kind && a.number === b.number;
const sameTarget = (a: ReactionState['on'], b: ReactionState['on']): boolean =>
  'comment' in a || 'comment' in b ? 'comment' in a && 'comment' in b && a.comment === b.comment : sameThread(a, b);

export const key = (owner: string, name: string): string => `${owner}/${name}`.toLowerCase();
export const fullName = (r: RepoState): string => `${r.owner}/${r.name}`;
const TOKEN_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function newToken(prefix: string, length = 36): string {
  return prefix + [...randomBytes(length)].map((b) => TOKEN_CHARS[b % TOKEN_CHARS.length]).join('');
}

export class State {
  readonly users = new Map<string, UserState>();
  readonly tokens = new Map<string, TokenState>();
  readonly groups = new Map<string, GroupState>();
  readonly repos = new Map<string, RepoState>();
  readonly git: Bare;
  /** More access a host grants (GitHub: an App's bot on the repositories it is installed on); the highest level wins. */
  readonly grants: ((repo: RepoState, login: string) => number)[] = [];
  /** Moved on by a test (`advanceClock`): what `now()` adds to the real time. */
  clockOffset = 0;
  private readonly ids = { user: 1001, group: 501, repo: 200001, pull: 3000001, hook: 401, talk: 7001 };
  /**
   * `protectedRefusal`: the hook's words for a refused push to a protected branch (see Bare);
   * `sharedNumbers`: issues and pulls take their numbers from one sequence (GitHub, Gitea), not
   * one each (GitLab's issue and merge request iids).
   */
  constructor(
    readonly root: string,
    scratch: string,
    protectedRefusal: string,
    readonly sharedNumbers = true,
  ) {
    this.git = new Bare(scratch, protectedRefusal);
  }
  /** The host's time in ms: the real time, moved on by `clockOffset`. */
  now(): number {
    return Date.now() + this.clockOffset;
  }
  user(login: string): UserState | undefined {
    return this.users.get(login.toLowerCase());
  }
  ensureUser(login: string): UserState {
    const [email, createdAt] = [`${login.toLowerCase()}@users.example.com`, isoSeconds(new Date())];
    const user = this.user(login) ?? { login, id: this.ids.user++, name: login, email, createdAt };
    this.users.set(login.toLowerCase(), user);
    return user;
  }
  addToken(login: string, token: string, opts: Partial<Omit<TokenState, 'login'>> = {}): void {
    const scopes = opts.scopes ?? ['repo', 'workflow'];
    this.tokens.set(token, { ...opts, login: this.ensureUser(login).login, readOnly: opts.readOnly ?? false, scopes });
  }
  /** The user a live token belongs to (undefined: unknown or expired). */
  byToken(token: string): { user: UserState; token: TokenState } | undefined {
    const t = this.tokens.get(token);
    const dead = t?.expired || (t?.expiresAt !== undefined && t.expiresAt <= this.now());
    const user = t && !dead ? this.user(t.login) : undefined;
    return t && user ? { user, token: t } : undefined;
  }
  /** The user whose commit email this is, for commit author/committer logins. */
  userByEmail(email: string): UserState | undefined {
    return [...this.users.values()].find((u) => u.email.toLowerCase() === email.toLowerCase());
  }
  ensureGroup(path: string): GroupState {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) this.ensureGroup(parts.slice(0, i).join('/'));
    const group = this.groups.get(path.toLowerCase()) ?? {
      ...{ id: this.ids.group++, fullPath: path },
      ...{ members: new Map<string, number>(), hooks: [] as Hook[] },
    };
    this.groups.set(path.toLowerCase(), group);
    return group;
  }
  /** A namespace is a group when it was made as one or holds a slash; otherwise it is a user's. */
  isGroup(namespace: string): boolean {
    return namespace.includes('/') || this.groups.has(namespace.toLowerCase());
  }
  repo(owner: string, name: string): RepoState | undefined {
    return this.repos.get(key(owner, name));
  }
  /** By `owner/name`, split at the last slash: a GitLab namespace may itself hold slashes. */
  repoByFullName(full: string): RepoState | undefined {
    const slash = full.lastIndexOf('/');
    return slash > 0 ? this.repo(full.slice(0, slash), full.slice(slash + 1)) : undefined;
  }
  repoById(id: number): RepoState | undefined {
    return [...this.repos.values()].find((r) => r.id === id);
  }
  /** The owner of a user namespace is Owner (50); else the highest membership of the repository or a group above it. */
  accessLevel(repo: RepoState, login: string | undefined): number {
    const l = login?.toLowerCase();
    if (!l) return 0;
    if (!this.isGroup(repo.owner) && repo.owner.toLowerCase() === l) return ACCESS.owner;
    let [level, path] = [repo.members.get(l) ?? 0, ''];
    for (const part of repo.owner.split('/')) {
      path = path ? `${path}/${part}` : part;
      level = Math.max(level, this.groups.get(path.toLowerCase())?.members.get(l) ?? 0);
    }
    for (const grant of this.grants) level = Math.max(level, grant(repo, l));
    return level;
  }
  /** Public: anyone reads; internal: any signed-in user; private: Reporter and up. Developer pushes. */
  permissions(repo: RepoState, login: string | undefined) {
    const level = this.accessLevel(repo, login);
    const visible = repo.visibility === 'public' || (repo.visibility === 'internal' && login !== undefined);
    const [admin, push] = [level >= ACCESS.owner, level >= ACCESS.developer];
    return { admin, maintain: admin, push, triage: push, pull: visible || level >= ACCESS.reporter };
  }
  canSee(repo: RepoState, login: string | undefined): boolean {
    return this.permissions(repo, login).pull;
  }
  /** A new repository and its bare directory (empty: no commits). */
  addRepo(owner: string, name: string, opts: NewRepo): RepoState {
    if (this.repo(owner, name)) throw new Error(`repository ${owner}/${name} already exists`);
    const parent = opts.fork;
    const ns = this.isGroup(owner) ? this.ensureGroup(owner).fullPath : this.ensureUser(owner).login;
    const repo: RepoState = {
      id: this.ids.repo++,
      owner: ns,
      name,
      visibility: opts.visibility ?? parent?.visibility ?? 'public',
      defaultBranch: parent?.defaultBranch ?? opts.branch ?? 'main',
      fork: parent !== undefined,
      ...(parent ? { parent: fullName(parent) } : {}),
      allowDrafts: opts.allowDrafts ?? true,
      members: new Map(),
      protectedBranches: new Set(),
      description: opts.description ?? parent?.description ?? null,
      dir: join(this.root, ns, `${name}.git`),
      pulls: [],
      hooks: [],
      ...{ issues: [], comments: [], reviews: [], reactions: [], ci: [] },
    };
    this.git.init(repo.dir, repo.defaultBranch, parent?.dir);
    this.repos.set(key(owner, name), repo);
    return repo;
  }
  setProtected(repo: RepoState, branches: Iterable<string>): void {
    repo.protectedBranches = new Set(branches);
    this.git.setProtected(repo.dir, repo.protectedBranches);
  }
  networkRoot(repo: RepoState): RepoState {
    let r = repo;
    for (let i = 0; i < 100 && r.parent; i++) r = this.repoByFullName(r.parent) ?? r;
    return r;
  }
  forksOf(repo: RepoState): RepoState[] {
    return [...this.repos.values()].filter((r) => r.parent?.toLowerCase() === key(repo.owner, repo.name));
  }
  forkOf(repo: RepoState, login: string): RepoState | undefined {
    return this.forksOf(repo).find((r) => r.owner.toLowerCase() === login.toLowerCase());
  }
  /** A repository of `owner` in the same fork network as `repo` (the repo itself when owner owns it). */
  inNetwork(repo: RepoState, owner: string): RepoState | undefined {
    if (repo.owner.toLowerCase() === owner.toLowerCase()) return repo;
    const root = this.networkRoot(repo);
    return [...this.repos.values()].find(
      (r) => r.owner.toLowerCase() === owner.toLowerCase() && this.networkRoot(r) === root,
    );
  }
  /** A push by a person, written straight into the repository (hooks do not run). */
  commit(repo: RepoState, opts: CommitOptions): string {
    const parent =
      this.git.branchHead(repo.dir, opts.branch) ?? this.git.resolve(repo.dir, opts.from ?? repo.defaultBranch);
    if (!parent && opts.from !== undefined) throw new Error(`${fullName(repo)} has no ${opts.from}`);
    const sha = this.git.commitFiles(repo.dir, parent, { ...opts, author: opts.author ?? this.ensureUser(repo.owner) });
    this.git.setRef(repo.dir, opts.branch, sha);
    return sha;
  }
  /** A group by its full path (any case) or its id as text, or undefined. */
  groupOf(idOrPath: string): GroupState | undefined {
    return /^\d+$/.test(idOrPath)
      ? [...this.groups.values()].find((g) => g.id === Number(idOrPath))
      : this.groups.get(idOrPath.toLowerCase());
  }
  /** The highest membership of a group or of one above it. */
  groupLevel(group: GroupState, login: string | undefined): number {
    const l = login?.toLowerCase();
    if (!l) return 0;
    let [level, path] = [0, ''];
    for (const part of group.fullPath.split('/')) {
      path = path ? `${path}/${part}` : part;
      level = Math.max(level, this.groups.get(path.toLowerCase())?.members.get(l) ?? 0);
    }
    return level;
  }
  addGroupHook(group: GroupState, fields: Omit<Hook, 'id'>): Hook {
    const hook = { id: this.ids.hook++, ...fields };
    group.hooks.push(hook);
    return hook;
  }
  /** The hooks of the repository's group and of every group above it (a user's namespace has none). */
  groupHooks(repo: RepoState): Hook[] {
    const parts = repo.owner.split('/');
    return parts.flatMap(
      (_, i) =>
        this.groups.get(
          parts
            .slice(0, i + 1)
            .join('/')
            .toLowerCase(),
        )?.hooks ?? [],
    );
  }
  addHook(repo: RepoState, fields: Omit<Hook, 'id'>): Hook {
    const hook = { id: this.ids.hook++, ...fields };
    repo.hooks.push(hook);
    return hook;
  }
  pull(repo: RepoState, number: number): Pull | undefined {
    return repo.pulls.find((p) => p.number === number);
  }
  /** The pull request's commits: on its head and not on its base (as of the merge once merged), oldest first. */
  pullCommits(repo: RepoState, pull: Pull): CommitInfo[] {
    const head = this.syncHead(repo, pull);
    const base = pull.merged_base_sha ?? this.git.branchHead(repo.dir, pull.base);
    return head ? this.git.log(repo.dir, base, head) : [];
  }
  headRepo(pull: Pull): RepoState | undefined {
    return this.repo(pull.head.owner, pull.head.repo);
  }
  /** The pull's head commit, kept in the base repository as refs/pull/N/head (as GitHub does); merged: the head merged. */
  syncHead(repo: RepoState, pull: Pull): string | undefined {
    if (pull.merged_head_sha) return pull.merged_head_sha;
    const ref = `refs/pull/${pull.number}/head`;
    const head = this.headRepo(pull);
    const sha = head ? this.git.fetchRef(repo.dir, head.dir, `refs/heads/${pull.head.ref}`, ref) : undefined;
    return sha ?? this.git.resolve(repo.dir, ref);
  }
  addPull(repo: RepoState, fields: PullFields & Pick<Pull, 'user' | 'head'>): Pull {
    const none = { state: 'open', merged: false, merged_at: null, merge_commit_sha: null } as const;
    const pull: Pull = { ...fields, number: this.nextNumber(repo, repo.pulls), id: this.ids.pull++, ...none };
    repo.pulls.push(pull);
    this.syncHead(repo, pull);
    return pull;
  }
  private nextNumber(repo: RepoState, own: unknown[]): number {
    return (this.sharedNumbers ? repo.pulls.length + repo.issues.length : own.length) + 1;
  }
  addIssue(repo: RepoState, fields: Pick<Issue, 'title' | 'body' | 'user'>): Issue {
    const [number, createdAt] = [this.nextNumber(repo, repo.issues), isoSeconds(new Date())];
    const issue: Issue = { ...fields, number, id: this.ids.talk++, labels: [], state: 'open', createdAt };
    repo.issues.push(issue);
    return issue;
  }
  issue(repo: RepoState, number: number): Issue | undefined {
    return repo.issues.find((i) => i.number === number);
  }
  /** Where number `n` is on a host that numbers issues and pulls as one (GitHub's and Gitea's /issues/N). */
  threadOf(repo: RepoState, n: number): Thread | undefined {
    if (this.issue(repo, n)) return { kind: 'issue', number: n };
    return this.pull(repo, n) ? { kind: 'pull', number: n } : undefined;
  }
  hasThread(repo: RepoState, t: Thread): boolean {
    return t.kind === 'issue' ? !!this.issue(repo, t.number) : !!this.pull(repo, t.number);
  }
  addComment(repo: RepoState, fields: Pick<Comment, 'thread' | 'user' | 'body' | 'line'>): Comment {
    const at = isoSeconds(new Date());
    const comment: Comment = { ...fields, id: this.ids.talk++, createdAt: at, updatedAt: at };
    repo.comments.push(comment);
    return comment;
  }
  comment(repo: RepoState, id: number): Comment | undefined {
    return repo.comments.find((c) => c.id === id);
  }
  /** The conversation's comments of a thread (not its line comments), oldest first. */
  threadComments(repo: RepoState, t: Thread): Comment[] {
    return repo.comments.filter((c) => !c.line && sameThread(c.thread, t));
  }
  addReview(repo: RepoState, fields: Omit<Review, 'id' | 'submittedAt'>): Review {
    const review: Review = { ...fields, id: this.ids.talk++, submittedAt: isoSeconds(new Date()) };
    repo.reviews.push(review);
    return review;
  }
  /** The caller's reaction `content` on `on`: the one it had, or a new one (`created`). */
  react(repo: RepoState, on: ReactionState['on'], user: string, content: string) {
    const same = (r: ReactionState) =>
      r.user.toLowerCase() === user.toLowerCase() && r.content === content && sameTarget(r.on, on);
    const had = repo.reactions.find(same);
    if (had) return { reaction: had, created: false };
    const reaction = { id: this.ids.talk++, on, user, content, createdAt: isoSeconds(new Date()) };
    repo.reactions.push(reaction);
    return { reaction, created: true };
  }
  mergePull(repo: RepoState, number: number): string {
    const pull = this.pull(repo, number);
    if (pull?.state !== 'open') throw new Error(`${fullName(repo)} has no open pull #${number}`);
    const headSha = this.syncHead(repo, pull);
    const baseSha = this.git.branchHead(repo.dir, pull.base);
    const tree = headSha && baseSha ? this.git.mergeTree(repo.dir, baseSha, headSha) : undefined;
    if (!tree) throw new Error(`pull #${number} has no head, no base or merge conflicts`);
    const message = `Merge pull request #${number} from ${pull.head.owner}/${pull.head.ref}\n\n${pull.title}\n`;
    const sha = this.git.commitTree(repo.dir, tree, [baseSha!, headSha!], message, this.ensureUser(repo.owner));
    this.git.setRef(repo.dir, pull.base, sha);
    const merged = { state: 'closed', merged: true, merged_at: isoSeconds(new Date()), merge_commit_sha: sha } as const;
    Object.assign(pull, { ...merged, merged_head_sha: headSha, merged_base_sha: baseSha });
    return sha;
  }
}
