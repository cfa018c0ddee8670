import { randomBytes } from 'node:crypto';
import {
  type FakeHost,
  type FakeRepoInfo,
  type RepoOptions,
  hostSide,
  initialCommit,
  repoInfo,
} from '../fake-host/side.js';
import { startHost } from '../fake-host/server.js';
import { giteaGit } from './git.js';
import { OAuth } from './oauth.js';
import { type Flavour, Rest } from './rest.js';
import { GiteaState, type Visibility } from './state.js';

export type { Pull } from '../fake-host/state.js';
export type { Visibility } from './state.js';

export interface FakeGiteaRepoInfo extends FakeRepoInfo {
  visibility: Visibility;
}

/**
 * The shared test-side API (../fake-host/side.ts); tokens are 40 hex characters like a Gitea
 * access token, read-only ones scoped read:repository (REST writes 403 naming the scope it lacks).
 */
export interface FakeGitea extends FakeHost<FakeGiteaRepoInfo> {
  createRepo(
    owner: string,
    name: string,
    opts?: RepoOptions & {
      /** Overrides `private`: internal repositories are readable by every signed-in user. */
      visibility?: Visibility;
      internal?: boolean;
      /** Logins with read access only. */
      readers?: string[];
    },
  ): { commit: string };
  /** Every OAuth access token issued so far stops working (REST and git answer 401). */
  expireOAuthTokens(): void;
}

/**
 * A Gitea double on 127.0.0.1: REST under /api/v1, git smart HTTP and OAuth at the web root.
 * `subPath` (e.g. `/gitea`): the instance is served under it, as Gitea behind a reverse proxy
 * with ROOT_URL `https://host/gitea/`; webUrl and apiUrl include it, requests outside it get 404.
 * `flavour: 'forgejo'`: forks are synced at Forgejo's POST …/sync_fork[/{branch}] (204), and
 * Gitea's …/merge-upstream is an unknown route (404).
 */
export async function startFakeGitea(opts: { subPath?: string; flavour?: Flavour } = {}): Promise<FakeGitea> {
  let parts!: { state: GiteaState; oauth: OAuth; rest: Rest };
  const layout = {
    name: 'fake-gitea',
    apiPath: '/api/v1',
    oauthPath: '/login/oauth/',
    prefix: opts.subPath,
    recordPrefix: true,
    notFound: 'Not found.\n',
  };
  const server = await startHost(layout, ({ root, scratch, urls }) => {
    const state = new GiteaState(root, scratch);
    parts = { state, oauth: new OAuth(state), rest: new Rest(state, urls, opts.flavour) };
    return {
      rest: (req, res, url) => parts.rest.handle(req, res, url),
      oauth: (req, res, url) => parts.oauth.handle(req, res, url),
      git: giteaGit(state),
    };
  });
  const { state, oauth } = parts;
  const { need, ...side } = hostSide('fake-gitea', {
    ...parts,
    server,
    newToken: () => randomBytes(20).toString('hex'),
    scopes: (readOnly) => (readOnly ? ['read:repository', 'read:user'] : ['write:repository', 'read:user']),
  });
  return {
    ...side,
    createRepo(owner, name, opts = {}) {
      const repo = state.addRepo(owner, name, { branch: opts.branch ?? 'main', description: opts.description ?? null });
      state.setVisibility(repo, opts.visibility ?? (opts.internal ? 'internal' : opts.private ? 'private' : 'public'));
      for (const c of opts.collaborators ?? []) repo.collaborators.add(c.toLowerCase());
      for (const r of opts.readers ?? []) state.addReader(repo, r);
      return { commit: initialCommit(state, repo, opts) };
    },
    repo(owner, name) {
      const r = state.repo(owner, name);
      return r && { ...repoInfo(r), visibility: state.visibility(r) };
    },
    expireOAuthTokens: () => oauth.expireTokens(),
  };
}
