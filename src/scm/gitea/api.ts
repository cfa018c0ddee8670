import { SCM_REQUEST_TIMEOUT_MS, ScmError, type ScmRefusal } from '../code-host.js';

/**
 * Typed fetch calls to Gitea's (and Forgejo's) REST API under /api/v1: the request, the answers'
 * fields the adapter reads, and Gitea's error bodies turned into ScmErrors. No client library:
 * the maintained ones are generated wrappers that add little to fetch.
 */

/** Gitea's default (and usual) maximum page size, MAX_RESPONSE_ITEMS. */
export const PAGE_SIZE = 50;

export interface GiteaUser {
  login: string;
  /** An owner's: `limited` (every signed-in user sees its repositories), `private` (its members). */
  visibility?: 'public' | 'limited' | 'private';
}

export interface GiteaRepo {
  name: string;
  full_name: string;
  owner: GiteaUser;
  private: boolean;
  /** Gitea sets it only for a non-private repository of a private owner; a limited owner's says false. */
  internal?: boolean;
  fork: boolean;
  parent?: GiteaRepo | null;
  default_branch?: string;
  html_url: string;
  clone_url?: string;
  permissions?: { admin?: boolean; push?: boolean; pull?: boolean };
}

export interface GiteaPull {
  number: number;
  html_url: string;
  title: string;
  state: 'open' | 'closed';
  /** Gitea ≥ 1.22 says it; older servers only have the title's work-in-progress prefix. */
  draft?: boolean;
  merged: boolean;
  merged_at: string | null;
  head: { ref: string; sha: string; repo?: GiteaRepo | null };
}

export interface GiteaCommit {
  sha: string;
  commit: {
    message: string;
    author?: { email?: string } | null;
    committer?: { email?: string } | null;
  };
}

/** `{"message", "url"}`; validation failures add `errors` (strings or binding errors). */
interface GiteaErrorBody {
  message?: string;
  errors?: (string | { message?: string; fieldNames?: string[]; classification?: string })[] | null;
}

/** Gitea's words for the refusals the pr step acts on. Gitea has no draft setting to refuse. */
function refusalOf(status: number, message: string): ScmRefusal | undefined {
  if (status === 409 && /pull request already exists/i.test(message)) return 'pull_exists';
  return undefined;
}

/** The host's error body in one line: its message, then the validation errors. */
function wordsOf(body: unknown, fallback: string): string {
  const data = (body && typeof body === 'object' ? body : {}) as GiteaErrorBody;
  const details = (data.errors ?? [])
    .map((x) => (typeof x === 'string' ? x : (x.message ?? [x.fieldNames?.join(','), x.classification].join(' '))))
    .map((x) => x.trim())
    .filter(Boolean)
    .join('; ');
  return [data.message?.trim() || fallback, details].filter(Boolean).join(': ');
}

export interface Answer<T> {
  status: number;
  data: T;
}

export type Call = <T>(
  what: string,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  opts?: { body?: unknown; query?: Record<string, string | number>; accept?: number[]; raw?: boolean },
) => Promise<Answer<T>>;

/**
 * One function for every request: the token as `Authorization: token T` (Gitea reads access and
 * OAuth tokens alike there), a 20 s timeout, JSON both ways (`raw`: the answer's text as it is,
 * a log). A status outside 2xx and `accept` is an ScmError carrying the host's words; no answer at
 * all is ScmError(null).
 */
export function giteaCall(options: { apiUrl: string; fetch: typeof fetch; token?: string; timeoutMs?: number }): Call {
  const base = options.apiUrl.replace(/\/+$/, '');
  return async (what, method, path, opts = {}) => {
    const url = new URL(`${base}${path}`);
    for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'emend' };
    if (options.token) headers.authorization = `token ${options.token}`;
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    let text: string;
    try {
      res = await options.fetch(url, {
        method,
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.timeout(options.timeoutMs ?? SCM_REQUEST_TIMEOUT_MS),
      });
      text = await res.text();
    } catch (err) {
      const e = err as { name?: string; message?: string };
      const timeout = e?.name === 'TimeoutError' || /timeout|aborted/i.test(e?.message ?? '');
      throw new ScmError(null, `${what}: the code host ${timeout ? 'did not answer in time' : 'could not be reached'}`);
    }
    let data: unknown;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = undefined;
    }
    const good = res.status >= 200 && res.status < 300;
    if (good && opts.raw) return { status: res.status, data: text as never };
    if (good || opts.accept?.includes(res.status)) return { status: res.status, data: data as never };
    const words = wordsOf(data, res.statusText || 'error');
    throw new ScmError(
      res.status,
      `${what}: the code host answered HTTP ${res.status}: ${words}`,
      refusalOf(res.status, words),
    );
  };
}

/**
 * Every page of a list endpoint (`page`, `limit`), up to `maxPages`, or until `stop` says enough.
 * An empty page ends the list: a server may cap `limit` below ours, so a short page is not the last.
 */
export async function allPages<T>(
  call: Call,
  what: string,
  path: string,
  query: Record<string, string | number> = {},
  stop: (item: T) => boolean = () => false,
  maxPages = 20,
): Promise<T[]> {
  const out: T[] = [];
  for (let page = 1; page <= maxPages; page++) {
    const { data } = await call<T[]>(what, 'GET', path, { query: { ...query, page, limit: PAGE_SIZE } });
    const items = Array.isArray(data) ? data : [];
    out.push(...items);
    if (items.length === 0 || items.some(stop)) break;
  }
  return out;
}

/** `/repos/OWNER/NAME` with both parts escaped. */
export const repoPathOf = (owner: string, name: string): string =>
  `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`;
