import { type KeyObject, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Ctx } from '../fake-host/rest.js';
import type { Delivery, HookAnswer, HookTarget } from '../fake-host/side.js';
import type { Urls } from '../fake-host/server.js';
import { ACCESS, type RepoState, type State, type TokenState, fullName, newToken } from '../fake-host/state.js';
import { isoSeconds } from '../fake-host/bare.js';
import { repoView, userView } from './rest.js';

/**
 * GitHub Apps on the fake (docs.github.com "About creating GitHub Apps"): apps with their keys and
 * bot user, organisations, installations on accounts (all or selected repositories, suspended or
 * not), installation tokens (`ghs_`, an hour, scoped to repositories and permissions) and the
 * deliveries of installation events to the app's webhook. The REST and web sides are app-rest.ts
 * and app-pages.ts.
 */

export type Level = 'read' | 'write' | 'admin';
export type Permissions = Record<string, Level>;

export interface AppState {
  id: number;
  slug: string;
  name: string;
  owner: string;
  description: string;
  url: string;
  clientId: string;
  clientSecret: string;
  webhookSecret: string;
  privateKey: string;
  publicKey: KeyObject;
  webhookUrl?: string;
  webhookActive: boolean;
  setupUrl?: string;
  callbackUrl?: string;
  events: string[];
  permissions: Permissions;
  public: boolean;
  botLogin: string;
  botId: number;
  hookId: number;
  createdAt: string;
}

export interface InstallationState {
  id: number;
  appId: number;
  account: string;
  /** undefined: all the account's repositories; else the ids selected. */
  repositories?: Set<number>;
  permissions: Permissions;
  events: string[];
  suspendedAt: string | null;
  suspendedBy: string | null;
  createdAt: string;
}

/** An installation token: `repositories` the ids it names (undefined: the installation's), its permissions. */
export interface InstallationToken {
  installationId: number;
  repositories?: number[];
  permissions: Permissions;
  expiresAt: number;
  state: TokenState;
  token: string;
}

export type NewApp = {
  slug?: string;
  name?: string;
  owner?: string;
  description?: string;
  url?: string;
  webhookUrl?: string;
  webhookActive?: boolean;
  webhookSecret?: string;
  setupUrl?: string;
  callbackUrl?: string;
  events?: string[];
  permissions?: Permissions;
  public?: boolean;
};

const RANK: Record<Level, number> = { read: 1, write: 2, admin: 3 };
/** Whether `perms` grant `name` at `level` or above (every app reads metadata). */
export const grants = (perms: Permissions, name: string, level: Level): boolean => {
  const has = perms[name] ?? (name === 'metadata' ? 'read' : undefined);
  return has !== undefined && RANK[has] >= RANK[level];
};

const HOUR = 3600 * 1000;
const nodeId = (kind: string, id: number) => Buffer.from(`0${kind}${id}`).toString('base64url');

export class Apps {
  readonly apps: AppState[] = [];
  readonly installations: InstallationState[] = [];
  readonly tokens: InstallationToken[] = [];
  /** User-to-server tokens (`ghu_`) → the app they were issued to. */
  readonly userTokens = new Map<string, number>();
  /** Owners whose repositories refuse personal and OAuth tokens (SAML enforcement). */
  readonly refusing = new Set<string>();
  /** Manifest codes (single-use, an hour) → the app made and when the code dies. */
  private readonly manifestCodes = new Map<string, { appId: number; expires: number }>();
  private ids = { app: 900001, installation: 5000001, hook: 480001 };
  private attached?: {
    state: State;
    urls: Urls;
    deliverTo: DeliverTo;
    addClient: (id: string, secret: string) => void;
  };

  /** Once the server runs: its State and URLs, how to deliver, how to register an OAuth client (each app is one). */
  attach(state: State, urls: Urls, deliverTo: DeliverTo, addClient: (id: string, secret: string) => void): void {
    this.attached = { state, urls, deliverTo, addClient };
    state.grants.push((repo, login) => this.botLevel(repo, login));
  }
  get state(): State {
    return this.need(this.attached, 'not started').state;
  }
  get urls(): Urls {
    return this.need(this.attached, 'not started').urls;
  }
  now = (): number => (this.attached ? this.state.now() : Date.now());
  /** A view context as nobody in particular (payloads, views outside a request). */
  view(): Ctx {
    return {
      state: this.state,
      urls: this.urls,
      caller: undefined,
      login: undefined,
      body: {},
      query: new URLSearchParams(),
    };
  }
  need<T>(v: T | undefined, why: string): T {
    if (v === undefined) throw new Error(`fake-github: ${why}`);
    return v;
  }

