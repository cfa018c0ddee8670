import type { Identity } from './bare.js';
import { type GitHost, gitRoute } from './git.js';
import { type OAuthHost, oauthProvider } from './oauth.js';
import { type Reply, type RestHost, restApi } from './rest.js';
import { type HostLayout, type HostRequest, type Urls, startHost } from './server.js';
import { ACCESS, type Pull, type RepoState, State, type Visibility } from './state.js';

/**
 * A fake code host from its spec (where it serves what, its REST routes and words, its OAuth
 * settings, its git words), and the test-side API every host has, so tests share assertions.
 */

export interface HostSpec {
  layout: HostLayout;
  /** The pre-receive hook's shell lines refusing a push to a protected branch (see Bare). */
  protectedRefusal: string;
  rest(urls: Urls): RestHost;
  oauth: OAuthHost;
  git: GitHost;
  /** A new personal token, and the scopes of a personal token (undefined: the State's default). */
  newToken(): string;
  scopes?(readOnly: boolean): string[];
  /** GitLab: an owner no user was added for is a group. */
  ownersAreGroups?: boolean;
}

/** What a test reads of a repository on any fake host. */
export interface FakeRepoInfo {
  private: boolean;
  defaultBranch: string;
  fork: boolean;
  parent?: string;
}

/** createRepo's options: `visibility` wins over `internal` and `private`. */
export interface RepoOptions {
  files?: Record<string, string>;
  /** symlinks, path → target */
  links?: Record<string, string>;
  branch?: string;
  private?: boolean;
  visibility?: Visibility;
  internal?: boolean;
  /** Logins with write access (Developer on GitLab). */
  collaborators?: string[];
  /** Logins with read access only (GitLab calls them reporters). */
  readers?: string[];
  reporters?: string[];
  protectedBranches?: string[];
  description?: string;
  allowDrafts?: boolean;
}

/** The test-side API every fake code host (GitHub, GitLab, Gitea) has. */
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
  createRepo(owner: string, name: string, opts?: RepoOptions): { commit: string };
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
  /** The next matching REST request gets this reply (default body: the host's error body). */
  failNext(method: string, pathPattern: RegExp, reply: Reply): void;
  close(): Promise<void>;
}

/** Starts the host of `spec`: its test-side API (repo() as `info` tells) and its State and OAuth for the host's extras. */
export async function startFake<Info extends FakeRepoInfo>(
  spec: HostSpec,
  info: (r: RepoState, shared: FakeRepoInfo) => Info,
) {
  let made!: { state: State; oauth: ReturnType<typeof oauthProvider>; rest: ReturnType<typeof restApi> };
  const server = await startHost(spec.layout, ({ root, scratch, urls }) => {
    const state = new State(root, scratch, spec.protectedRefusal);
    made = {
      state,
      oauth: oauthProvider(spec.oauth, state),
      rest: restApi(spec.rest(urls), state, urls, spec.layout.apiPath),
    };
    return { rest: made.rest.handle, oauth: made.oauth.handle, git: gitRoute(state, spec.git) };
  });
  const { state, oauth, rest } = made;
  const name = spec.layout.name;
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
  const fake: FakeHost<Info> = {
    webUrl: server.urls.webUrl,
    apiUrl: server.urls.apiUrl,
    requests: server.requests,
    addUser(login, opts = {}) {
      const known = state.user(login);
      const user = state.ensureUser(login);
      if (opts.name !== undefined) user.name = opts.name;
      if (opts.email !== undefined) user.email = opts.email;
      if (known && opts.token === undefined && opts.readOnly === undefined) {
        const first = [...state.tokens.entries()].find(([, t]) => t.login === user.login);
        if (first) return { login: user.login, token: first[0] };
      }
      const token = opts.token ?? spec.newToken();
      const readOnly = opts.readOnly ?? false;
      state.addToken(user.login, token, { readOnly, scopes: spec.scopes?.(readOnly) });
      return { login: user.login, token };
    },
    createRepo(owner, repoName, opts = {}) {
      if (spec.ownersAreGroups && (state.isGroup(owner) || !state.user(owner))) state.ensureGroup(owner);
      const visibility = opts.visibility ?? (opts.internal ? 'internal' : opts.private ? 'private' : 'public');
      const branch = opts.branch ?? 'main';
      const repo = state.addRepo(owner, repoName, {
        ...opts,
        visibility,
        branch,
        description: opts.description ?? null,
      });
      for (const c of opts.collaborators ?? []) repo.members.set(c.toLowerCase(), ACCESS.developer);
      for (const r of [...(opts.readers ?? []), ...(opts.reporters ?? [])])
        repo.members.set(r.toLowerCase(), ACCESS.reporter);
      const files = opts.files ?? { 'README.md': `# ${repoName}\n` };
      const commit = state.commit(repo, { branch, files, links: opts.links, message: 'Initial commit' });
      state.setProtected(repo, opts.protectedBranches ?? []);
      return { commit };
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
    repo(owner, repoName) {
      const r = state.repo(owner, repoName);
      if (!r) return undefined;
      const shared = { private: r.visibility !== 'public', defaultBranch: r.defaultBranch, fork: r.fork };
      return info(r, { ...shared, ...(r.parent ? { parent: r.parent } : {}) });
    },
    oauthAs: (login) => oauth.approveAs(login),
    addOAuthApp: (clientId, clientSecret) => oauth.addApp(clientId, clientSecret),
    failNext: (method, pathPattern, reply) => rest.failNext(method, pathPattern, reply),
    close: () => server.close(),
  };
  return { fake, state, oauth };
}
