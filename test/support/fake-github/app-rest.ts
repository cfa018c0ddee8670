import type { BeforeAsk, Reply } from '../fake-host/rest.js';
import { ok, parseBody } from '../fake-host/rest.js';
import type { RepoState, TokenState } from '../fake-host/state.js';
import { type AppState, type Apps, type InstallationToken, type Level, type Permissions, grants } from './apps.js';
import { JWT_WORDS, checkJwt, looksLikeJwt } from './jwt.js';
import { ghError, userView } from './rest.js';

/**
 * GitHub's REST for Apps (docs.github.com/rest/apps), answered before the shared routes: the
 * routes a JWT authenticates, the manifest conversion, what an installation token (`ghs_`) may
 * reach (its repositories, at its permissions; others hidden), a user-to-server token's
 * installations, organisation memberships, and owners that refuse personal tokens (SAML).
 */

const DOC = {
  app: 'apps/apps',
  installations: 'apps/installations',
  manifest: 'apps/apps#create-a-github-app-from-a-manifest',
  memberships: 'orgs/members#get-an-organization-membership-for-the-authenticated-user',
};

export const NOT_INTEGRATION = 'Resource not accessible by integration';
export const SAML_REFUSAL =
  'Resource protected by organization SAML enforcement. You must grant your Personal Access token access to this organization.';
const SUSPENDED = 'This installation has been suspended';
const OUT_OF_SCOPE =
  'There is at least one repository that does not exist or is not accessible to the parent installation.';

type JwtRoute = [string, RegExp, (app: AppState, ask: BeforeAsk, ...groups: string[]) => Reply];

/** The permissions a repository route needs of an installation token (any one of them), by method and the path's tail. */
function needs(method: string, tail: string): [string, Level][] {
  const level: Level = method === 'GET' || method === 'HEAD' ? 'read' : 'write';
  if (tail === '' || tail.startsWith('/collaborators/') || tail === '/installation') return [['metadata', 'read']];
  if (tail.startsWith('/hooks')) return [['repository_hooks', level]];
  if (tail.startsWith('/pulls')) return [['pull_requests', level]];
  // A pull's conversation is an issue's: either permission does (GitHub's "Issues" or "Pull requests").
  if (tail.startsWith('/issues'))
    return [
      ['issues', level],
      ['pull_requests', level],
    ];
  return [['contents', level]];
}
export const mayUse = (t: InstallationToken, method: string, tail: string): boolean =>
  needs(method, tail).some(([name, level]) => grants(t.permissions, name, level));

/** What a caller's token may do on a repository, in GitHub's words (undefined: go on). */
export function repoGate(apps: Apps, repo: RepoState, token: TokenState, use: (t: InstallationToken) => boolean) {
  const t = apps.tokenOf(token);
  if (!t) return apps.refusing.has(repo.owner.toLowerCase()) ? 'saml' : undefined;
  const inst = apps.installation(t.installationId);
  if (inst?.suspendedAt) return 'suspended';
  if (!apps.reaches(t, repo)) return 'hidden';
  return use(t) ? undefined : 'forbidden';
}

