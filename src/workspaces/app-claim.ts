import { createHash, randomBytes } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import type { Within } from '../db/client.js';
import { scmInstallations } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { ScmError } from '../scm/code-host.js';
import { type AppInstallation, gitHubAppUser } from '../scm/github/app.js';
import type { ScmHost } from '../scm/hosts.js';
import { chosenHost } from './scm-connection.js';
import { type OAuthDeps, exchangeCode, oauthAuthorizeUrl, signedState } from './scm-oauth.js';

/**
 * Installing the host's GitHub App and claiming the installation for a workspace
 * (docs/code-host.md, "As a GitHub App"). The person starts in emend (GET /v1/apps/{host}/install),
 * installs on GitHub, comes back through the app's setup URL, signs in with the app (its
 * user-to-server OAuth) to prove who they are on the host, and must administer the account the
 * app is installed on (its owner, or an admin of the organisation); the installation is then the
 * workspace's. Every step is bound to the browser that started it.
 */

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

/** The host with its app, or not_found naming what to configure. */
/** A host with its GitHub App (whose sign-in is the host's OAuth). */
export type AppHost = ScmHost & { app: NonNullable<ScmHost['app']>; oauth: NonNullable<ScmHost['oauth']> };

export function appHost(deps: Pick<Deps, 'config'>, id: string): AppHost {
  const host = chosenHost(deps, id);
  if (!host.app || !host.oauth)
    throw new AppError(
      'not_found',
      `no GitHub App is configured for ${host.id} (set \`app\` in its entry of EMEND_SCM_HOSTS; docs/code-host.md)`,
    );
  return { ...host, app: host.app, oauth: host.oauth };
}

/** What the start of an installation hands the route: where to send the browser, and the nonce it is to hold. */
export function startInstall(
  deps: Pick<Deps, 'config' | 'secretKey' | 'clock'>,
  hostId: string,
  who: { workspaceId: string; accountId: string },
): { url: string; browserNonce: string } {
  const host = appHost(deps, hostId);
  const browserNonce = randomBytes(18).toString('base64url');
  // The same signed state as the OAuth flows; GitHub hands it back to the setup URL unchanged.
  const signed = signedState(deps, host, {
    a: who.workspaceId,
    u: who.accountId,
    b: sha256(browserNonce),
    k: 'install',
  });
  const url = new URL(`${host.webUrl}/apps/${encodeURIComponent(host.app.slug)}/installations/new`);
  url.searchParams.set('state', signed);
  return { url: url.href, browserNonce };
}

/**
 * The setup URL's step: the installation is made; the person now signs in with the app so emend
 * learns who they are on the host. The sign-in's state carries the installation.
 */
export function claimSignInUrl(
  deps: Pick<Deps, 'config' | 'secretKey' | 'clock'>,
  host: AppHost,
  claim: { workspaceId: string; accountId: string; browserHash: string; installationId: string },
): string {
  return oauthAuthorizeUrl(
    deps,
    host,
    { a: claim.workspaceId, u: claim.accountId, b: claim.browserHash, i: claim.installationId },
    // A GitHub App's sign-in has no scopes: the app's permissions decide.
    '',
  );
}

export interface ClaimedInstallation {
  host: string;
  installationId: string;
  account: string;
  accountType: 'User' | 'Organization';
  claimedAs: string;
}

/**
 * The callback of a claim: the code is traded for the person's token, which must reach the
 * installation and belong to an administrator of its account; the installation is then the
 * workspace's (moved from another workspace when an administrator claims it again).
 */
export async function finishClaim(
  deps: OAuthDeps & Pick<Deps, 'appTokens'>,
  host: ScmHost,
  claim: { workspaceId: string; accountId: string; installationId: string },
  code: string,
  /** Run in the transaction that stores the claim (its audit row), after the host has confirmed it. */
  within?: Within<ClaimedInstallation>,
): Promise<ClaimedInstallation> {
  const app = host.app;
  if (!app) throw new AppError('not_found', `no GitHub App is configured for ${host.id}`);
  const token = await exchangeCode(deps, host, code);
  let installation: AppInstallation | undefined;
  let login: string;
  try {
    const user = await gitHubAppUser({ apiUrl: host.apiUrl, fetch: deps.fetch, token: token.accessToken });
    login = user.login;
    installation = (await user.installations()).find((i) => i.id === claim.installationId);
    if (!installation)
      throw new AppError(
        'forbidden',
        `installation ${claim.installationId} of the ${app.slug} app is not one ${login} can reach on ${host.id}`,
      );
    const admin =
      installation.accountType === 'User'
        ? installation.account.toLowerCase() === login.toLowerCase()
        : await user.adminOf(installation.account);
    if (!admin)
      throw new AppError(
        'forbidden',
        `${login} is not an admin of ${installation.account} on ${host.id}: only an admin of the account the app is ` +
          'installed on may claim it for a workspace',
      );
  } catch (err) {
    if (err instanceof ScmError)
      throw new AppError('scm_unavailable', `${host.id} could not confirm the installation: ${err.message}`);
    throw err;
  }
  const now = deps.clock.now();
  const claimed = {
    account: installation.account,
    accountType: installation.accountType,
    workspaceId: claim.workspaceId,
    claimedBy: claim.accountId,
    claimedAs: login,
    claimedAt: now,
    removedAt: null,
    suspendedAt: installation.suspended ? now : null,
    updatedAt: now,
  };
  const made: ClaimedInstallation = {
    host: host.id,
    installationId: installation.id,
    account: installation.account,
    accountType: installation.accountType,
    claimedAs: login,
  };
  await deps.db.transaction(async (tx) => {
    await tx
      .insert(scmInstallations)
      .values({ host: host.id, installationId: installation.id, createdAt: now, ...claimed })
      .onConflictDoUpdate({ target: [scmInstallations.host, scmInstallations.installationId], set: claimed });
    await within?.(tx, made);
  });
  // Tokens minted for the workspace it belonged to before are not this workspace's to use.
  deps.appTokens.forget(`${host.id}/${installation.id}/`);
  return made;
}

/** The workspace's installations, on every host with an app. */
export async function installationsOf(deps: Pick<Deps, 'db'>, workspaceId: string) {
  return deps.db
    .select()
    .from(scmInstallations)
    .where(and(eq(scmInstallations.workspaceId, workspaceId), isNull(scmInstallations.removedAt)))
    .orderBy(scmInstallations.host, scmInstallations.account);
}

/**
 * Gives an installation up: the workspace's tasks there act as its members' connections again.
 * `within` (its audit row) runs in the same transaction; the app's tokens are forgotten after it.
 */
export async function releaseInstallation(
  deps: Pick<Deps, 'db' | 'clock' | 'appTokens'>,
  workspaceId: string,
  hostId: string,
  installationId: string,
  within?: Within,
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const gone = await tx
      .update(scmInstallations)
      .set({ workspaceId: null, claimedBy: null, claimedAs: null, claimedAt: null, updatedAt: deps.clock.now() })
      .where(
        and(
          eq(scmInstallations.host, hostId),
          eq(scmInstallations.installationId, installationId),
          eq(scmInstallations.workspaceId, workspaceId),
        ),
      )
      .returning({ id: scmInstallations.installationId });
    if (gone.length === 0)
      throw new AppError('not_found', `installation ${installationId} on ${hostId} is not this workspace's`);
    await within?.(tx);
  });
  deps.appTokens.forget(`${hostId}/${installationId}/`);
}
