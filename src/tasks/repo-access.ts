import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { chosenHost, hostFor, scmUnavailable } from '../workspaces/scm-connection.js';
import { repoCredential } from '../workspaces/repo-credential.js';
import { ScmError, type ScmRepo } from '../scm/code-host.js';
import type { RepoRef } from '../scm/urls.js';

export interface AccessQuery {
  workspace: { id: string; plan: string };
  isDemo: boolean;
  /** The mode the task would run in: a pr run needs a connected account to push and open the PR. */
  mode: 'preview' | 'pr';
  repo: RepoRef;
}

/**
 * The code-host checks of task creation, in the spec's terms: a pr-mode fix needs a connected
 * account (412); the repository must exist and be readable by the caller (with their token
 * when connected, anonymously otherwise); a private one is not for demo tokens or the free plan.
 * Returns whether the repository is private.
 */
export async function checkRepoAccess(
  deps: Pick<Deps, 'db' | 'config' | 'fetch' | 'secretKey' | 'clock' | 'appTokens'>,
  q: AccessQuery,
): Promise<{ private: boolean }> {
  const host = chosenHost(deps, q.repo.host);
  // A demo token reads anonymously; others act as the app where the workspace installed it, or as its connection.
  const token = q.isDemo ? undefined : (await repoCredential(deps, q.workspace.id, host, q.repo)).token;
  if (q.mode === 'pr' && !token) {
    const isDefault = host.id === deps.config.scmHosts[0]!.id;
    throw new AppError(
      'scm_not_connected',
      `pull-request runs push a branch and open a ${host.kind.pullNoun} as you: connect your account on ` +
        `${host.id} first (POST /v1/me/scm${isDefault ? '' : ` with "host": "${host.id}"`})`,
    );
  }
  let repo: ScmRepo | null;
  try {
    repo = await hostFor(deps, host, token).repo(q.repo.owner, q.repo.name);
  } catch (err) {
    // A stored token the host no longer accepts: the account is, in effect, not connected.
    if (token && err instanceof ScmError && err.status === 401) {
      throw new AppError(
        'scm_not_connected',
        'the code host no longer accepts the connected token; connect your account again (POST /v1/me/scm)',
      );
    }
    throw scmUnavailable(err);
  }
  if (!repo && q.isDemo) {
    // Read anonymously, a private repository and a missing one look alike: neither is public.
    throw new AppError(
      'DEMO_PUBLIC_REPOS_ONLY',
      `demo tokens work on public repositories only; ${q.repo.owner}/${q.repo.name} is not one (it is private ` +
        `or does not exist)`,
    );
  }
  if (!repo) {
    const hint = token
      ? 'or your code-host account cannot read it'
      : 'or it is private and no code-host account is connected (POST /v1/me/scm)';
    throw new AppError('bad_request', `repo_url: ${q.repo.owner}/${q.repo.name} does not exist ${hint}`);
  }
  // GitLab's internal projects (readable by every signed-in user of the host) count as private.
  const what = repo.visibility === 'internal' ? `${q.repo.owner}/${q.repo.name} is internal` : '';
  if (repo.private && q.isDemo)
    throw new AppError(
      'DEMO_PUBLIC_REPOS_ONLY',
      `demo tokens work on public repositories only${what ? `; ${what}, which counts as private` : ''}`,
    );
  if (repo.private && q.workspace.plan === 'free') {
    throw new AppError(
      'PRIVATE_REPO_REQUIRES_UPGRADE',
      `the free plan works on public repositories only${what ? ` (${what}, which counts as private)` : ''}; ` +
        'upgrade to use private ones',
    );
  }
  return { private: repo.private };
}