  create(o: NewApp): AppState {
    const slug = o.slug ?? slugOf(o.name ?? 'emend');
    if (this.bySlug(slug)) throw new Error(`fake-github: an app ${slug} exists`);
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const bot = this.state.ensureUser(`${slug}[bot]`);
    bot.email = `${bot.id}+${bot.login}@users.noreply.github.com`;
    const app: AppState = {
      ...{ id: this.ids.app++, slug, name: o.name ?? slug, owner: this.state.ensureUser(o.owner ?? 'emend-dev').login },
      ...{ description: o.description ?? '', url: o.url ?? 'https://emend.example.com' },
      ...{ clientId: newToken('Iv23', 16), clientSecret: randomBytes(20).toString('hex') },
      ...{ webhookSecret: o.webhookSecret ?? randomBytes(20).toString('hex'), privateKey },
      publicKey: createPublicKey(privateKey),
      ...(o.webhookUrl ? { webhookUrl: o.webhookUrl } : {}),
      webhookActive: o.webhookActive ?? true,
      ...(o.setupUrl ? { setupUrl: o.setupUrl } : {}),
      ...(o.callbackUrl ? { callbackUrl: o.callbackUrl } : {}),
      events: o.events ?? ['issues', 'issue_comment', 'pull_request_review', 'pull_request_review_comment'],
      permissions: o.permissions ?? { metadata: 'read', contents: 'write', pull_requests: 'write', issues: 'write' },
      public: o.public ?? false,
      ...{ botLogin: bot.login, botId: bot.id, hookId: this.ids.hook++, createdAt: isoSeconds(new Date(this.now())) },
    };
    this.apps.push(app);
    this.need(this.attached, 'not started').addClient(app.clientId, app.clientSecret);
    return app;
  }
  /** A code for the manifest flow's redirect, traded once within an hour for the app's credentials. */
  manifestCode(app: AppState): string {
    const code = randomBytes(20).toString('hex');
    this.manifestCodes.set(code, { appId: app.id, expires: this.now() + HOUR });
    return code;
  }
  convert(code: string): AppState | undefined {
    const held = this.manifestCodes.get(code);
    this.manifestCodes.delete(code);
    return held && held.expires > this.now() ? this.app(held.appId) : undefined;
  }
  app(idOrSlug: number | string): AppState | undefined {
    return this.apps.find((a) => String(a.id) === String(idOrSlug)) ?? this.bySlug(String(idOrSlug));
  }
  bySlug = (slug: string) => this.apps.find((a) => a.slug.toLowerCase() === slug.toLowerCase());
  byClientId = (clientId: string) => this.apps.find((a) => a.clientId === clientId);
  /** The app a JWT's `iss` names: its id (number or text) or its client id. */
  byIssuer = (iss: string) => this.apps.find((a) => String(a.id) === iss || a.clientId === iss);

  isOrg = (login: string): boolean => this.state.groups.has(login.toLowerCase());
  /** The level a user has in an organisation: admin, member or none. */
  role(org: string, login: string): 'admin' | 'member' | undefined {
    const level = this.isOrg(org) ? this.state.ensureGroup(org).members.get(login.toLowerCase()) : undefined;
    return level === undefined ? undefined : level >= ACCESS.owner ? 'admin' : 'member';
  }
  /** Whether `login` may manage installations on `account`: it is theirs, or an organisation they administer. */
  mayInstallOn(login: string, account: string): boolean {
    return login.toLowerCase() === account.toLowerCase() || this.role(account, login) === 'admin';
  }

