import { Gitlab } from '@gitbeaker/rest';
import { type CodeHostOptions, SCM_REQUEST_TIMEOUT_MS, ScmError, type ScmRefusal } from '../code-host.js';

/**
 * gitbeaker's HTTP layer, replaced: its own requester calls the global fetch, retries 429 and 502
 * up to ten times with growing pauses and has no time limit of ours. This one sends every request
 * through the caller's fetch, once, with a time limit, and turns GitLab's error bodies into
 * ScmErrors. gitbeaker keeps building the paths (URL-encoded project ids) and the JSON bodies.
 */

type RequesterFn = NonNullable<ConstructorParameters<typeof Gitlab>[0]['requesterFn']>;

/** What gitbeaker hands a requester (BaseResource): its URL, its headers and the auth header makers. */
interface ServiceOptions {
  url: string;
  headers: Record<string, string>;
  authHeaders: Record<string, () => Promise<string>>;
}

interface RequestOptions {
  body?: unknown;
  searchParams?: Record<string, unknown>;
  signal?: AbortSignal;
}

/** A failed answer, carried from the requester to the adapter's `call` (which names the action). */
export class GitLabHttpError extends Error {
  override name = 'GitLabHttpError';
  constructor(
    readonly status: number,
    readonly words: string,
  ) {
    super(words);
  }
}

// gitbeaker camelizes nothing (camelize is off) but passes option names in camelCase.
const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [snake(k), snakeKeys(v)]));
}

function query(params: Record<string, unknown> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) q.append(snake(k), String(v));
  return q.toString();
}

/**
 * GitLab's error bodies in one line: `{"message": "404 Project Not Found"}`, `{"message": {"name":
 * ["has already been taken"]}}`, `{"message": ["…"]}`, `{"error": "invalid_token",
 * "error_description": "…"}`; anything else (a proxy's HTML page) by the status text.
 */
export function wordsOf(body: unknown, fallback: string): string {
  const b = (body ?? {}) as { message?: unknown; error?: unknown; error_description?: unknown };
  const flat = (m: unknown): string[] => {
    if (typeof m === 'string') return [m];
    if (Array.isArray(m)) return m.flatMap(flat);
    if (m && typeof m === 'object')
      return Object.entries(m).flatMap(([field, v]) => flat(v).map((s) => (field === 'base' ? s : `${field} ${s}`)));
    return [];
  };
  const words = [...flat(b.message), ...flat(b.error_description ?? b.error)].filter(Boolean).join('; ');
  return words || fallback;
}

/** GitLab's words for the refusals the pr step acts on. */
export function refusalOf(words: string): ScmRefusal | undefined {
  return /another open merge request already exists/i.test(words) ? 'pull_exists' : undefined;
}

/** Any failure of a call as an ScmError naming what was being done; never the token. */
export function describe(err: unknown, what: string): ScmError {
  if (err instanceof ScmError) return err;
  if (err instanceof GitLabHttpError)
    return new ScmError(
      err.status,
      `${what}: the code host answered HTTP ${err.status}: ${err.words}`,
      refusalOf(err.words),
    );
  const e = err as { name?: string; message?: string; cause?: { name?: string } };
  const timeout = [e?.name, e?.cause?.name].some((n) => n === 'TimeoutError') || /timeout/i.test(e?.message ?? '');
  return new ScmError(null, `${what}: the code host ${timeout ? 'did not answer in time' : 'could not be reached'}`);
}

async function bodyOf(response: Response): Promise<unknown> {
  if (response.status === 204) return null;
  const text = await response.text();
  if (!(response.headers.get('content-type') ?? '').includes('json')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A gitbeaker requester over `fetchFn`. gitbeaker builds URLs as HOST/api/v4/…; the adapter gives
 * it `apiUrl` as the host, and this swaps `apiUrl/api/v4` back to `apiUrl`, so any API root works
 * (gitlab.com, a self-managed server, one under a relative URL root).
 */
export function requesterOver(apiUrl: string, fetchFn: typeof fetch, timeoutMs = SCM_REQUEST_TIMEOUT_MS): RequesterFn {
  const gitbeakerRoot = `${apiUrl}/api/v4`;
  return ((service: ServiceOptions) => {
    const send =
      (method: string) =>
      async (endpoint: string, options: RequestOptions = {}) => {
        const prefix = service.url.startsWith(gitbeakerRoot)
          ? apiUrl + service.url.slice(gitbeakerRoot.length)
          : service.url;
        const url = new URL(endpoint, prefix.endsWith('/') ? prefix : `${prefix}/`);
        url.search = query(options.searchParams);
        const headers: Record<string, string> = { ...service.headers, accept: 'application/json' };
        for (const [name, make] of Object.entries(service.authHeaders)) headers[name] = await make();
        let body: string | undefined;
        if (options.body !== undefined && method !== 'GET') {
          body = JSON.stringify(snakeKeys(options.body));
          headers['content-type'] = 'application/json';
        }
        const timeout = AbortSignal.timeout(timeoutMs);
        const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
        const response = await fetchFn(url, { method, headers, body, signal });
        const parsed = await bodyOf(response);
        if (!response.ok)
          throw new GitLabHttpError(response.status, wordsOf(parsed, response.statusText || 'no message'));
        return { body: parsed, headers: Object.fromEntries(response.headers.entries()), status: response.status };
      };
    return { get: send('GET'), post: send('POST'), put: send('PUT'), patch: send('PATCH'), delete: send('DELETE') };
  }) as unknown as RequesterFn;
}

/** gitbeaker on the host's API through the given fetch, with emend's per-request timeout. */
export function gitLabApi(options: CodeHostOptions) {
  const apiUrl = options.apiUrl.replace(/\/+$/, '');
  return new Gitlab({
    host: apiUrl,
    requesterFn: requesterOver(apiUrl, options.fetch, options.timeoutMs ?? SCM_REQUEST_TIMEOUT_MS),
    queryTimeout: options.timeoutMs ?? SCM_REQUEST_TIMEOUT_MS,
    // No token: anonymous reads of public projects. gitbeaker sends `oauthToken` as a Bearer token,
    // which GitLab accepts for personal access tokens as well as OAuth tokens.
    ...(options.token ? { oauthToken: options.token } : {}),
  } as ConstructorParameters<typeof Gitlab>[0]);
}

/** Runs one call to GitLab; a failure is an ScmError saying what was asked. */
export async function gitLabCall<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw describe(err, what);
  }
}
