import { gitRoute } from '../fake-host/git.js';
import { credentials } from '../fake-host/rest.js';
import type { HostRoutes } from '../fake-host/server.js';
import type { GiteaState } from './state.js';

/**
 * git smart HTTP at /OWNER/NAME.git/... and /OWNER/NAME/... behind Gitea's access rules and words
 * (routers/web/repo/githttp.go). Credentials are HTTP Basic with the token as password, whatever
 * the user name.
 */
export function giteaGit(state: GiteaState): HostRoutes['git'] {
  return gitRoute(state, ({ repo, writing, authorization, refuse }) => {
    const challenge = () => refuse(401, 'Unauthorized\n', { 'www-authenticate': 'Basic realm="Gitea"' });
    const { present, token } = credentials(authorization, true);
    const found = token !== undefined ? state.byToken(token) : undefined;
    if (present && !found) return challenge();
    const login = found?.user.login;
    if (!repo) return refuse(404, 'Repository not found\n');
    // Anonymous: a challenge for anything not public and for every push, as Gitea asks for credentials.
    if (!login && (writing || !state.canSee(repo, undefined))) return challenge();
    if (!state.canSee(repo, login)) return refuse(404, 'Repository not found\n');
    if (writing && (found?.token.readOnly || !state.permissions(repo, login).push))
      return refuse(403, 'User permission denied\n');
    return { repo, login };
  });
}
