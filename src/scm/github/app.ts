import { createAppAuth } from '@octokit/auth-app';
import type { GitHubAppConfig } from '../../config/scm-hosts.js';
import { ScmError } from '../code-host.js';
import { octokitOn, scmCall } from './github.js';

/**
 * emend as a GitHub App (docs/code-host.md, "As a GitHub App"): the app's JWT (RS256, signed with
 * its private key by @octokit/auth-app) finds the installation that covers a repository and
 * mints installation tokens narrowed to it. Every failure is an ScmError.
 */

/** Where the host delivers the app's events: one address per host, set in the app (its manifest says it). */
export const appHookUrl = (config: { baseUrl: string }, host: string) =>
  `${config.baseUrl.replace(/\/+$/, '')}/v1/apps/${encodeURIComponent(host)}/webhook`;

/** An installation of the app, as the host describes it. */
export interface AppInstallation {
  id: string;
  /** The user or organisation it is installed on. */
  account: string;
  accountType: 'User' | 'Organization';
  suspended: boolean;
}

/** A token for one installation's repositories; GitHub's live an hour. */
export interface InstallationToken {
  token: string;
  expiresAt: Date;
}

export interface GitHubAppClient {
  /** A new token of the installation for `repository` only (its name: installations are per account). */
  mintToken(installationId: string, repository: string): Promise<InstallationToken>;
  /** The bot's commit identity: `<slug>[bot]` and the noreply address GitHub maps to it. */
  botIdentity(): Promise<{ name: string; email: string }>;
}

type InstallationView = {
  id: number;
  // An enterprise installation's account has a slug, not a login.
  account?: ({ login: string; type?: string } | { slug: string }) | null;
  suspended_at?: string | null;
};

const installationOf = (i: InstallationView): AppInstallation => ({
  id: String(i.id),
  account: !i.account ? '' : 'login' in i.account ? i.account.login : i.account.slug,
  accountType: i.account && 'type' in i.account && i.account.type === 'Organization' ? 'Organization' : 'User',
  suspended: !!i.suspended_at,
});

/** auth-app keeps minted tokens for 59 minutes by its own clock; emend keeps them itself (src/scm/github/installation-tokens.ts). */
const NO_CACHE = { get: async () => undefined, set: async () => {} };

export function gitHubApp(options: {
  apiUrl: string;
  webUrl: string;
  fetch: typeof fetch;
  app: GitHubAppConfig;
}): GitHubAppClient {
  // The auth strategy signs app routes (/app/…, /repos/…/installation) with a fresh JWT.
  const octokit = octokitOn(options, {
    authStrategy: createAppAuth,
    auth: { appId: options.app.appId, privateKey: options.app.privateKey, cache: NO_CACHE },
  });
  // GET /users/{login} is public, and not an app route: asked without the app's JWT.
  const anonymous = octokitOn(options);
  const call = scmCall;
  let bot: { name: string; email: string } | undefined;

  return {
    async mintToken(installationId, repository) {
      const auth = await call(`a token of installation ${installationId}`, () =>
        octokit.auth({ type: 'installation', installationId: Number(installationId), repositoryNames: [repository] }),
      );
      const { token, expiresAt } = auth as { token: string; expiresAt: string };
      return { token, expiresAt: new Date(expiresAt) };
    },
    async botIdentity() {
      if (bot) return bot;
      const login = `${options.app.slug}[bot]`;
      // GitHub links a commit to the bot by `<id>+<login>@users.noreply.github.com`; the id is the bot user's.
      const { data } = await call(`the app's bot user ${login}`, () =>
        anonymous.request('GET /users/{username}', { username: login }),
      ).catch((err) => {
        // A bot user the host does not show: the commit is still the bot's by name, only not linked to it.
        if (err instanceof ScmError && err.status === 404) return { data: { id: undefined } };
        throw err;
      });
      const domain =
        new URL(options.webUrl).hostname === 'github.com'
          ? 'users.noreply.github.com'
          : `users.noreply.${new URL(options.webUrl).hostname}`;
      bot = { name: login, email: `${data.id === undefined ? '' : `${data.id}+`}${login}@${domain}` };
      return bot;
    },
  };
}

/** What a person's user-to-server token (the app's sign-in) says about them and the app's installations. */
export interface AppUser {
  login: string;
  /** The installations of this app the person can reach (GitHub: GET /user/installations). */
  installations(): Promise<AppInstallation[]>;
  /** Whether they administer the organisation (an active admin membership). */
  adminOf(org: string): Promise<boolean>;
}

export async function gitHubAppUser(options: { apiUrl: string; fetch: typeof fetch; token: string }): Promise<AppUser> {
  const octokit = octokitOn(options, { auth: options.token });
  const call = scmCall;
  const { data: me } = await call('the signed-in user', () => octokit.request('GET /user'));
  return {
    login: me.login,
    async installations() {
      const all = await call('your installations of the app', () =>
        octokit.paginate('GET /user/installations', { per_page: 100 }),
      );
      return all.map(installationOf);
    },
    async adminOf(org) {
      try {
        const { data } = await call(`your membership of ${org}`, () =>
          octokit.request('GET /user/memberships/orgs/{org}', { org }),
        );
        return data.role === 'admin' && data.state === 'active';
      } catch (err) {
        if (err instanceof ScmError && (err.status === 404 || err.status === 403)) return false;
        throw err;
      }
    },
  };
}
