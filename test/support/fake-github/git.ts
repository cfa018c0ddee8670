import type { IncomingMessage, ServerResponse } from 'node:http';
import { gitHttpBackend } from '../git-cgi.js';
import { credentials } from './rest.js';
import { type State, now } from './state.js';

/**
 * git smart HTTP at /OWNER/NAME.git/... and /OWNER/NAME/...: `git http-backend` as CGI over the
 * fake's bare repositories, behind GitHub's access rules. Credentials are HTTP Basic with the
 * token as password (any username); `token T`/`Bearer T` headers are accepted too.
 */

const GIT_PATH = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;

export function isGitPath(pathname: string): boolean {
  return GIT_PATH.test(pathname);
}

export function handleGit(state: State, req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
  const m = GIT_PATH.exec(url.pathname)!;
  const [, owner, name, endpoint] = m as unknown as [string, string, string, string];
  const writing =
    endpoint === 'git-receive-pack' ||
    (endpoint === 'info/refs' && url.searchParams.get('service') === 'git-receive-pack');
  const plain = (status: number, text: string, headers: Record<string, string> = {}): Promise<number> => {
    req.resume();
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
    res.end(text);
    return Promise.resolve(status);
  };
  const challenge = { 'www-authenticate': 'Basic realm="GitHub"' };

  const { present, token } = credentials(req.headers.authorization);
  const found = token !== undefined ? state.byToken(token) : undefined;
  if (present && !found)
    return plain(
      401,
      'Invalid username or token. Password authentication is not supported for Git operations.\n',
      challenge,
    );
  const login = found?.user.login;
  const repo = state.repo(decodeURIComponent(owner), decodeURIComponent(name));
  if (!repo || !state.canSee(repo, login)) {
    return login ? plain(404, 'Repository not found.\n') : plain(401, '', challenge);
  }
  if (writing) {
    if (!found) return plain(401, '', challenge);
    if (found.token.readOnly || !state.permissions(repo, login).push) {
      return plain(403, `Permission to ${repo.owner}/${repo.name}.git denied to ${found.user.login}.\n`);
    }
  }

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
