import { gitRoute } from '../fake-host/git.js';
import { credentials } from '../fake-host/rest.js';
import type { HostRoutes } from '../fake-host/server.js';
import type { State } from '../fake-host/state.js';

/**
 * git smart HTTP at /OWNER/NAME.git/... and /OWNER/NAME/... behind GitHub's access rules and words.
 * Credentials are HTTP Basic with the token as password (any username); `token T`/`Bearer T` too.
 */
export function githubGit(state: State): HostRoutes['git'] {
  const challenge = { 'www-authenticate': 'Basic realm="GitHub"' };
  return gitRoute(state, ({ repo, writing, authorization, refuse }) => {
    const { present, token } = credentials(authorization);
    const found = token !== undefined ? state.byToken(token) : undefined;
    if (present && !found)
      return refuse(
        401,
        'Invalid username or token. Password authentication is not supported for Git operations.\n',
        challenge,
      );
    const login = found?.user.login;
    if (!repo || !state.canSee(repo, login))
      return login ? refuse(404, 'Repository not found.\n') : refuse(401, '', challenge);
    if (writing && !found) return refuse(401, '', challenge);
    if (writing && (found?.token.readOnly || !state.permissions(repo, login).push))
      return refuse(403, `Permission to ${repo.owner}/${repo.name}.git denied to ${login}.\n`);
    return { repo, login };
  });
}
