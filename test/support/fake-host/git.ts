import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RepoState, State } from './state.js';
import { now } from './state.js';
import { gitHttpBackend } from '../git-cgi.js';
import { type HostRoutes, plain } from './server.js';

/** `/OWNER/NAME.git/…` (`.git` optional): owner, name and endpoint. */
export const GIT_PATH = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;

export type Refuse = (status: number, text: string, headers?: Record<string, string>) => Promise<number>;

/** What a host's access rules see of one git request. */
export interface GitAsk {
  /** The repository named, if it exists. */
  repo: RepoState | undefined;
  /** A push (receive-pack or its advertisement). */
  writing: boolean;
  authorization: string | undefined;
  /** Writes a text/plain refusal. */
  refuse: Refuse;
}

/**
 * git smart HTTP: `git http-backend` as CGI over the host's bare repositories, behind the host's
 * access rules (`admit`: the repository and the login it serves, or the refusal it wrote). A
 * successful push moves the repository's updatedAt. The pattern's groups are the owner (a
 * trailing slash dropped, for nested namespaces), the name and the endpoint.
 */
export function gitRoute(
  state: State,
  admit: (ask: GitAsk) => { repo: RepoState; login: string | undefined } | Promise<number>,
  pattern: RegExp = GIT_PATH,
): HostRoutes['git'] {
  return {
    matches: (pathname) => pattern.test(pathname),
    handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
      const [, owner, name, endpoint] = pattern.exec(url.pathname) as unknown as [string, string, string, string];
      const writing =
        endpoint === 'git-receive-pack' ||
        (endpoint === 'info/refs' && url.searchParams.get('service') === 'git-receive-pack');
      const admitted = admit({
        repo: state.repo(decodeURIComponent(owner.replace(/\/$/, '')), decodeURIComponent(name)),
        writing,
        authorization: req.headers.authorization,
        refuse: (status, text, headers) => plain(req, res, status, text, headers),
      });
      if (admitted instanceof Promise) return admitted;
      const { repo, login } = admitted;
      return gitHttpBackend(req, res, {
        env: state.git.env,
        projectRoot: state.root,
        pathInfo: `/${repo.owner}/${repo.name}.git/${endpoint}`,
        query: url.search.slice(1),
        remoteUser: login,
      }).then((status) => {
        if (writing && endpoint === 'git-receive-pack' && status === 200) repo.updatedAt = now();
        return status;
      });
    },
  };
}
