import { createHmac, randomUUID } from 'node:crypto';
import type { HookEvent } from '../../../src/scm/code-host.js';
import { type GitHost, gitRoute } from './git.js';
import { type OAuthHost, oauthProvider } from './oauth.js';
import { type RestHost, pick, restApi } from './rest.js';
import { type HostLayout, type Urls, startHost } from './server.js';
import type { CommitContent } from './bare.js';
import { ACCESS, type CommitOptions, type NewRepo, type RepoState, State } from './state.js';

/**
 * A fake code host from its spec (where it serves what, its REST routes and words, its OAuth
 * settings, its git words), and the test-side API every host has, so tests share assertions.
 */

/**
 * `protectedRefusal`: the pre-receive hook's shell lines refusing a push to a protected branch
 * (see Bare). `newToken` makes a personal token, `scopes` says its scopes (undefined: the
 * State's default). `ownersAreGroups` (GitLab): an owner no user was added for is a group.
 */
export interface HostSpec {
  layout: HostLayout;
  protectedRefusal: string;
  rest(urls: Urls): RestHost;
  oauth: OAuthHost;
  git: GitHost;
  newToken(): string;
  scopes?(readOnly: boolean): string[];
  ownersAreGroups?: boolean;
  hooks: HookWords;
}

/**
 * A host's webhook words: for each of emend's events, the hook event (GitLab: the switch) it is
 * delivered under and the event header's value; and a delivery's headers from its event word,
 * its id, the hex HMAC-SHA256 of its body under the hook's secret and the secret itself.
 */
export interface HookWords {
  events: Record<HookEvent, [subscribed: string, event: string]>;
  headers(d: { event: string; id: string; hmac: string; secret: string }): Record<string, string>;
}

export type FakeRepoInfo = { private: boolean; defaultBranch: string; fork: boolean; parent?: string };

/**
 * createRepo's options: a new repository's (visibility, allowDrafts, description, branch) and its
 * first commit's `files` (default: a README) and `links`. `visibility` wins over `internal` and
 * `private`; `collaborators` may push (Developer on GitLab), `readers` (GitLab's `reporters`) may
 * only read.
 */
export interface RepoOptions extends Omit<NewRepo, 'fork'>, Pick<CommitContent, 'links'> {
  files?: Record<string, string>;
  private?: boolean;
  internal?: boolean;
  collaborators?: string[];
  readers?: string[];
  reporters?: string[];
  protectedBranches?: string[];
}

/**
 * The test-side API every fake code host (GitHub, GitLab, Gitea) has, as startFake makes it. `webUrl`
 * (http://127.0.0.1:PORT[/prefix]) serves git smart HTTP and OAuth, `apiUrl` the REST API.
 * `addUser` makes a user and a token for it (default: one shaped like the host's); again for a
 * known login it adds the given token (or returns the first one); `readOnly`: a token that can
 * read but not write. `commit` writes a commit on a branch (a new one starts at `from`) without
 * hooks; `pulls` lists the pull requests (merge requests: number = iid) targeting a repository;
 * `repo` tells FakeRepoInfo and the host's `Extra` fields; `protectBranches` adds protected
 * branches (pushes refused in the host's words); `failNext` answers the next matching REST
 * request with `reply` (default body: the host's error body).
 */
export type FakeHost<Extra extends keyof RepoState = never> = Awaited<ReturnType<typeof startFake<Extra>>>['fake'];

