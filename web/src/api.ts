/** The same-origin API, authenticated by the HttpOnly session cookie the server set at sign-in. */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly serverMessage: string,
    readonly requestId?: string,
    readonly retryAfter?: string,
  ) {
    super(serverMessage);
  }
}

/** Called when the server says the session is over (401): the app shows the sign-in page. */
let onSignedOut: () => void = () => {};
export const setSignedOutHandler = (fn: () => void) => {
  onSignedOut = fn;
};

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers:
        body === undefined
          ? { accept: 'application/json' }
          : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network', 'the server could not be reached');
  }
  const text = await res.text();
  let json: any = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const err = new ApiError(
      res.status,
      json?.error ?? `http_${res.status}`,
      json?.message ?? text.slice(0, 200),
      json?.request_id,
      res.headers.get('retry-after') ?? undefined,
    );
    if (res.status === 401 && path !== '/v1/auth/session') onSignedOut();
    throw err;
  }
  return json as T;
}

/** Sentences for the API's error codes (the spec's table, plus the service's own). */
const SENTENCES: Record<string, string> = {
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
  forbidden: 'You are not allowed to do that. (Demo tokens cannot manage the account; some pages need a full token.)',
  not_found: 'That was not found: it does not exist, or it is not yours.',
  conflict: 'That cannot be done now, in the current state of the task.',
  scm_not_connected: 'Connect your GitHub account first (Account page, “Code host”).',
  payload_too_large: 'What you sent is too large.',
  unsupported_media_type: 'The request was sent in a form the server does not accept.',
  rate_limited: 'Too many requests in a short time.',
  CONCURRENT_LIMIT: 'You already have as many tasks running as your plan allows. Wait for one to finish, or stop one.',
  scm_unavailable: 'GitHub could not be reached or failed. Try again in a moment.',
  internal_error: 'The server failed to handle this. Try again; if it keeps happening, report the request id below.',
};

/** What to tell a person about an error: a sentence of ours, and the server's own words. */
export function describeError(err: unknown): { sentence: string; detail?: string; requestId?: string } {
  if (err instanceof ApiError) {
    let sentence = SENTENCES[err.code] ?? `The server answered with an error (HTTP ${err.status}).`;
    if (err.retryAfter && (err.code === 'rate_limited' || err.code === 'CONCURRENT_LIMIT'))
      sentence += ` Try again in ${err.retryAfter} seconds.`;
    return { sentence, detail: err.serverMessage || undefined, requestId: err.requestId };
  }
  return { sentence: 'Something went wrong in the page.', detail: err instanceof Error ? err.message : String(err) };
}

export interface Task {
  id: string;
  status: string;
  mode: string;
  task_type: string;
  prompt: string;
  repo_url: string | null;
  base_branch: string;
  approval_mode: string;
  parent_id: string | null;
  pr_url: string | null;
  deployed_url: string | null;
  deployed_repo: string | null;
  diff_summary: string | null;
  cost_usd: number;
  tokens_total: number;
  duration_ms: number | null;
  error: string | null;
  created_at: string;
  finished_at: string | null;
}

export interface TaskSummary {
  id: string;
  prompt: string;
  status: string;
  pr_url: string | null;
  mode: string;
  task_type: string;
  repo_url: string | null;
  deployed_url: string | null;
  cost_usd: number;
  created_at: string;
}

export interface LogRecord {
  id?: number;
  step: string;
  status: string;
  output: Record<string, any>;
  created_at: string;
}

export interface Profile {
  id: string;
  email: string;
  name: string;
  plan: string;
  credits: number;
  use_byok: boolean;
  approval_mode: string;
  scm: string | null;
  api_keys: { provider: string; last4: string }[];
}

export const TERMINAL = ['done', 'failed', 'cancelled'];
