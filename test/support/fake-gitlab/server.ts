import { randomBytes } from 'node:crypto';
import { words } from '../fake-host/oauth.js';
import { type FakeHost, type HostSpec, startFake } from '../fake-host/side.js';
import { newToken } from '../fake-host/state.js';
import { gitlabActions } from './events.js';
import { gitlabRest } from './rest.js';

export type { Pull } from '../fake-host/state.js';
export { ACCESS } from '../fake-host/state.js';
import { ACCESS } from '../fake-host/state.js';

/**
 * The shared test-side API (../fake-host/side.ts), repo() with the visibility and allowDrafts,
 * plus GitLab's groups; tokens 'glpat-' + 20 characters. createRepo's owner is a user (one added
 * with addUser) or a group path (`acme/tools`, made with its parents); `collaborators` get
 * Developer (30), `reporters` Reporter (20), the namespace's user Owner (50).
 */
export interface FakeGitLab extends FakeHost<'visibility' | 'allowDrafts'> {
  /** A member of a group (and so of its subgroups and projects) at an access level (ACCESS). */
  addGroupMember(group: string, login: string, level: number): void;
  /**
   * A group access token (test side): its bot user, named as GitLab names one
   * (`group_<id>_bot_<hash>`, email `…@noreply.<host>`), a member of the group at `accessLevel`
   * (default Maintainer), and its token (api scope).
   */
  addGroupBot(group: string, opts?: { accessLevel?: number; name?: string }): { login: string; token: string };
  /** Every OAuth access token of the user expires (REST 401 invalid_token); refresh tokens keep working. */
  expireOAuth(login: string): void;
}

const ACCESS_DENIED =
  "HTTP Basic: Access denied. If a password was provided for Git authentication, the password was incorrect or you're " +
  'required to use a token instead of a password. If a token was provided, it was either incorrect, expired, or ' +
  'improperly scoped.\n';
const INVALID_GRANT =
  'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the ' +
  'authorization request, or was issued to another client.';
const INVALID_CLIENT =
  'Client authentication failed due to unknown client, no client authentication included, or unsupported ' +
  'authentication method.';

const CLIENT_FAILED = { page: 'Client authentication failed.' };
const DENIED = 'The resource owner or authorization server denied the request.';

const spec = (relativeUrlRoot?: string): HostSpec => ({
  layout: {
    name: 'fake-gitlab',
    apiPath: '/api/v4',
    oauthPath: '/oauth/',
    prefix: relativeUrlRoot,
    notFound: 'Not Found\n',
    credentialHeaders: ['authorization', 'private-token'],
  },
  protectedRefusal: '    echo "GitLab: You are not allowed to push code to protected branches on this project." >&2',
  rest: gitlabRest,
  // Doorkeeper: tokens expire (expires_in 7200) and come with a refresh token; errors are 400/401 JSON bodies.
  oauth: {
    tokenPath: 'token',
    redirectCheck: 'always',
    codeBytes: 32,
    scope: (asked) => words(asked ?? 'api').join(' '),
    refuseAuthorize: {
      ...{ badRedirect: CLIENT_FAILED, unknownClient: CLIENT_FAILED, badResponseType: CLIENT_FAILED },
      denied: { redirect: { error: 'access_denied', error_description: DENIED } },
    },
    refuseToken: (why) =>
      why === 'unknownClient' || why === 'badSecret'
        ? [401, { error: 'invalid_client', error_description: INVALID_CLIENT }]
        : [400, { error: 'invalid_grant', error_description: INVALID_GRANT }],
    redirectPage: () => '<html><body>You are being redirected.</body></html>',
    issue: (scope) => {
      const [scopes, access, refresh] = [words(scope), randomBytes(32).toString('hex'), newToken('')];
      const body = { token_type: 'Bearer', expires_in: 7200, scope, created_at: Math.floor(Date.now() / 1000) };
      return { access, refresh, scopes, readOnly: !scopes.includes('api'), body };
    },
    notFound: [404, 'application/json; charset=utf-8', '{"error":"not_found"}'],
  },
  // HTTP Basic, any user name (GitLab documents `oauth2` for OAuth tokens), the token as password.
  git: {
    realm: 'GitLab',
    badCredentials: ACCESS_DENIED,
    notFound: "The project you were looking for could not be found or you don't have permission to view it.\n",
    anonymousMissing: 401,
    denied: () => 'You are not allowed to push code to this project.\n',
  },
  newToken: () => newToken('glpat-', 20),
  scopes: (readOnly) => (readOnly ? ['read_api'] : ['api']),
  ownersAreGroups: true,
  // Notes are the comments on issues and merge requests (diff lines included); an approval or a
  // request for changes is a merge request event. The token is sent back as it was given.
  hooks: {
    events: {
      issue_comment: ['note_events', 'Note Hook'],
      issues: ['issues_events', 'Issue Hook'],
      pull_request_review: ['merge_requests_events', 'Merge Request Hook'],
      pull_request_review_comment: ['note_events', 'Note Hook'],
      ci: ['pipeline_events', 'Pipeline Hook'],
    },
    headers: ({ event, id, secret }) => ({
      'user-agent': 'GitLab/fake',
      'x-gitlab-event': event,
      'x-gitlab-event-uuid': id,
      'idempotency-key': id,
      'x-gitlab-token': secret,
    }),
  },
  // Issue iids and merge request iids are two sequences.
  sharedNumbers: false,
  actions: gitlabActions,
});

/**
 * A GitLab double on 127.0.0.1: REST under /api/v4, git smart HTTP and OAuth at the web root.
 * `relativeUrlRoot` (e.g. '/gitlab'): a self-managed GitLab installed under a relative URL root;
 * everything is served under it and webUrl/apiUrl include it (request paths are recorded without it).
 */
export async function startFakeGitLab(opts: { relativeUrlRoot?: string } = {}): Promise<FakeGitLab> {
  const { fake, state, oauth } = await startFake(spec(opts.relativeUrlRoot), ['visibility', 'allowDrafts']);
  return {
    ...fake,
    addGroupMember: (group, login, level) => void state.ensureGroup(group).members.set(login.toLowerCase(), level),
    expireOAuth: (login) => oauth.expire(login),
    addGroupBot: (group, opts = {}) => {
      const g = state.ensureGroup(group);
      const login = `group_${g.id}_bot_${randomBytes(16).toString('hex')}`;
      const user = state.ensureUser(login);
      user.name = opts.name ?? `${group} bot`;
      user.email = `${login}@noreply.${new URL(fake.webUrl).hostname}`;
      g.members.set(login, opts.accessLevel ?? ACCESS.maintainer);
      const token = newToken('glpat-', 20);
      state.addToken(login, token, { scopes: ['api'] });
      return { login, token };
    },
  };
}
