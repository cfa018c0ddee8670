import { randomBytes } from 'node:crypto';
import { type FakeHost, type HostSpec, startFake } from '../fake-host/side.js';
import { giteaActions } from './events.js';
import { type Flavour, giteaRest } from './rest.js';

export type { Pull, Visibility } from '../fake-host/state.js';

/**
 * The shared test-side API (../fake-host/side.ts), repo() with the visibility; tokens are 40 hex
 * characters like a Gitea access token, read-only ones scoped read:repository (REST writes 403
 * naming the scope it lacks). createRepo's `readers` may only read; internal repositories are
 * readable by every signed-in user.
 */
export interface FakeGitea extends FakeHost<'visibility'> {
  /**
   * A member of an organisation (made if missing; its repositories are made with createRepo(org, …))
   * at an access level (ACCESS: owner for its Owners team, developer for a team with write).
   */
  addOrgMember(org: string, login: string, level: number): void;
  /** Every OAuth access token issued so far stops working (REST and git answer 401). */
  expireOAuthTokens(): void;
}

const spec = (subPath: string | undefined, flavour: Flavour | undefined): HostSpec => ({
  layout: {
    name: 'fake-gitea',
    apiPath: '/api/v1',
    oauthPath: '/login/oauth/',
    prefix: subPath,
    recordPrefix: true,
    notFound: 'Not found.\n',
  },
  // As its `gitea hook` prints it (cmd/hook.go: "Gitea: " + message).
  protectedRefusal: '    echo "Gitea: Not allowed to push to protected branch $branch" >&2',
  rest: (urls) => giteaRest(urls, flavour),
  // routers/web/auth/oauth2_provider.go: tokens last an hour (here: until expireOAuthTokens); errors are 400 JSON bodies.
  oauth: {
    tokenPath: 'access_token',
    needsResponseType: true,
    bodyOnly: true,
    redirectCheck: 'ifGiven',
    codeBytes: 16,
    scope: () => '',
    refuseAuthorize: {
      badRedirect: { page: 'Unregistered Redirect URI.' },
      unknownClient: { redirect: { error: 'unauthorized_client', error_description: 'Client ID not registered' } },
      badResponseType: {
        redirect: { error: 'unsupported_response_type', error_description: 'Only code response type is supported.' },
      },
      denied: { redirect: { error: 'access_denied', error_description: 'the request is denied' } },
    },
    refuseToken: (why) => {
      const [error, description] = {
        grantType: ['unsupported_grant_type', 'Only refresh_token or authorization_code grant type is supported'],
        unknownClient: ['invalid_client', 'cannot load client with client id'],
        badSecret: ['unauthorized_client', 'invalid client secret'],
        badRefresh: ['invalid_grant', 'unable to parse refresh token'],
        badCode: ['invalid_grant', 'client is not authorized'],
        badRedirect: ['unauthorized_client', 'unexpected redirect URI'],
      }[why];
      return [400, { error: error!, error_description: description! }];
    },
    issue: () => ({
      access: `gto_${randomBytes(24).toString('hex')}`,
      refresh: `gtr_${randomBytes(24).toString('hex')}`,
      scopes: ['all'],
      body: { token_type: 'bearer', expires_in: 3600 },
    }),
    notFound: [404, 'text/plain; charset=utf-8', '404 page not found\n'],
  },
  // routers/web/repo/githttp.go: HTTP Basic with the token as password, whatever the user name.
  git: {
    realm: 'Gitea',
    badCredentials: 'Unauthorized\n',
    notFound: 'Repository not found\n',
    anonymousMissing: 404,
    denied: () => 'User permission denied\n',
    usernameAsToken: true,
  },
  newToken: () => randomBytes(20).toString('hex'),
  scopes: (readOnly) => (readOnly ? ['read:repository', 'read:user'] : ['write:repository', 'read:user']),
  // A pull request's comment is delivered as an issue comment; a review as approved, rejected or
  // commented (the fake sends "rejected"), its line comments as a pull request comment.
  // Forgejo sends its own headers beside Gitea's.
  hooks: {
    events: {
      issue_comment: ['issue_comment', 'issue_comment'],
      issues: ['issues', 'issues'],
      pull_request_review: ['pull_request_review', 'pull_request_rejected'],
      pull_request_review_comment: ['pull_request_review', 'pull_request_comment'],
      ci: ['status', 'status'],
    },
    headers: ({ event, type, id, hmac }) => {
      const own = { event, ...(type ? { 'event-type': type } : {}), delivery: id, signature: hmac };
      const named = (brand: string) => Object.entries(own).map(([k, v]) => [`x-${brand}-${k}`, v]);
      return Object.fromEntries([...named('gitea'), ...(flavour === 'forgejo' ? named('forgejo') : [])]);
    },
  },
  actions: giteaActions,
});

/**
 * A Gitea double on 127.0.0.1: REST under /api/v1, git smart HTTP and OAuth at the web root.
 * `subPath` (e.g. `/gitea`): the instance is served under it, as Gitea behind a reverse proxy
 * with ROOT_URL `https://host/gitea/`; webUrl and apiUrl include it, requests outside it get 404.
 * `flavour: 'forgejo'`: forks are synced at Forgejo's POST …/sync_fork[/{branch}] (204), and
 * Gitea's …/merge-upstream is an unknown route (404).
 */
export async function startFakeGitea(opts: { subPath?: string; flavour?: Flavour } = {}): Promise<FakeGitea> {
  const { fake, state, oauth } = await startFake(spec(opts.subPath, opts.flavour), ['visibility']);
  return {
    ...fake,
    addOrgMember: (org, login, level) => void state.ensureGroup(org).members.set(login.toLowerCase(), level),
    expireOAuthTokens: () => oauth.expire(),
  };
}
