import { newToken } from '../fake-host/state.js';
import {
  type FakeHost,
  type FakeRepoInfo,
  type RepoOptions,
  hostSide,
  initialCommit,
  repoInfo,
} from '../fake-host/side.js';
import { startHost } from '../fake-host/server.js';
import { gitlabGit } from './git.js';
import { ACCESS, GitLabModel, type Visibility } from './model.js';
import { OAuth } from './oauth.js';
import { Rest } from './rest.js';

export type { Pull } from '../fake-host/state.js';
export { ACCESS } from './model.js';

export interface FakeGitLabRepoInfo extends FakeRepoInfo {
  visibility: Visibility;
  allowDrafts: boolean;
}

/** The shared test-side API (../fake-host/side.ts), plus GitLab's visibility and groups; tokens 'glpat-' + 20 characters. */
export interface FakeGitLab extends FakeHost<FakeGitLabRepoInfo> {
  /**
   * A project. `owner` is a user (one added with addUser) or a group path (`acme/tools`, made with
   * its parents). `collaborators` get Developer (30), `reporters` Reporter (20); the namespace's
   * user is Owner (50). `visibility` wins over `private`.
   */
  createRepo(
    owner: string,
    name: string,
    opts?: RepoOptions & { visibility?: Visibility; allowDrafts?: boolean; reporters?: string[] },
  ): { commit: string };
  /** A member of a group (and so of its subgroups and projects) at an access level (ACCESS). */
  addGroupMember(group: string, login: string, level: number): void;
  /** Every OAuth access token of the user expires (REST 401 invalid_token); refresh tokens keep working. */
  expireOAuth(login: string): void;
}

/**
 * A GitLab double on 127.0.0.1: REST under /api/v4, git smart HTTP and OAuth at the web root.
 * `relativeUrlRoot` (e.g. '/gitlab'): a self-managed GitLab installed under a relative URL root;
 * everything is served under it and webUrl/apiUrl include it (request paths are recorded without it).
 */
export async function startFakeGitLab(opts: { relativeUrlRoot?: string } = {}): Promise<FakeGitLab> {
  let parts!: { model: GitLabModel; oauth: OAuth; rest: Rest };
  const layout = {
    name: 'fake-gitlab',
    apiPath: '/api/v4',
    oauthPath: '/oauth/',
    prefix: opts.relativeUrlRoot,
    notFound: 'Not Found\n',
    credentialHeaders: ['authorization', 'private-token'],
  };
  const server = await startHost(layout, ({ root, scratch, urls }) => {
    const model = new GitLabModel(root, scratch);
    parts = { model, oauth: new OAuth(model), rest: new Rest(model, urls) };
    return {
      rest: (req, res, url) => parts.rest.handle(req, res, url),
      oauth: (req, res, url) => parts.oauth.handle(req, res, url),
      git: gitlabGit(model.state, model),
    };
  });
  const { model, oauth } = parts;
  const state = model.state;
  const { need, ...side } = hostSide('fake-gitlab', {
    ...parts,
    state,
    server,
    newToken: () => newToken('glpat-').slice(0, 26),
    scopes: (readOnly) => (readOnly ? ['read_api'] : ['api']),
  });
  return {
    ...side,
    createRepo(owner, name, opts = {}) {
      // A namespace no user was added for is a group (nested ones made with their parents).
      if (model.groups.has(owner.toLowerCase()) || owner.includes('/') || !state.user(owner)) model.ensureGroup(owner);
      const visibility = opts.visibility ?? (opts.private ? 'private' : 'public');
      const repo = state.addRepo(owner, name, {
        branch: opts.branch ?? 'main',
        private: visibility !== 'public',
        allowDrafts: opts.allowDrafts ?? true,
        description: opts.description ?? null,
      });
      model.setVisibility(repo, visibility);
      const members = model.extra(repo).members;
      for (const c of opts.collaborators ?? []) members.set(c.toLowerCase(), ACCESS.developer);
      for (const r of opts.reporters ?? []) members.set(r.toLowerCase(), ACCESS.reporter);
      return { commit: initialCommit(state, repo, opts) };
    },
    addGroupMember(group, login, level) {
      model.ensureGroup(group).members.set(login.toLowerCase(), level);
    },
    repo(owner, name) {
      const r = state.repo(owner, name);
      return r && { ...repoInfo(r), visibility: model.extra(r).visibility, allowDrafts: r.allowDrafts };
    },
    expireOAuth: (login) => oauth.expire(login),
  };
}
