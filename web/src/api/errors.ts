/** What to tell a person about a failed call, in a sentence for each of the API's error codes. */
import { ApiError } from './client';
import type { ErrorCode } from './types';

/** One sentence per code of the document's Error schema (a new code fails the typecheck until it has one). */
const SENTENCES: Record<ErrorCode | 'network', string> = {
  network: 'The emend server could not be reached. Check your connection and try again.',
  bad_request: 'Something in what was sent is not right.',
  not_a_scm_url:
    'That address is not a repository on the supported code host. Use the form https://github.com/owner/repository.',
  unauthorized: 'You are not signed in, or the token is not an emend token.',
  invalid_token: 'That token is unknown, revoked or expired, or your session has ended. Sign in again.',
  FREE_LIMIT_REACHED:
    'You have used all the tasks your plan allows this month. Upgrade, or switch on “use my own provider keys” (BYOK) on the Account page.',
  PRIVATE_REPO_REQUIRES_UPGRADE: 'The Free plan works on public repositories only. Upgrade to work on private ones.',
  NO_CREDITS:
    'You have no credits left for a pull-request run. Ask for more credits, or use your own provider keys (BYOK).',
  DEMO_LIMIT_REACHED: 'A demo token runs two tasks, and this one has used both.',
  DEMO_PUBLIC_REPOS_ONLY: 'Demo tokens work on public repositories only, and this one is private or does not exist.',
  forbidden:
    'You are not allowed to do that: your role in this workspace or your token does not allow it. (Demo tokens cannot manage the account.)',
  not_found: 'That was not found: it does not exist, or it is not yours.',
  conflict: 'That cannot be done now, in the current state of the task.',
  scm_not_connected: 'Connect your GitHub account first (Account page, “Code host”).',
  model_not_configured:
    'No model provider key is available: save one on the Account page (“Provider keys”) and turn on “Use my own provider keys”, or ask the operator to set one on the server.',
  payload_too_large: 'What you sent is too large.',
  unsupported_media_type: 'The request was sent in a form the server does not accept.',
  rate_limited: 'Too many requests in a short time.',
  CONCURRENT_LIMIT: 'You already have as many tasks running as your plan allows. Wait for one to finish, or stop one.',
  scm_unavailable: 'GitHub could not be reached or failed. Try again in a moment.',
  internal_error: 'The server failed to handle this. Try again; if it keeps happening, report the request id below.',
  unavailable: 'The service cannot answer right now (its database is out of reach). Try again shortly.',
};

/** Codes whose answers carry a Retry-After worth repeating. */
const WAIT: readonly string[] = ['rate_limited', 'CONCURRENT_LIMIT', 'unavailable'];

const isKnown = (code: string): code is keyof typeof SENTENCES => Object.hasOwn(SENTENCES, code);

/** What to tell a person about an error: a sentence of ours, and the server's own words. */
export function describeError(err: unknown): { sentence: string; detail?: string; requestId?: string } {
  if (err instanceof ApiError) {
    let sentence = isKnown(err.code) ? SENTENCES[err.code] : `The server answered with an error (HTTP ${err.status}).`;
    if (err.retryAfter && WAIT.includes(err.code)) sentence += ` Try again in ${err.retryAfter} seconds.`;
    return { sentence, detail: err.serverMessage || undefined, requestId: err.requestId };
  }
  return { sentence: 'Something went wrong in the page.', detail: err instanceof Error ? err.message : String(err) };
}
