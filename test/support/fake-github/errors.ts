import { reasonPhrases } from '../fake-host/rest.js';

/** GitHub's error bodies and the documentation links it puts in them. */

export const DOCS = {
  root: 'https://docs.github.com/rest',
  getUser: 'https://docs.github.com/rest/users/users#get-the-authenticated-user',
  getRepo: 'https://docs.github.com/rest/repos/repos#get-a-repository',
  createRepo: 'https://docs.github.com/rest/repos/repos#create-a-repository-for-the-authenticated-user',
  createFork: 'https://docs.github.com/rest/repos/forks#create-a-fork',
  mergeUpstream: 'https://docs.github.com/rest/branches/branches#sync-a-fork-branch-with-the-upstream-repository',
  getBranch: 'https://docs.github.com/rest/branches/branches#get-a-branch',
  createPull: 'https://docs.github.com/rest/pulls/pulls#create-a-pull-request',
  getPull: 'https://docs.github.com/rest/pulls/pulls#get-a-pull-request',
  listPullCommits: 'https://docs.github.com/rest/pulls/pulls#list-commits-on-a-pull-request',
} as const;

/** One REST answer before it is written: status, JSON body, extra headers. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ValidationError {
  resource: string;
  code: 'missing' | 'missing_field' | 'invalid' | 'already_exists' | 'unprocessable' | 'custom';
  field?: string;
  message?: string;
}

/** `{"message", "documentation_url", "status"}` as GitHub answers errors (status as a string, as GitHub does). */
export function ghError(status: number, message: string, documentationUrl: string = DOCS.root): Reply {
  return { status, body: { message, documentation_url: documentationUrl, status: String(status) } };
}

/** 422 `Validation Failed` with its `errors` array. */
export function validationFailed(errors: ValidationError[], documentationUrl: string): Reply {
  return {
    status: 422,
    body: { message: 'Validation Failed', errors, documentation_url: documentationUrl, status: '422' },
  };
}

export const notFound = (doc: string = DOCS.root): Reply => ghError(404, 'Not Found', doc);
export const badCredentials = (): Reply => ghError(401, 'Bad credentials', DOCS.root);
export const requiresAuthentication = (doc: string): Reply => ghError(401, 'Requires authentication', doc);
/** What a token without write permission gets on a write (fine-grained token, read-only). */
export const notAccessible = (doc: string): Reply =>
  ghError(403, 'Resource not accessible by personal access token', doc);

/** GitHub's short reason phrases, for default bodies of injected failures. */
export const reasonPhrase = reasonPhrases({ 401: 'Bad credentials', 422: 'Validation Failed' });
