import { type FakeHost, type HostSpec, startFake } from '../fake-host/side.js';
import { newToken } from '../fake-host/state.js';
import { words } from '../fake-host/oauth.js';
import { type Approvers, appPages } from './app-pages.js';
import { SAML_REFUSAL, appRest, mayUse, repoGate } from './app-rest.js';
import { appSide } from './app-side.js';
import { Apps } from './apps.js';
import { githubActions } from './events.js';
import { githubRest } from './rest.js';

export type { Pull } from '../fake-host/state.js';

/**
 * The shared test-side API (../fake-host/side.ts), repo() with allowDrafts; tokens 'ghp_' + 36
 * characters; and GitHub Apps (app-side.ts).
 */
export type FakeGitHub = FakeHost<'allowDrafts'> & ReturnType<typeof appSide>;

const TROUBLESHOOTING =
  'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors';
const tokenError = (error: string, description: string) => ({
  error,
  error_description: description,
  error_uri: `${TROUBLESHOOTING}#${error.replace(/_/g, '-')}`,
});

/** A user-to-server token of an App lives 8 hours, its refresh token 6 months (GitHub's defaults). */
const USER_TOKEN_S = 8 * 3600;
const REFRESH_TOKEN_S = 184 * 24 * 3600;

const githubSpec = (apps: Apps, approvers: Approvers): HostSpec => ({
  layout: { name: 'fake-github', apiPath: '/api/v3', oauthPath: '/login/oauth/', notFound: 'Not Found\n' },
  protectedRefusal: `    echo "error: GH006: Protected branch update failed for $ref." >&2
    echo "error: Changes must be made through a pull request." >&2`,
  rest: () => githubRest(appRest(apps), apps.now),
  // The web flow: errors of the token request are 200 bodies with `error`, as GitHub answers them.
  oauth: {
    tokenPath: 'access_token',
    authorizeByPost: true,
    redirectCheck: 'never',
    codeBytes: 10,
    scope: (asked) => words(asked ?? '').join(','),
    refuseAuthorize: {
      badRedirect: { page: 'The redirect_uri is missing (the fake has no registered callback URL).' },
      unknownClient: { page: 'The client_id is not valid: no OAuth application is registered with it.' },
      badResponseType: { page: 'unsupported response_type' },
      denied: { redirect: tokenError('access_denied', 'The user has denied your application access.') },
    },
    refuseToken: (why) =>
      why === 'unknownClient' || why === 'badSecret'
        ? [200, tokenError('incorrect_client_credentials', 'The client_id and/or client_secret passed are incorrect.')]
        : [200, tokenError('bad_verification_code', 'The code passed is incorrect or expired.')],
    redirectPage: (location) => `<html><body>You are being <a href="${location}">redirected</a>.</body></html>`,
    // An App's client gets expiring user-to-server tokens (ghu_, refreshed with ghr_); an OAuth app's never expire.
    issue: (scope, clientId) => {
      const app = apps.byClientId(clientId);
      if (!app) return { access: newToken('gho_'), scopes: words(scope), body: { token_type: 'bearer', scope } };
      const access = newToken('ghu_');
      apps.userTokens.set(access, app.id);
      const times = { expires_in: USER_TOKEN_S, refresh_token_expires_in: REFRESH_TOKEN_S };
      const body = { ...times, token_type: 'bearer', scope: '' };
      return { access, refresh: newToken('ghr_', 76), scopes: [], expiresAt: apps.now() + USER_TOKEN_S * 1000, body };
    },
    notFound: [404, 'text/html; charset=utf-8', '<html><body><h1>404</h1><p>Not Found</p></body></html>'],
  },
  // HTTP Basic, any user name, the token as password; `token T`/`Bearer T` too.
  git: {
    realm: 'GitHub',
    badCredentials: 'Invalid username or token. Password authentication is not supported for Git operations.\n',
    signIn: '',
    notFound: 'Repository not found.\n',
    anonymousMissing: 401,
    denied: (repo, login) => `Permission to ${repo.owner}/${repo.name}.git denied to ${login}.\n`,
    // An App's token: its repositories only (others not found), contents read to fetch and write to push.
    gate(repo, token, writing) {
      const why = repoGate(apps, repo, token, (t) => mayUse(t, writing ? 'POST' : 'GET', '/git'));
      if (why === 'saml') return [403, `${SAML_REFUSAL}\n`];
      if (why === 'suspended') return [403, 'This installation has been suspended.\n'];
      if (why === 'hidden') return [404, 'Repository not found.\n'];
      const denied = `Permission to ${repo.owner}/${repo.name}.git denied to ${token.login}.\n`;
      return why === 'forbidden' ? [403, denied] : undefined;
    },
  },
  newToken: () => newToken('ghp_'),
  // emend's event names are GitHub's.
  hooks: {
    events: {
      issue_comment: ['issue_comment', 'issue_comment'],
      issues: ['issues', 'issues'],
      pull_request_review: ['pull_request_review', 'pull_request_review'],
      pull_request_review_comment: ['pull_request_review_comment', 'pull_request_review_comment'],
      ci: ['check_suite', 'check_suite'],
    },
    headers: ({ event, id, hmac }) => ({
      'user-agent': 'GitHub-Hookshot/fake',
      'x-github-event': event,
      'x-github-delivery': id,
      'x-hub-signature-256': `sha256=${hmac}`,
    }),
  },
  actions: githubActions,
  pages: () => appPages(apps, approvers),
  alsoDeliver: (repo, d) => apps.alsoDeliver(repo, d),
});

/** A GitHub double on 127.0.0.1: REST under /api/v3, git smart HTTP, OAuth and the App pages at the web root. */
export async function startFakeGitHub(): Promise<FakeGitHub> {
  const apps = new Apps();
  const approvers: Approvers = {};
  const { fake, state, oauth, deliverTo } = await startFake(githubSpec(apps, approvers), ['allowDrafts']);
  apps.attach(state, fake, deliverTo, oauth.addApp);
  return { ...fake, ...appSide(apps, state, approvers) };
}
