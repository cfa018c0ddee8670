import type { Identity } from './bare.js';
import type { Pull, RepoState, State } from './state.js';
import type { HostRequest, HostServer } from './server.js';

/** What a test reads of a repository on any fake host. */
export interface FakeRepoInfo {
  private: boolean;
  defaultBranch: string;
  fork: boolean;
  parent?: string;
}

/** createRepo's options every host takes; a host adds its own (visibility, readers, …). */
export interface RepoOptions {
  files?: Record<string, string>;
  /** symlinks, path → target */
  links?: Record<string, string>;
  branch?: string;
  private?: boolean;
  /** Logins with write access. */
  collaborators?: string[];
  protectedBranches?: string[];
  description?: string;
}

/** A test's failure injection: the next matching REST request gets this reply (default body: the host's). */
export interface InjectedReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The test-side API every fake code host (GitHub, GitLab, Gitea) has, so tests share assertions. */
export interface FakeHost<Info extends FakeRepoInfo = FakeRepoInfo> {
  /** http://127.0.0.1:PORT[/prefix]: git smart HTTP and OAuth (EMEND_SCM_WEB_URL). */
  webUrl: string;
  /** webUrl + the REST path (EMEND_SCM_API_URL). */
  apiUrl: string;
  requests: HostRequest[];
  /**
   * A user and a token for it (default: one shaped like the host's). Calling it again for a known
   * login adds the given token (or returns the first one). `readOnly`: a token that can read but
   * not write (REST writes 403 in the host's words, pushes 403).
   */
  addUser(
    login: string,
    opts?: { token?: string; name?: string; email?: string; readOnly?: boolean },
  ): { login: string; token: string };
  commit(
    owner: string,
    name: string,
    opts: { branch: string; files: Record<string, string | null>; message?: string; author?: Identity; from?: string },
  ): string;
  branchHead(owner: string, name: string, branch: string): string | undefined;
  files(owner: string, name: string, ref: string): Record<string, string>;
  diff(owner: string, name: string, base: string, head: string): string;
  /** Pull requests (merge requests: number = iid) targeting the repository. */
  pulls(owner: string, name: string): Pull[];
  mergePull(owner: string, name: string, number: number): string;
  repo(owner: string, name: string): Info | undefined;
  /** Adds branches to the repository's protected ones (pushes to them are refused in the host's words). */
  protectBranches(owner: string, name: string, branches: string[]): void;
  oauthAs(login: string): void;
  addOAuthApp(clientId: string, clientSecret: string): void;
  failNext(method: string, pathPattern: RegExp, reply: InjectedReply): void;
  close(): Promise<void>;
}

/** What a host gives the shared side: its state, server, OAuth and REST, and how it mints tokens. */
export interface HostParts {
  state: State;
  server: HostServer;
  oauth: { approveAs(login: string): void; addApp(clientId: string, clientSecret: string): void };
  rest: { failNext(method: string, pathPattern: RegExp, reply: InjectedReply): void };
  /** A new personal token. */
  newToken(): string;
  /** The scopes of a personal token (undefined: the state's default). */
  scopes?(readOnly: boolean): string[];
}

/**
 * The shared part of FakeHost over the host's State. `need` (the repository, or an error naming
 * the fake: a test that names a missing repository fails at once) is for the host's own calls.
 */
export function hostSide(
  name: string,
  parts: HostParts,
): Omit<FakeHost, 'repo'> & { need(owner: string, name: string): RepoState } {
  const { state, server, oauth, rest } = parts;
  const need = (owner: string, repoName: string): RepoState => {
    const repo = state.repo(owner, repoName);
    if (!repo) throw new Error(`${name}: no repository ${owner}/${repoName}`);
    return repo;
  };
  const rev = (repo: RepoState, ref: string): string => {
    const sha = state.git.resolve(repo.dir, ref);
    if (!sha) throw new Error(`${name}: ${repo.owner}/${repo.name} has no ${ref}`);
    return sha;
  };
  return {
    webUrl: server.urls.webUrl,
    apiUrl: server.urls.apiUrl,
    requests: server.requests,
    need,
    addUser(login, opts = {}) {
      const known = state.user(login);
      const user = state.ensureUser(login);
      if (opts.name !== undefined) user.name = opts.name;
      if (opts.email !== undefined) user.email = opts.email;
      if (known && opts.token === undefined && opts.readOnly === undefined) {
        const first = [...state.tokens.entries()].find(([, t]) => t.login === user.login);
        if (first) return { login: user.login, token: first[0] };
      }
      const token = opts.token ?? parts.newToken();
      const readOnly = opts.readOnly ?? false;
      state.addToken(user.login, token, { readOnly, scopes: parts.scopes?.(readOnly) });
      return { login: user.login, token };
    },
    commit: (owner, repoName, opts) => state.commit(need(owner, repoName), opts),
    protectBranches(owner, repoName, branches) {
      const repo = need(owner, repoName);
      state.setProtected(repo, [...repo.protectedBranches, ...branches]);
    },
    branchHead(owner, repoName, branch) {
      const repo = state.repo(owner, repoName);
      return repo ? state.git.branchHead(repo.dir, branch) : undefined;
    },
    files(owner, repoName, ref) {
      const repo = need(owner, repoName);
      return state.git.files(repo.dir, rev(repo, ref));
    },
    diff(owner, repoName, base, head) {
      const repo = need(owner, repoName);
      return state.git.diff(repo.dir, rev(repo, base), rev(repo, head));
    },
    pulls: (owner, repoName) => state.pulls(need(owner, repoName)).map((p) => ({ ...p, head: { ...p.head } })),
    mergePull: (owner, repoName, number) => state.mergePull(need(owner, repoName), number),
    oauthAs: (login) => oauth.approveAs(login),
    addOAuthApp: (clientId, clientSecret) => oauth.addApp(clientId, clientSecret),
    failNext: (method, pathPattern, reply) => rest.failNext(method, pathPattern, reply),
    close: () => server.close(),
  };
}

/** A new repository's first commit (the files, or a README) and its protected branches; returns the commit. */
export function initialCommit(state: State, repo: RepoState, opts: RepoOptions): string {
  const commit = state.commit(repo, {
    branch: opts.branch ?? 'main',
    files: opts.files ?? { 'README.md': `# ${repo.name}\n` },
    links: opts.links,
    message: 'Initial commit',
  });
  state.setProtected(repo, opts.protectedBranches ?? []);
  return commit;
}

/** What every host tells of a repository. */
export function repoInfo(r: RepoState): FakeRepoInfo {
  return {
    private: r.private,
    defaultBranch: r.defaultBranch,
    fork: r.fork,
    ...(r.parent ? { parent: r.parent } : {}),
  };
}
