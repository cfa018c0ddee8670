import type { State } from '../fake-host/state.js';
import { type GitAsk, gitRoute } from '../fake-host/git.js';
import { credentials } from '../fake-host/rest.js';
import type { HostRoutes } from '../fake-host/server.js';
import type { GitLabModel } from './model.js';

/**
 * git smart HTTP at /NAMESPACE…/PROJECT.git/… (nested groups) behind GitLab's rules and words.
 * Credentials are HTTP Basic with any user name and the token as password (GitLab documents
 * `oauth2` for OAuth tokens); Developer (30) and up may push, Reporter (20) reads.
 */

const GIT_PATH = /^\/((?:[^/]+\/)+?)([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;

const ACCESS_DENIED =
  "HTTP Basic: Access denied. If a password was provided for Git authentication, the password was incorrect or you're " +
  'required to use a token instead of a password. If a token was provided, it was either incorrect, expired, or ' +
  'improperly scoped.\n';

export function gitlabGit(state: State, model: GitLabModel): HostRoutes['git'] {
  const challenge = { 'www-authenticate': 'Basic realm="GitLab"' };
  const rules = ({ repo, writing, authorization, refuse }: GitAsk) => {
    const { present, token } = credentials(authorization);
    const found = token !== undefined && !model.expired.has(token) ? state.byToken(token) : undefined;
    if (present && !found) return refuse(401, ACCESS_DENIED, challenge);
    const login = found?.user.login;
    if (!repo || !model.canRead(repo, login))
      return login
        ? refuse(404, "The project you were looking for could not be found or you don't have permission to view it.\n")
        : refuse(401, ACCESS_DENIED, challenge);
    if (writing && !found) return refuse(401, ACCESS_DENIED, challenge);
    if (writing && (found?.token.readOnly || !model.canPush(repo, login)))
      return refuse(403, 'You are not allowed to push code to this project.\n');
    return { repo, login };
  };
  return gitRoute(state, rules, GIT_PATH);
}
