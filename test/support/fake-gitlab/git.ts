import type { IncomingMessage, ServerResponse } from 'node:http';
import { credentials } from '../fake-github/rest.js';
import { now } from '../fake-github/state.js';
import { gitHttpBackend } from '../git-cgi.js';
import type { GitLabModel } from './model.js';

/**
 * git smart HTTP at /NAMESPACE…/PROJECT.git/… (nested groups): `git http-backend` as CGI behind
 * GitLab's rules. Credentials are HTTP Basic with any user name and the token as password (GitLab
 * documents `oauth2` for OAuth tokens); Developer (30) and up may push, Reporter (20) reads.
 */

const GIT_PATH = /^\/((?:[^/]+\/)+?)([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;

const ACCESS_DENIED =
  "HTTP Basic: Access denied. If a password was provided for Git authentication, the password was incorrect or you're " +
  'required to use a token instead of a password. If a token was provided, it was either incorrect, expired, or ' +
  'improperly scoped.\n';

export function isGitPath(pathname: string): boolean {
  return GIT_PATH.test(pathname);
}

export function handleGit(model: GitLabModel, req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
  const [, ns, name, endpoint] = GIT_PATH.exec(url.pathname) as unknown as [string, string, string, string];
  const writing =
    endpoint === 'git-receive-pack' ||
    (endpoint === 'info/refs' && url.searchParams.get('service') === 'git-receive-pack');
  const plain = (status: number, text: string, headers: Record<string, string> = {}): Promise<number> => {
    req.resume();
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
    res.end(text);
    return Promise.resolve(status);
  };
  const challenge = { 'www-authenticate': 'Basic realm="GitLab"' };

  const { present, token } = credentials(req.headers.authorization);
  const found = token !== undefined && !model.expired.has(token) ? model.state.byToken(token) : undefined;
  if (present && !found) return plain(401, ACCESS_DENIED, challenge);
  const login = found?.user.login;
  const owner = decodeURIComponent(ns.slice(0, -1));
  const repo = model.state.repo(owner, decodeURIComponent(name));
  if (!repo || !model.canRead(repo, login)) {
    return login
      ? plain(404, "The project you were looking for could not be found or you don't have permission to view it.\n")
      : plain(401, ACCESS_DENIED, challenge);
  }
  if (writing) {
    if (!found) return plain(401, ACCESS_DENIED, challenge);
    if (found.token.readOnly || !model.canPush(repo, login))
      return plain(403, 'You are not allowed to push code to this project.\n');
  }
  return gitHttpBackend(req, res, {
    env: model.state.git.env,
    projectRoot: model.state.root,
    pathInfo: `/${repo.owner}/${repo.name}.git/${endpoint}`,
    query: url.search.slice(1),
    remoteUser: login,
  }).then((status) => {
    if (writing && endpoint === 'git-receive-pack' && status === 200) repo.updatedAt = now();
    return status;
  });
}
