import { ACCESS, type State } from '../fake-host/state.js';
import type { Approvers } from './app-pages.js';
import type { AppState, Apps, NewApp } from './apps.js';

/**
 * The test side of GitHub Apps on the fake (README.md, "GitHub Apps"): organisations, apps, their
 * installations and what happens to them (each told to the app's webhook as GitHub tells it),
 * who approves the manifest and install pages, owners refusing personal tokens, the clock.
 */

/** An app's credentials as a test needs them (its private key: PKCS#1 PEM, RSA 2048). */
const credentialsOf = (app: AppState) => ({
  ...{ id: app.id, slug: app.slug, name: app.name, clientId: app.clientId, clientSecret: app.clientSecret },
  ...{ webhookSecret: app.webhookSecret, privateKey: app.privateKey, botLogin: app.botLogin, botId: app.botId },
  botEmail: `${app.botId}+${app.botLogin}@users.noreply.github.com`,
});

export function appSide(apps: Apps, state: State, approvers: Approvers) {
  const appOf = (idOrSlug: number | string) => apps.need(apps.app(idOrSlug), `no app ${idOrSlug}`);
  const instOf = (id: number) => apps.need(apps.installation(id), `no installation ${id}`);
  const ownerOf = (account: string) =>
    apps.isOrg(account)
      ? ([...state.ensureGroup(account).members].find(([, l]) => l >= ACCESS.owner)?.[0] ?? account)
      : account;
  const names = (ids: Iterable<number>) => [...ids].map((id) => state.repoById(id)?.name ?? String(id));
  return {
    /** An organisation: `admins` Owners (admin on its repositories), `members` read its private ones. */
    addOrg(login: string, o: { admins?: string[]; members?: string[] } = {}) {
      const org = state.ensureGroup(login);
      state.ensureUser(login);
      for (const m of o.members ?? []) org.members.set(state.ensureUser(m).login.toLowerCase(), ACCESS.reporter);
      for (const a of o.admins ?? []) org.members.set(state.ensureUser(a).login.toLowerCase(), ACCESS.owner);
      return { login };
    },
    /** A GitHub App (its client id and secret also work in the OAuth web flow, giving `ghu_` tokens). */
    addApp: (o: NewApp = {}) => credentialsOf(apps.create(o)),
    /** Every app, as addApp returns them (those made through the manifest flow too). */
    apps: () => apps.apps.map(credentialsOf),
    /** Installs an app on an account (all its repositories, or those named), `by` its owner by default. */
    async install(appIdOrSlug: number | string, account: string, o: { repositories?: string[]; by?: string } = {}) {
      const app = appOf(appIdOrSlug);
      const { inst, answers } = await apps.installAndTell(app, account, o.repositories, o.by ?? ownerOf(account));
      return { id: inst.id, answers };
    },
    async uninstall(id: number, o: { by?: string } = {}) {
      const inst = instOf(id);
      const answers = await apps.installationEvent(inst, 'installation', 'deleted', o.by ?? ownerOf(inst.account));
      apps.remove(inst);
      return { answers };
    },
    /** Suspends an installation: its tokens are refused (403) and nothing is delivered for its repositories. */
    async suspend(id: number, o: { by?: string } = {}) {
      const inst = instOf(id);
      const by = o.by ?? ownerOf(inst.account);
      Object.assign(inst, {
        suspendedAt: new Date(apps.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        suspendedBy: by,
      });
      return { answers: await apps.installationEvent(inst, 'installation', 'suspend', by) };
    },
    async unsuspend(id: number, o: { by?: string } = {}) {
      const inst = instOf(id);
      Object.assign(inst, { suspendedAt: null, suspendedBy: null });
      return {
        answers: await apps.installationEvent(inst, 'installation', 'unsuspend', o.by ?? ownerOf(inst.account)),
      };
    },
    /** The installation's repositories now `repos` (names; undefined: all), told as installation_repositories. */
    async setInstallationRepos(id: number, repos: string[] | undefined, o: { by?: string } = {}) {
      const inst = instOf(id);
      return { answers: await apps.setRepositories(inst, repos, o.by ?? ownerOf(inst.account)) };
    },
    installations: () =>
      apps.installations.map((i) => ({
        ...{
          id: i.id,
          appId: i.appId,
          account: i.account,
          targetType: apps.isOrg(i.account) ? 'Organization' : 'User',
        },
        repositories: i.repositories ? names(i.repositories) : ('all' as const),
        ...{ permissions: { ...i.permissions }, events: [...i.events], suspendedAt: i.suspendedAt },
      })),
    /** The installation tokens issued and alive (not revoked; expired ones included), oldest first. */
    installationTokens: () =>
      apps.tokens.map((t) => ({
        installationId: t.installationId,
        repositories: t.repositories ? names(t.repositories) : undefined,
        permissions: { ...t.permissions },
        expiresAt: new Date(t.expiresAt).toISOString(),
      })),
    /** From now on personal and OAuth tokens get 403 (SAML enforcement) on `owner`'s repositories, REST and git. */
    refusePersonalTokens: (owner: string) => void apps.refusing.add(owner.toLowerCase()),
    /** Who approves the install page, on which account (default: their own) and repositories (default: all). */
    installAs(login: string, o: { account?: string; repositories?: string[] } = {}) {
      approvers.install = { login: state.ensureUser(login).login, ...o };
    },
    /** Who approves the manifest page (the app's owner, or the organisation's admin). */
    manifestAs(login: string) {
      approvers.manifest = state.ensureUser(login).login;
    },
    /** POSTs `payload` as `event` to the app's webhook (with `installation` when `installationId` is given). */
    deliverApp(appIdOrSlug: number | string, event: string, payload: object, o: { installationId?: number } = {}) {
      const inst = o.installationId === undefined ? undefined : instOf(o.installationId);
      return apps.deliverApp(appOf(appIdOrSlug), event, payload, inst);
    },
    /** Moves the fake's clock on (tokens, JWTs and manifest codes expire by it; the `date` header shows it). */
    advanceClock(ms: number) {
      state.clockOffset += ms;
    },
  };
}
