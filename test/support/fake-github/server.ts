import { type FakeHost, type HostSpec, startFake } from '../fake-host/side.js';
import { newToken } from '../fake-host/state.js';
import { words } from '../fake-host/oauth.js';
import { githubActions } from './events.js';
import { githubRest } from './rest.js';

export type { Pull } from '../fake-host/state.js';

/** The shared test-side API (../fake-host/side.ts), repo() with allowDrafts; tokens 'ghp_' + 36 characters. */
export type FakeGitHub = FakeHost<'allowDrafts'>;

const TROUBLESHOOTING =
  'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors';
const tokenError = (error: string, description: string) => ({
  error,
  error_description: description,
  error_uri: `${TROUBLESHOOTING}#${error.replace(/_/g, '-')}`,
});

const GITHUB: HostSpec = {
  layout: { name: 'fake-github', apiPath: '/api/v3', oauthPath: '/login/oauth/', notFound: 'Not Found\n' },
  protectedRefusal: `    echo "error: GH006: Protected branch update failed for $ref." >&2
    echo "error: Changes must be made through a pull request." >&2`,
  rest: githubRest,
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
    issue: (scope) => ({ access: newToken('gho_'), scopes: words(scope), body: { token_type: 'bearer', scope } }),
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
  },
  newToken: () => newToken('ghp_'),
  // emend's event names are GitHub's.
  hooks: {
    events: {
      issue_comment: ['issue_comment', 'issue_comment'],
      issues: ['issues', 'issues'],
      pull_request_review: ['pull_request_review', 'pull_request_review'],
      pull_request_review_comment: ['pull_request_review_comment', 'pull_request_review_comment'],
    },
    headers: ({ event, id, hmac }) => ({
      'user-agent': 'GitHub-Hookshot/fake',
      'x-github-event': event,
      'x-github-delivery': id,
      'x-hub-signature-256': `sha256=${hmac}`,
    }),
  },
  actions: githubActions,
};

/** A GitHub double on 127.0.0.1: REST under /api/v3, git smart HTTP and OAuth at the web root. */
export async function startFakeGitHub(): Promise<FakeGitHub> {
  return (await startFake(GITHUB, ['allowDrafts'])).fake;
}
