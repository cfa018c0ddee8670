import type { IncomingMessage, ServerResponse } from 'node:http';
import { gitHttpBackend } from '../git-cgi.js';
import { credentials } from './rest.js';
import { type HostRoutes, plain } from './server.js';
import type { RepoState, State, TokenState } from './state.js';

/** `/OWNER…/NAME.git/…` (`.git` optional; the owner may be a nested GitLab namespace): owner, name and endpoint. */
const GIT_PATH = /^\/((?:[^/]+\/)+?)([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;

/**
 * A host's words over git smart HTTP: its Basic realm, the 401 bodies for credentials it does
 * not know and (`signIn`, default the same) for a request that must sign in, the 404 body for a repository the caller may
 * not see, the 403 body for a push the caller may not make. `anonymousMissing`: a missing
 * repository asked anonymously gets a challenge (GitHub, GitLab: they do not tell) or 404 (Gitea).
 * `usernameAsToken` (Gitea): an empty password (or `x-oauth-basic`) makes the user name the token.
 */
export interface GitHost {
  realm: string;
  badCredentials: string;
  signIn?: string;
  notFound: string;
  anonymousMissing: 401 | 404;
  denied(repo: RepoState, login: string | undefined): string;
  usernameAsToken?: boolean;
  /** A host's own refusal for this token on this repository (GitHub: an App's token out of its scope), as [status, body]. */
  gate?(repo: RepoState, token: TokenState, writing: boolean): [number, string] | undefined;
}

/**
 * git smart HTTP: `git http-backend` as CGI over the host's bare repositories. Who may read and
 * push is the State's; the host only words the refusals.
 */
export function gitRoute(state: State, host: GitHost): HostRoutes['git'] {
  return {
    matches: (pathname) => GIT_PATH.test(pathname),
    handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
      const [, owner = '', name = '', endpoint] = GIT_PATH.exec(url.pathname) ?? [];
      const writing = endpoint === 'git-receive-pack' || url.searchParams.get('service') === 'git-receive-pack';
      const challenge = { 'www-authenticate': `Basic realm="${host.realm}"` };
      const signIn = host.signIn ?? host.badCredentials;
      const refuse = (status: number, text: string) => plain(req, res, status, text, status === 401 ? challenge : {});
      const { present, token } = credentials(req.headers.authorization, host.usernameAsToken);
      const found = token !== undefined ? state.byToken(token) : undefined;
      if (present && !found) return refuse(401, host.badCredentials);
      const login = found?.user.login;
      const repo = state.repo(decodeURIComponent(owner.replace(/\/$/, '')), decodeURIComponent(name));
      if (!repo && !login && host.anonymousMissing === 404) return refuse(404, host.notFound);
      const gated = repo && found ? host.gate?.(repo, found.token, writing) : undefined;
      if (gated) return refuse(...gated);
      if (!repo || !state.canSee(repo, login)) return login ? refuse(404, host.notFound) : refuse(401, signIn);
      if (writing && !login) return refuse(401, signIn);
      if (writing && (found?.token.readOnly || !state.permissions(repo, login).push))
        return refuse(403, host.denied(repo, login));
      const pathInfo = `/${repo.owner}/${repo.name}.git/${endpoint}`;
      const cgi = { env: state.git.env, projectRoot: state.root, pathInfo, query: url.search.slice(1) };
      return gitHttpBackend(req, res, { ...cgi, remoteUser: login });
    },
  };
}
