import type { IncomingMessage, ServerResponse } from 'node:http';
import { now } from '../fake-github/state.js';
import { gitHttpBackend } from '../git-cgi.js';
import { giteaCredentials } from './rest.js';
import type { GiteaState } from './state.js';

/**
 * git smart HTTP at /OWNER/NAME.git/... and /OWNER/NAME/...: `git http-backend` as CGI over the
 * fake's bare repositories, behind Gitea's access rules and words (routers/web/repo/githttp.go).
 * Credentials are HTTP Basic with the token as password, whatever the user name.
 */

const GIT_PATH = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;

export function isGitPath(pathname: string): boolean {
  return GIT_PATH.test(pathname);
}

export function handleGit(state: GiteaState, req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
  const [, owner, name, endpoint] = GIT_PATH.exec(url.pathname) as unknown as [string, string, string, string];
  const writing =
    endpoint === 'git-receive-pack' ||
    (endpoint === 'info/refs' && url.searchParams.get('service') === 'git-receive-pack');
  const plain = (status: number, text: string, headers: Record<string, string> = {}): Promise<number> => {
    req.resume();
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
    res.end(text);
    return Promise.resolve(status);
  };
  const challenge = () => plain(401, 'Unauthorized\n', { 'www-authenticate': 'Basic realm="Gitea"' });

  const { present, token } = giteaCredentials(req.headers.authorization);
  const found = token !== undefined ? state.byToken(token) : undefined;
  if (present && !found) return challenge();
  const login = found?.user.login;
  const repo = state.repo(decodeURIComponent(owner), decodeURIComponent(name));
  if (!repo) return plain(404, 'Repository not found\n');
  // Anonymous: a challenge for anything not public and for every push, as Gitea asks for credentials.
  if (!login && (writing || !state.canSee(repo, undefined))) return challenge();
  if (!state.canSee(repo, login)) return plain(404, 'Repository not found\n');
  if (writing && (found?.token.readOnly || !state.permissions(repo, login).push))
    return plain(403, 'User permission denied\n');

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
}