  installation = (id: number) => this.installations.find((i) => i.id === id);
  installationOn = (app: AppState, account: string) =>
    this.installations.find((i) => i.appId === app.id && i.account.toLowerCase() === account.toLowerCase());
  covers = (inst: InstallationState, repo: RepoState): boolean =>
    inst.account.toLowerCase() === repo.owner.toLowerCase() && (!inst.repositories || inst.repositories.has(repo.id));
  reposOf = (inst: InstallationState): RepoState[] =>
    [...this.state.repos.values()].filter((r) => this.covers(inst, r));
  install(app: AppState, account: string, names?: string[]): InstallationState {
    const owner = this.isOrg(account) ? account : this.state.ensureUser(account).login;
    this.state.ensureUser(owner);
    const inst: InstallationState = {
      ...{ id: this.ids.installation++, appId: app.id, account: owner },
      ...(names ? { repositories: this.repoIds(owner, names) } : {}),
      ...{ permissions: { ...app.permissions }, events: [...app.events], suspendedAt: null, suspendedBy: null },
      createdAt: isoSeconds(new Date(this.now())),
    };
    this.installations.push(inst);
    return inst;
  }
  /** Installs the app and tells it (`installation` created); the installation and the webhook's answers. */
  async installAndTell(app: AppState, account: string, names: string[] | undefined, by: string) {
    const inst = this.install(app, account, names);
    const repositories = this.reposOf(inst).map(this.repoBrief);
    const answers = await this.installationEvent(inst, 'installation', 'created', by, { repositories });
    return { inst, answers };
  }
  /** The installation's repositories now `names` (undefined: all), told as `installation_repositories` added/removed. */
  async setRepositories(inst: InstallationState, names: string[] | undefined, by: string): Promise<HookAnswer[]> {
    const before = this.reposOf(inst);
    inst.repositories = names ? this.repoIds(inst.account, names) : undefined;
    const after = this.reposOf(inst);
    const changes = {
      added: after.filter((r) => !before.includes(r)),
      removed: before.filter((r) => !after.includes(r)),
    };
    const answers: HookAnswer[] = [];
    for (const action of ['added', 'removed'] as const) {
      if (changes[action].length === 0) continue;
      const more = {
        repository_selection: inst.repositories ? 'selected' : 'all',
        repositories_added: action === 'added' ? changes.added.map(this.repoBrief) : [],
        repositories_removed: action === 'removed' ? changes.removed.map(this.repoBrief) : [],
      };
      answers.push(...(await this.installationEvent(inst, 'installation_repositories', action, by, more)));
    }
    return answers;
  }
  repoIds(owner: string, names: string[]): Set<number> {
    return new Set(names.map((n) => this.need(this.state.repo(owner, n), `no repository ${owner}/${n}`).id));
  }
  /** Removes an installation; its tokens die. */
  remove(inst: InstallationState): void {
    this.installations.splice(this.installations.indexOf(inst), 1);
    for (const t of this.tokens.filter((x) => x.installationId === inst.id)) this.revoke(t);
  }
  revoke(t: InstallationToken): void {
    this.state.tokens.delete(t.token);
    this.tokens.splice(this.tokens.indexOf(t), 1);
  }

  /** A new installation token for `repos` (undefined: the installation's) with `permissions`. */
  issueToken(inst: InstallationState, repos: RepoState[] | undefined, permissions: Permissions): InstallationToken {
    const app = this.need(this.app(inst.appId), 'no app');
    const token = newToken('ghs_');
    const expiresAt = this.now() + HOUR;
    this.state.addToken(app.botLogin, token, { scopes: [], expiresAt });
    const state = this.need(this.state.tokens.get(token), 'token lost');
    const t = {
      installationId: inst.id,
      ...(repos ? { repositories: repos.map((r) => r.id) } : {}),
      permissions,
      expiresAt,
      state,
      token,
    };
    this.tokens.push(t);
    return t;
  }
  /** The installation token a caller's TokenState is, if any. */
  tokenOf = (state: TokenState | undefined) => (state ? this.tokens.find((t) => t.state === state) : undefined);
  /** Whether an installation token reaches `repo`: its installation covers it, and the token names it (or none). */
  reaches(t: InstallationToken, repo: RepoState): boolean {
    const inst = this.installation(t.installationId);
    return !!inst && this.covers(inst, repo) && (!t.repositories || t.repositories.includes(repo.id));
  }

  /** The bot of an app installed (not suspended) on the repository: Developer with contents write, else Reporter. */
  private botLevel(repo: RepoState, login: string): number {
    const app = this.apps.find((a) => a.botLogin.toLowerCase() === login);
    if (!app) return 0;
    const live = this.installations.filter((i) => i.appId === app.id && !i.suspendedAt && this.covers(i, repo));
    if (live.length === 0) return 0;
    return live.some((i) => grants(i.permissions, 'contents', 'write')) ? ACCESS.developer : ACCESS.reporter;
  }

  // --- views (GitHub's shapes) ---