export function appRest(apps: Apps) {
  const body = (ask: BeforeAsk) => parseBody(ask.raw, 'application/json') ?? {};
  const instOf = (app: AppState, id: string) => {
    const inst = apps.installation(Number(id));
    return inst?.appId === app.id ? inst : undefined;
  };
  const found = (inst: ReturnType<typeof instOf>) =>
    inst ? ok(apps.installationView(inst)) : ghError(404, 'Not Found', DOC.installations);
  const accountInstallation = (app: AppState, account: string) => found(apps.installationOn(app, account));

  function accessToken(app: AppState, ask: BeforeAsk, id: string): Reply {
    const inst = instOf(app, id);
    if (!inst) return ghError(404, 'Not Found', DOC.installations);
    if (inst.suspendedAt) return ghError(403, SUSPENDED, DOC.installations);
    const asked = body(ask);
    const names = Array.isArray(asked.repositories) ? asked.repositories.map(String) : undefined;
    const ids = Array.isArray(asked.repository_ids) ? asked.repository_ids.map(Number) : undefined;
    let repos: RepoState[] | undefined;
    if (names || ids) {
      const all = apps.reposOf(inst);
      const named = [
        ...(names ?? []).map((n) => all.find((r) => r.name.toLowerCase() === n.toLowerCase())),
        ...(ids ?? []).map((i) => all.find((r) => r.id === i)),
      ];
      if (named.some((r) => r === undefined)) return ghError(422, OUT_OF_SCOPE, DOC.installations);
      repos = [...new Set(named as RepoState[])];
    }
    const perms = (asked.permissions ?? inst.permissions) as Permissions;
    if (typeof perms !== 'object' || Object.entries(perms).some(([k, v]) => !grants(inst.permissions, k, v)))
      return ghError(422, 'The permissions requested are not granted to this installation.', DOC.installations);
    const t = apps.issueToken(inst, repos, { ...perms });
    const shown = repos ?? (inst.repositories ? apps.reposOf(inst) : undefined);
    return ok(
      {
        ...{ token: t.token, expires_at: new Date(t.expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z') },
        ...{ permissions: t.permissions, repository_selection: shown ? 'selected' : 'all' },
        ...(shown ? { repositories: shown.map(apps.repoFull) } : {}),
        ...{ single_file: null, has_multiple_single_files: false, single_file_paths: [] },
      },
      201,
    );
  }

  const JWT_ROUTES: JwtRoute[] = [
    ['GET', /^\/app$/, (app) => ok(apps.appView(app))],
    [
      'GET',
      /^\/app\/installations$/,
      (app) => ok(apps.installations.filter((i) => i.appId === app.id).map((i) => apps.installationView(i))),
    ],
    ['GET', /^\/app\/installations\/(\d+)$/, (app, _, id = '') => found(instOf(app, id))],
    [
      'DELETE',
      /^\/app\/installations\/(\d+)$/,
      (app, _, id = '') => {
        const inst = instOf(app, id);
        if (!inst) return ghError(404, 'Not Found', DOC.installations);
        apps.remove(inst);
        return { status: 204 };
      },
    ],
    ['POST', /^\/app\/installations\/(\d+)\/access_tokens$/, accessToken],
    [
      'GET',
      /^\/repos\/([^/]+)\/([^/]+)\/installation$/,
      (app, _, owner = '', name = '') => {
        const repo = apps.state.repo(owner, name);
        const inst = repo && apps.installations.find((i) => i.appId === app.id && apps.covers(i, repo));
        return found(inst);
      },
    ],
    ['GET', /^\/orgs\/([^/]+)\/installation$/, (app, _, org = '') => accountInstallation(app, org)],
    ['GET', /^\/users\/([^/]+)\/installation$/, (app, _, user = '') => accountInstallation(app, user)],
  ];

  function conversion(code: string): Reply {
    const app = apps.convert(code);
    if (!app) return ghError(404, 'Not Found', DOC.manifest);
    const { id, slug, node_id, owner, name, description, external_url, html_url } = apps.appView(app);
    return ok(
      {
        ...{ id, slug, node_id, owner, name, description, external_url, html_url },
        ...{ created_at: app.createdAt, updated_at: app.createdAt, client_id: app.clientId },
        ...{ client_secret: app.clientSecret, webhook_secret: app.webhookSecret, pem: app.privateKey },
        ...{ permissions: { ...app.permissions }, events: [...app.events] },
      },
      201,
    );
  }

  function withJwt(ask: BeforeAsk, route: JwtRoute | undefined): Reply {
    const checked =
      ask.token && looksLikeJwt(ask.token)
        ? checkJwt(ask.token, (iss) => apps.byIssuer(iss)?.publicKey, apps.now())
        : { refused: JWT_WORDS.undecodable };
    if ('refused' in checked) return ghError(401, checked.refused, DOC.app);
    const app = apps.byIssuer(checked.issuer)!;
    if (!route) return ghError(401, JWT_WORDS.undecodable, DOC.app);
    const groups = route[1]
      .exec(ask.path)!
      .slice(1)
      .map((g) => decodeURIComponent(g ?? ''));
    return route[2](app, ask, ...groups);
  }

  /** The routes of an installation token of its own (the rest: on its repositories, at its permissions). */
  function asInstallation(ask: BeforeAsk, t: InstallationToken): Reply | undefined {
    const { method, path } = ask;
    if (method === 'GET' && path === '/installation/repositories') {
      const inst = apps.installation(t.installationId)!;
      const repos = apps.reposOf(inst).filter((r) => apps.reaches(t, r));
      return ok({
        total_count: repos.length,
        repository_selection: inst.repositories ? 'selected' : 'all',
        repositories: repos.map(apps.repoFull),
      });
    }
    if (method === 'DELETE' && path === '/installation/token') {
      apps.revoke(t);
      return { status: 204 };
    }
    if (path === '/user' || path.startsWith('/user/')) return ghError(403, NOT_INTEGRATION, 'users/users');
    return undefined;
  }

  function asUser(ask: BeforeAsk): Reply | undefined {
    const login = ask.caller!.user.login;
    if (ask.method === 'GET' && ask.path === '/user/installations') {
      const app = apps.app(apps.userTokens.get(ask.token ?? '') ?? -1);
      if (!app)
        return ghError(
          403,
          'You must authenticate with an access token authorized to a GitHub App in order to list installations',
          'apps/installations#list-app-installations-accessible-to-the-user-access-token',
        );
      const mine = apps.installations.filter(
        (i) => i.appId === app.id && (i.account.toLowerCase() === login.toLowerCase() || apps.role(i.account, login)),
      );
      return ok({ total_count: mine.length, installations: mine.map((i) => apps.installationView(i)) });
    }
    const membership = /^\/user\/memberships\/orgs\/([^/]+)$/.exec(ask.path);
    if (ask.method === 'GET' && membership) {
      const org = decodeURIComponent(membership[1]!);
      const role = apps.role(org, login);
      if (!role) return ghError(404, 'Not Found', DOC.memberships);
      const { apiUrl } = apps.urls;
      return ok({
        ...{ url: `${apiUrl}/orgs/${org}/memberships/${login}`, state: 'active', role },
        ...{ organization_url: `${apiUrl}/orgs/${org}`, organization: apps.account(org) },
        user: userView(apps.view(), ask.caller!.user),
      });
    }
    return undefined;
  }

  /** RestHost.before: GitHub's App routes, and what App and refused personal tokens may reach. */
  return (ask: BeforeAsk): Reply | undefined => {
    const conversionOf = /^\/app-manifests\/([^/]+)\/conversions$/.exec(ask.path);
    if (ask.method === 'POST' && conversionOf) return conversion(decodeURIComponent(conversionOf[1]!));
    const route = JWT_ROUTES.find(([m, p]) => m === ask.method && p.test(ask.path));
    const jwt = ask.token !== undefined && looksLikeJwt(ask.token);
    if (route || jwt) return withJwt(ask, route);
    if (!ask.caller) return undefined;
    const t = apps.tokenOf(ask.caller.token);
    const own = t ? asInstallation(ask, t) : asUser(ask);
    if (own) return own;
    const onRepo = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(ask.path);
    const repo = onRepo && apps.state.repo(decodeURIComponent(onRepo[1]!), decodeURIComponent(onRepo[2]!));
    if (!repo) return undefined;
    const gate = repoGate(apps, repo, ask.caller.token, (x) => mayUse(x, ask.method, onRepo![3] ?? ''));
    if (gate === 'saml') return ghError(403, SAML_REFUSAL, 'overview/other-authentication-methods');
    if (gate === 'suspended') return ghError(403, SUSPENDED, DOC.installations);
    if (gate === 'hidden') return ghError(404, 'Not Found');
    if (gate === 'forbidden') return ghError(403, NOT_INTEGRATION);
    return undefined;
  };
}
