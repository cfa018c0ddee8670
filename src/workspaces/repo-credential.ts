import { and, eq, isNull, sql } from 'drizzle-orm';
import { scmInstallations } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { ScmError } from '../scm/code-host.js';
import { gitHubApp } from '../scm/github/app.js';
import type { ScmHost } from '../scm/hosts.js';
import { groupBotFor, groupBotToken } from './group-bots.js';
import { scmTokenOn } from './scm-connection.js';

/**
 * The token emend acts with on one repository for a workspace (docs/code-host.md): where an
 * installation of the host's GitHub App that the workspace claimed covers the repository, the
 * installation's token narrowed to that repository, under the app's bot; nowhere else, and never
 * a person's token there. On a repository of a GitLab group or Gitea organisation whose bot the
 * workspace registered (group-bots.ts), the bot's token, under the bot's name, and no person's
 * either. Elsewhere the workspace's own connection, or none (anonymous).
 */
export type RepoCredential =
  | { via: 'app'; token: string; installationId: string; bot: { name: string; email: string } }
  | { via: 'group'; token: string; group: string; bot: { name: string; email: string } }
  | { via: 'connection'; token: string }
  | { via: 'none'; token?: undefined };

type CredentialDeps = Pick<Deps, 'db' | 'config' | 'fetch' | 'secretKey' | 'clock' | 'appTokens'>;

/** The workspace's installation on the repository's account, when it claimed one there. */
export async function claimedInstallation(deps: Pick<Deps, 'db'>, workspaceId: string, host: ScmHost, owner: string) {
  const [row] = await deps.db
    .select()
    .from(scmInstallations)
    .where(
      and(
        eq(scmInstallations.host, host.id),
        eq(scmInstallations.workspaceId, workspaceId),
        isNull(scmInstallations.removedAt),
        sql`lower(${scmInstallations.account}) = lower(${owner})`,
      ),
    );
  return row;
}

/** The message a task stops with when the installation it acts through cannot act. */
export const installationStopped = (host: ScmHost, account: string, why: 'suspended' | 'removed') =>
  new AppError(
    'scm_not_connected',
    why === 'suspended'
      ? `the ${host.id} app's installation on ${account} is suspended: an owner of ${account} must unsuspend it`
      : `the ${host.id} app was uninstalled from ${account}: install it again and claim it for this workspace`,
  );

export async function repoCredential(
  deps: CredentialDeps,
  workspaceId: string,
  host: ScmHost,
  repo: { owner: string; name: string },
): Promise<RepoCredential> {
  const app = host.app;
  const installation = app ? await claimedInstallation(deps, workspaceId, host, repo.owner) : undefined;
  if (app && installation) {
    if (installation.suspendedAt) throw installationStopped(host, installation.account, 'suspended');
    const client = gitHubApp({ apiUrl: host.apiUrl, webUrl: host.webUrl, fetch: deps.fetch, app });
    const key = `${host.id}/${installation.installationId}/`;
    let token: string | undefined;
    try {
      token = await deps.appTokens.token(`${key}${repo.name.toLowerCase()}`, () =>
        client.mintToken(installation.installationId, repo.name),
      );
    } catch (err) {
      // 422: the installation does not cover this repository (the account chose some): the
      // workspace's own connection serves it, as on any repository the app is not on.
      if (!(err instanceof ScmError && err.status === 422)) {
        if (err instanceof ScmError && err.status === 403 && /suspend/i.test(err.message))
          throw installationStopped(host, installation.account, 'suspended');
        if (err instanceof ScmError && err.status === 404)
          throw installationStopped(host, installation.account, 'removed');
        throw new AppError(
          'scm_unavailable',
          err instanceof ScmError ? err.message : 'the code host could not be reached',
        );
      }
    }
    if (token !== undefined) {
      const bot = await deps.appTokens
        .identity(host.id, () => client.botIdentity())
        .catch((err) => {
          throw new AppError(
            'scm_unavailable',
            err instanceof ScmError ? err.message : 'the code host could not be reached',
          );
        });
      return { via: 'app', token, installationId: installation.installationId, bot };
    }
  }
  const bot = host.kind.groups ? await groupBotFor(deps, workspaceId, host.id, repo.owner) : undefined;
  if (bot)
    return {
      via: 'group',
      token: groupBotToken(deps, bot),
      group: bot.groupPath,
      bot: { name: bot.botName, email: bot.botEmail },
    };
  const token = await scmTokenOn(deps, workspaceId, host);
  return token ? { via: 'connection', token } : { via: 'none' };
}