  account(login: string) {
    const u = this.state.ensureUser(login);
    return { ...userView(this.view(), u), node_id: nodeId('U', u.id) };
  }
  installationView(inst: InstallationState) {
    const app = this.need(this.app(inst.appId), 'no app');
    const { apiUrl, webUrl } = this.urls;
    const account = this.account(inst.account);
    const by = inst.suspendedBy ? this.account(inst.suspendedBy) : null;
    return {
      ...{
        id: inst.id,
        node_id: nodeId('I', inst.id),
        account,
        app_id: app.id,
        app_slug: app.slug,
        client_id: app.clientId,
      },
      ...{ target_id: account.id, target_type: this.isOrg(inst.account) ? 'Organization' : 'User' },
      repository_selection: inst.repositories ? 'selected' : 'all',
      access_tokens_url: `${apiUrl}/app/installations/${inst.id}/access_tokens`,
      repositories_url: `${apiUrl}/installation/repositories`,
      html_url: `${webUrl}/settings/installations/${inst.id}`,
      ...{ permissions: { ...inst.permissions }, events: [...inst.events], single_file_name: null },
      ...{
        has_multiple_single_files: false,
        single_file_paths: [],
        created_at: inst.createdAt,
        updated_at: inst.createdAt,
      },
      ...{ suspended_at: inst.suspendedAt, suspended_by: by },
    };
  }
  /** A repository as installation events list them. */
  repoBrief = (r: RepoState) => ({
    ...{ id: r.id, node_id: nodeId('R', r.id), name: r.name, full_name: fullName(r) },
    private: r.visibility !== 'public',
  });
  repoFull = (r: RepoState) => repoView(this.view(), r);
  appView(app: AppState) {
    return {
      ...{ id: app.id, slug: app.slug, node_id: nodeId('A', app.id), client_id: app.clientId },
      ...{ owner: this.account(app.owner), name: app.name, description: app.description, external_url: app.url },
      html_url: `${this.urls.webUrl}/apps/${app.slug}`,
      ...{ created_at: app.createdAt, updated_at: app.createdAt, permissions: { ...app.permissions } },
      ...{ events: [...app.events], installations_count: this.installations.filter((i) => i.appId === app.id).length },
    };
  }

  // --- deliveries to the app's webhook ---

  /** The app's webhook as a delivery target (none without a URL or when inactive); `installation` added to payloads. */
  private target(app: AppState, inst?: InstallationState): HookTarget[] {
    if (!app.webhookUrl || !app.webhookActive) return [];
    const headers = {
      'x-github-hook-id': String(app.hookId),
      'x-github-hook-installation-target-type': 'integration',
      'x-github-hook-installation-target-id': String(app.id),
    };
    const payload = inst
      ? (p: object) => ({ ...p, installation: { id: inst.id, node_id: nodeId('I', inst.id) } })
      : undefined;
    return [{ url: app.webhookUrl, secret: app.webhookSecret, headers, ...(payload ? { payload } : {}) }];
  }
  /** A repository event to every app installed on the repository (live) that subscribed to it. */
  alsoDeliver = (repo: RepoState, d: Delivery): HookTarget[] =>
    this.installations
      .filter((i) => !i.suspendedAt && this.covers(i, repo) && i.events.some((e) => d.to.includes(e)))
      .flatMap((i) => this.target(this.need(this.app(i.appId), 'no app'), i));
  /** Sends `payload` as `event` to the app's webhook (with `installation` when given); the answers. */
  deliverApp(app: AppState, event: string, payload: object, inst?: InstallationState): Promise<HookAnswer[]> {
    return this.need(this.attached, 'not started').deliverTo(this.target(app, inst), event, undefined, payload);
  }
  /** An `installation` or `installation_repositories` event about `inst`, as GitHub sends it. */
  installationEvent(inst: InstallationState, event: string, action: string, by: string, more: object = {}) {
    const app = this.need(this.app(inst.appId), 'no app');
    const payload = {
      action,
      installation: this.installationView(inst),
      ...more,
      requester: null,
      sender: userView(this.view(), this.state.ensureUser(by)),
    };
    return this.deliverApp(app, event, payload);
  }
}

export type DeliverTo = (
  targets: HookTarget[],
  event: string,
  type: string | undefined,
  payload: object,
) => Promise<HookAnswer[]>;

/** GitHub's slug of an app name: lower case, runs of other characters as one dash. */
export const slugOf = (name: string): string =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
