import { githubGit } from './git.js';
import { OAuth } from './oauth.js';
import { Rest } from './rest.js';
import { State, newToken } from '../fake-host/state.js';
import {
  type FakeHost,
  type FakeRepoInfo,
  type RepoOptions,
  hostSide,
  initialCommit,
  repoInfo,
} from '../fake-host/side.js';
import { startHost } from '../fake-host/server.js';

export type { Pull } from '../fake-host/state.js';

export interface FakeGitHubRepoInfo extends FakeRepoInfo {
  allowDrafts: boolean;
}

/** The shared test-side API (../fake-host/side.ts); tokens are 'ghp_' + 36 characters, read-only ones fine-grained. */
export interface FakeGitHub extends FakeHost<FakeGitHubRepoInfo> {
  createRepo(owner: string, name: string, opts?: RepoOptions & { allowDrafts?: boolean }): { commit: string };
}

/** A GitHub double on 127.0.0.1: REST under /api/v3, git smart HTTP and OAuth at the web root. */
export async function startFakeGitHub(): Promise<FakeGitHub> {
  let parts!: { state: State; oauth: OAuth; rest: Rest };
  const layout = { name: 'fake-github', apiPath: '/api/v3', oauthPath: '/login/oauth/', notFound: 'Not Found\n' };
  const server = await startHost(layout, ({ root, scratch, urls }) => {
    const state = new State(root, scratch);
    parts = { state, oauth: new OAuth(state), rest: new Rest(state, urls) };
    return {
      rest: (req, res, url) => parts.rest.handle(req, res, url),
      oauth: (req, res, url) => parts.oauth.handle(req, res, url),
      git: githubGit(state),
    };
  });
  const { state } = parts;
  const { need, ...side } = hostSide('fake-github', { ...parts, server, newToken: () => newToken('ghp_') });
  return {
    ...side,
    createRepo(owner, name, opts = {}) {
      const repo = state.addRepo(owner, name, {
        branch: opts.branch ?? 'main',
        private: opts.private ?? false,
        allowDrafts: opts.allowDrafts ?? true,
        description: opts.description ?? null,
      });
      for (const c of opts.collaborators ?? []) repo.collaborators.add(c.toLowerCase());
      return { commit: initialCommit(state, repo, opts) };
    },
    repo(owner, name) {
      const r = state.repo(owner, name);
      return r && { ...repoInfo(r), allowDrafts: r.allowDrafts };
    },
  };
}