/** Starts the host of `spec`: its test-side API (repo() adds the `extra` fields) and its State and OAuth for the host's extras. */
export async function startFake<Extra extends keyof RepoState = never>(spec: HostSpec, extra: Extra[] = []) {
  let made!: { state: State; oauth: ReturnType<typeof oauthProvider>; rest: ReturnType<typeof restApi> };
  const server = await startHost(spec.layout, (root, scratch, urls) => {
    const state = new State(root, scratch, spec.protectedRefusal);
    const rest = restApi(spec.rest(urls), state, urls, spec.layout.apiPath);
    made = { state, oauth: oauthProvider(spec.oauth, state, spec.layout.oauthPath), rest };
    return { rest: rest.handle, oauth: made.oauth.handle, git: gitRoute(state, spec.git) };
  });
  const { state, oauth, rest } = made;
  const fail = (why: string): never => {
    throw new Error(`${spec.layout.name}: ${why}`);
  };
  const need = (owner: string, name: string) => state.repo(owner, name) ?? fail(`no repository ${owner}/${name}`);
  /** The repository's directory and the commit `ref` names. */
  const rev = (owner: string, name: string, ref: string): [string, string] => {
    const { dir } = need(owner, name);
    return [dir, state.git.resolve(dir, ref) ?? fail(`${owner}/${name} has no ${ref}`)];
  };
  const fake = {
    ...server.urls,
    requests: server.requests,
    addUser(login: string, opts: { token?: string; name?: string; email?: string; readOnly?: boolean } = {}) {
      const user = state.ensureUser(login);
      user.name = opts.name ?? user.name;
      user.email = opts.email ?? user.email;
      const first = [...state.tokens.entries()].find(([, t]) => t.login === user.login);
      if (first && opts.token === undefined && opts.readOnly === undefined)
        return { login: user.login, token: first[0] };
      const token = opts.token ?? spec.newToken();
      const readOnly = opts.readOnly ?? false;
      state.addToken(user.login, token, { readOnly, scopes: spec.scopes?.(readOnly) });
      return { login: user.login, token };
    },
    createRepo(owner: string, name: string, opts: RepoOptions = {}) {
      if (spec.ownersAreGroups && (state.isGroup(owner) || !state.user(owner))) state.ensureGroup(owner);
      const visibility = opts.visibility ?? (opts.internal ? 'internal' : opts.private ? 'private' : 'public');
      const branch = opts.branch ?? 'main';
      const repo = state.addRepo(owner, name, { ...opts, visibility, branch });
      for (const c of opts.collaborators ?? []) repo.members.set(c.toLowerCase(), ACCESS.developer);
      for (const r of [...(opts.readers ?? []), ...(opts.reporters ?? [])])
        repo.members.set(r.toLowerCase(), ACCESS.reporter);
      const files = opts.files ?? { 'README.md': `# ${name}\n` };
      const commit = state.commit(repo, { branch, files, links: opts.links, message: 'Initial commit' });
      state.setProtected(repo, opts.protectedBranches ?? []);
      return { commit };
    },
    commit: (owner: string, name: string, opts: CommitOptions) => state.commit(need(owner, name), opts),
    protectBranches(owner: string, name: string, branches: string[]) {
      const repo = need(owner, name);
      state.setProtected(repo, [...repo.protectedBranches, ...branches]);
    },
    branchHead(owner: string, name: string, branch: string) {
      const repo = state.repo(owner, name);
      return repo && state.git.branchHead(repo.dir, branch);
    },
    files: (owner: string, name: string, ref: string) => state.git.files(...rev(owner, name, ref)),
    diff: (owner: string, name: string, base: string, head: string) =>
      state.git.diff(...rev(owner, name, base), rev(owner, name, head)[1]),
    pulls: (owner: string, name: string) => need(owner, name).pulls.map((p) => ({ ...p, head: { ...p.head } })),
    mergePull: (owner: string, name: string, number: number) => state.mergePull(need(owner, name), number),
    /** The repository's hooks as stored, secrets included (test side only). */
    hooks: (owner: string, name: string) => need(owner, name).hooks.map((h) => ({ ...h, events: [...h.events] })),
    /**
     * POSTs `payload` to every active hook of the repository registered for `event`, as the host
     * delivers (its event word, a fresh delivery id, signed or with the token from the hook's
     * secret); each hook's answer.
     */
    async deliver(owner: string, name: string, event: HookEvent, payload: object) {
      const [subscribed, word] = spec.hooks.events[event];
      const body = JSON.stringify(payload);
      const hooks = need(owner, name).hooks.filter((h) => h.active && h.events.includes(subscribed));
      return Promise.all(
        hooks.map(async ({ url, secret }) => {
          const hmac = createHmac('sha256', secret).update(body).digest('hex');
          const headers = {
            'content-type': 'application/json',
            ...spec.hooks.headers({ event: word, id: randomUUID(), hmac, secret }),
          };
          const res = await fetch(url, { method: 'POST', headers, body });
          return { status: res.status, body: await res.text() };
        }),
      );
    },
    repo(owner: string, name: string): (FakeRepoInfo & Pick<RepoState, Extra>) | undefined {
      const r = state.repo(owner, name);
      const shared = r && { private: r.visibility !== 'public', defaultBranch: r.defaultBranch, fork: r.fork };
      return r && { ...shared!, ...(r.parent ? { parent: r.parent } : {}), ...pick(r, ...extra) };
    },
    oauthAs: oauth.approveAs,
    addOAuthApp: oauth.addApp,
    failNext: rest.failNext,
    close: server.close,
  };
  return { fake, state, oauth };
}
