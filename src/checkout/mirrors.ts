import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { TaskCheckoutError } from './errors.js';
import { gitEnvOf, mirrorsRootOf } from './layout.js';
import type { CheckoutDeps } from './checkout-deps.js';
import { GitError, isLocalUrl, runGit } from './git.js';
import { LockAbortedError, LockTimeoutError, withFileLock } from './lock.js';

export interface MirrorRequest {
  /** Where to fetch from: https://HOST/OWNER/NAME(.git); a local path only in tests and development. */
  repoUrl: string;
  token?: string;
  /** The HTTP Basic user the host expects with the token (HostKind.gitUser). */
  tokenUser?: string;
  signal?: AbortSignal;
}

export interface Mirror {
  path: string;
  /** True when this call made the mirror (first use of the repository on this machine). */
  created: boolean;
}

const SEGMENT = /^[A-Za-z0-9._-]{1,100}$/;
const HEADS = '+refs/heads/*:refs/heads/*';

/**
 * <dataDir>/mirrors/<host>/<owner>/<name>.git. Lower-cased (GitHub's names are
 * case-insensitive, so Psf/Requests and psf/requests share a mirror); a port joins the host
 * with `_`. A local path gets mirrors/local/<hash of the path>/<name>.git.
 */
export function mirrorPath(dataDir: string, repoUrl: string): string {
  const root = mirrorsRootOf(dataDir);
  if (isLocalUrl(repoUrl)) {
    const path = repoUrl.replace(/^file:\/\//, '');
    const hash = createHash('sha256').update(path).digest('hex').slice(0, 16);
    const name = basename(path).replace(/\.git$/, '') || 'repo';
    if (!SEGMENT.test(name)) throw badUrl(repoUrl, 'the repository name is not valid');
    return join(root, 'local', hash, `${name}.git`);
  }
  let url: URL;
  try {
    url = new URL(repoUrl);
  } catch {
    throw badUrl(repoUrl, 'not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw badUrl(repoUrl, 'only http and https are fetched');
  // Checked here too, though the API already refuses them: a token must never travel in a URL.
  if (url.username || url.password) throw badUrl('(a URL with credentials)', 'credentials do not belong in the URL');
  if (url.search || url.hash) throw badUrl(repoUrl, 'query strings and fragments are not part of a repository URL');
  const parts = url.pathname.replace(/\/+$/, '').split('/').filter(Boolean);
  if (parts.length < 2) throw badUrl(repoUrl, 'the path must end in OWNER/NAME');
  parts[parts.length - 1] = parts.at(-1)!.replace(/\.git$/, '');
  for (const part of parts) {
    if (!SEGMENT.test(part) || part === '.' || part === '..')
      throw badUrl(repoUrl, `"${part}" is not a valid path segment`);
  }
  const host = url.host.toLowerCase().replace(/[^a-z0-9.-]/g, '_');
  const name = `${parts.pop()!.toLowerCase()}.git`;
  return join(root, host, ...parts.map((p) => p.toLowerCase()), name);
}

function badUrl(repoUrl: string, why: string) {
  return new TaskCheckoutError('bad_request', `repository URL ${repoUrl}: ${why}`);
}

/**
 * Brings the repository's bare mirror up to date (making it on first use) and runs `fn`
 * while still holding the mirror's lock, so nothing fetches into it meanwhile. The lock is
 * per repository: tasks on other repositories do not wait.
 */
export async function withMirror<T>(
  deps: CheckoutDeps,
  req: MirrorRequest,
  fn: (mirror: Mirror) => Promise<T>,
): Promise<T> {
  const path = mirrorPath(deps.dataDir, req.repoUrl);
  await mkdir(dirname(path), { recursive: true });
  try {
    return await withFileLock(
      `${path}.lock`,
      { timeoutMs: deps.lockTimeoutMs ?? 10 * 60_000, signal: req.signal },
      async () => {
        const started = performance.now();
        const created = !existsSync(path);
        if (created) await createMirror(deps, path, req);
        else await fetchInto(deps, path, req);
        deps.log.info(
          { repo: req.repoUrl, mirror: path, ms: Math.round(performance.now() - started) },
          created ? 'mirror created' : 'mirror fetched',
        );
        return fn({ path, created });
      },
    );
  } catch (err) {
    if (err instanceof LockTimeoutError)
      throw new TaskCheckoutError('timeout', `waited too long for another task fetching ${req.repoUrl}`);
    if (err instanceof LockAbortedError) throw new TaskCheckoutError('aborted', 'stopped: the task was cancelled');
    throw err;
  }
}

/**
 * Made beside its final place and renamed into it once the first fetch succeeded, so a mirror
 * on disk is always a complete one: a crash or a refused token leaves nothing half-made.
 */
async function createMirror(deps: CheckoutDeps, path: string, req: MirrorRequest): Promise<void> {
  // Leftovers of a process that died while making this mirror (we hold the lock, so none is live).
  const prefix = `${basename(path)}.new-`;
  for (const entry of await readdir(dirname(path))) {
    if (entry.startsWith(prefix)) await rm(join(dirname(path), entry), { recursive: true, force: true });
  }
  const temp = `${path}.new-${randomBytes(4).toString('hex')}`;
  try {
    // --template= : no sample hooks or other template files in the mirror.
    await runGit(gitEnvOf(deps), {
      args: ['init', '--quiet', '--bare', '--template=', temp],
      safeDirs: [temp],
      signal: req.signal,
    });
    await fetchInto(deps, temp, req);
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Heads only, pruned, into refs/heads: the mirror is a copy of the remote's branches. The URL
 * is given on each fetch rather than stored as a remote, so the mirror's config names nothing.
 */
async function fetchInto(deps: CheckoutDeps, gitDir: string, req: MirrorRequest): Promise<void> {
  try {
    await runGit(gitEnvOf(deps), {
      args: [
        'fetch',
        '--quiet',
        '--prune',
        '--no-tags',
        '--no-recurse-submodules',
        '--no-write-fetch-head',
        '--',
        req.repoUrl,
        HEADS,
      ],
      gitDir,
      remote: { url: req.repoUrl, token: req.token, user: req.tokenUser },
      signal: req.signal,
      timeoutMs: deps.fetchTimeoutMs,
    });
  } catch (err) {
    throw fetchError(err, req);
  }
}

/** git's failure as a sentence a task log can show; git's own words (scrubbed) follow for the rest. */
export function fetchError(err: unknown, req: { repoUrl: string; token?: string }): Error {
  if (!(err instanceof GitError)) return err as Error;
  if (err.aborted) return new TaskCheckoutError('aborted', 'stopped: the task was cancelled');
  if (err.timedOut) return new TaskCheckoutError('timeout', `fetching ${req.repoUrl} took too long; ${err.message}`);
  const text = err.stderr;
  if (
    /could not read (Username|Password)|Authentication failed|terminal prompts disabled|error: 40[13]\b/i.test(text)
  ) {
    const hint = req.token
      ? 'the code host refused the token (it may have expired or lack read access to this repository)'
      : 'the repository is private or needs credentials, and no token was given';
    return new TaskCheckoutError('auth', `cannot fetch ${req.repoUrl}: ${hint}`);
  }
  if (/error: 404\b|repository .* not found|does not appear to be a git repository|not found/i.test(text)) {
    return new TaskCheckoutError(
      'repo_not_found',
      `cannot fetch ${req.repoUrl}: the repository does not exist or is not visible with these credentials`,
    );
  }
  return new TaskCheckoutError('git', `cannot fetch ${req.repoUrl}: ${err.message}`);
}
