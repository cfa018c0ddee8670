import { type ChildProcess, type SpawnOptions, spawn as nodeSpawn } from 'node:child_process';

/** Starts a child process; the engine passes its tracked spawn so a kill ends git too. */
export type Spawn = (command: string, args: string[], options?: SpawnOptions) => ChildProcess;

/** What every git call needs from its caller. */
export interface GitEnv {
  /** An empty directory owned by the service, used as HOME: no user config, .netrc or credential helper. */
  home: string;
  /** The git executable (default `git` on PATH); tests point it at a wrapper that records argv. */
  git?: string;
  spawn?: Spawn;
}

export interface GitCall {
  args: string[];
  /** The repository (--git-dir); with workTree, --work-tree too. */
  gitDir?: string;
  workTree?: string;
  cwd?: string;
  /** The remote this call talks to: it decides the transports allowed and where a token may be sent. */
  remote?: {
    url: string;
    token?: string /** HTTP Basic user sent with the token (the host kind's; default GitHub's). */;
    user?: string;
  };
  /** Allow the file transport (a local clone from our own mirror). */
  allowFile?: boolean;
  /** Paths git may use though another user owns them (safe.directory); gitDir and workTree are added. */
  safeDirs?: string[];
  /** Extra variables, e.g. GIT_INDEX_FILE. */
  env?: Record<string, string>;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface GitInvocation {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export class GitError extends Error {
  constructor(
    message: string,
    /** git's standard error with any secret replaced by ***. */
    readonly stderr: string,
    readonly exitCode: number | null,
    readonly timedOut = false,
    readonly aborted = false,
  ) {
    super(message);
    this.name = 'GitError';
  }
}

/** The only environment passed on from the service's own: proxies and CA bundles the operator set. */
const PASS_THROUGH = [
  'PATH',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
];

const DEFAULT_TIMEOUT_MS = 15 * 60_000;
const STDOUT_LIMIT = 256 * 1024 * 1024;
const STDERR_KEEP = 64 * 1024;

/** Author and committer of a commit the service makes (merge tracking tells them from people's by the e-mail). */
export const identityEnv = (identity: { name: string; email: string }): Record<string, string> => ({
  GIT_AUTHOR_NAME: identity.name,
  GIT_AUTHOR_EMAIL: identity.email,
  GIT_COMMITTER_NAME: identity.name,
  GIT_COMMITTER_EMAIL: identity.email,
});

const DEFAULT_TOKEN_USER = 'x-access-token';

/**
 * The HTTP header that carries a code-host token over git HTTPS: Basic, the token as password and
 * the user name the host expects (GitHub's `x-access-token`, GitLab's `oauth2`: HostKind.gitUser).
 */
export function authHeaderValue(token: string, user = DEFAULT_TOKEN_USER): string {
  return `Basic ${Buffer.from(`${user}:${token}`).toString('base64')}`;
}

/** Every form in which a token could show up in git's output. */
function secretForms(token: string | undefined, user: string | undefined): string[] {
  if (!token) return [];
  const basics = [...new Set([DEFAULT_TOKEN_USER, user ?? DEFAULT_TOKEN_USER])].map((u) =>
    authHeaderValue(token, u).slice(6),
  );
  return [token, encodeURIComponent(token), ...basics];
}

/** Replaces every form of the token in `text` with ***. */
export function scrub(text: string, token: string | undefined, user?: string): string {
  let out = text;
  for (const secret of secretForms(token, user)) if (secret) out = out.split(secret).join('***');
  return out;
}

export function isLocalUrl(url: string): boolean {
  return url.startsWith('/') || url.startsWith('file://');
}

/**
 * The exact command, arguments and environment for one git call. Pure, so tests can check
 * that the token reaches git through the environment only (argv is visible to every user
 * of the machine in /proc; a process's environment only to its owner).
 */
export function gitInvocation(env: GitEnv, call: GitCall): GitInvocation {
  const config: Array<[string, string]> = [
    // An untrusted repository never runs code on the host.
    ['core.hooksPath', '/dev/null'],
    ['core.fsmonitor', 'false'],
    ['core.protectNTFS', 'true'],
    ['core.protectHFS', 'true'],
    ['submodule.recurse', 'false'],
    ['fetch.recurseSubmodules', 'false'],
    ['protocol.allow', 'never'],
    ['protocol.https.allow', 'always'],
    ['protocol.http.allow', 'always'],
    ['protocol.file.allow', call.allowFile || (call.remote && isLocalUrl(call.remote.url)) ? 'always' : 'never'],
    // No credential helper stores or offers anything; a missing token fails instead of prompting.
    ['credential.helper', ''],
    // Newer git refuses credentials in URLs outright; older git ignores the key.
    ['transfer.credentialsInUrl', 'die'],
    // Maintenance that fetch starts must finish before the mirror's lock is released.
    ['gc.autoDetach', 'false'],
    ['maintenance.autoDetach', 'false'],
    ['init.defaultBranch', 'main'],
    ['advice.detachedHead', 'false'],
  ];
  for (const dir of [call.gitDir, call.workTree, ...(call.safeDirs ?? [])])
    if (dir) config.push(['safe.directory', dir]);
  if (call.remote?.token && !isLocalUrl(call.remote.url)) {
    // Scoped to the code host's origin, so a redirect elsewhere does not carry it.
    const origin = new URL(call.remote.url).origin;
    config.push([
      `http.${origin}/.extraHeader`,
      `Authorization: ${authHeaderValue(call.remote.token, call.remote.user)}`,
    ]);
  }

  const childEnv: Record<string, string> = {};
  for (const name of PASS_THROUGH) {
    const value = process.env[name];
    if (value !== undefined) childEnv[name] = value;
  }
  childEnv.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  Object.assign(childEnv, {
    HOME: env.home,
    XDG_CONFIG_HOME: env.home,
    LANG: 'C',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_CONFIG_COUNT: String(config.length),
  });
  config.forEach(([key, value], i) => {
    childEnv[`GIT_CONFIG_KEY_${i}`] = key;
    childEnv[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  Object.assign(childEnv, call.env);

  const args: string[] = [];
  if (call.gitDir) args.push(`--git-dir=${call.gitDir}`);
  if (call.workTree) args.push(`--work-tree=${call.workTree}`);
  args.push(...call.args);
  return { command: env.git ?? 'git', args, env: childEnv };
}

/** Runs git; resolves with its output on exit 0, otherwise throws a GitError with no secret in it. */
export function runGit(env: GitEnv, call: GitCall): Promise<{ stdout: string; stderr: string }> {
  const { command, args, env: childEnv } = gitInvocation(env, call);
  const token = call.remote?.token;
  const user = call.remote?.user;
  const what = `git ${call.args[0] ?? ''}`.trim();
  return new Promise((resolve, reject) => {
    if (call.signal?.aborted) return reject(new GitError(`${what} was aborted`, '', null, false, true));
    const spawn = env.spawn ?? nodeSpawn;
    // Its own process group, so a timeout or an abort ends git's helpers (remote-https, index-pack) too.
    const child = spawn(command, args, {
      cwd: call.cwd,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let timedOut = false;
    let aborted = false;
    let tooLarge = false;
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, call.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const onAbort = () => {
      aborted = true;
      kill();
    };
    call.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout?.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > STDOUT_LIMIT) {
        tooLarge = true;
        kill();
        return;
      }
      out.push(chunk);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      err = (err + chunk.toString('utf8')).slice(-STDERR_KEEP);
    });
    const done = () => {
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', onAbort);
    };
    child.once('error', (e) => {
      done();
      reject(new GitError(`${what} could not start: ${scrub(e.message, token, user)}`, '', null));
    });
    child.once('close', (code) => {
      done();
      const stderr = scrub(err, token, user).trim();
      if (code === 0 && !timedOut && !aborted && !tooLarge) {
        resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr });
        return;
      }
      const why = aborted
        ? 'was aborted'
        : timedOut
          ? `timed out after ${Math.round((call.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000)} s`
          : tooLarge
            ? `wrote more than ${STDOUT_LIMIT} bytes`
            : `failed (exit ${code})`;
      const detail = stderr ? `: ${lastLines(stderr)}` : '';
      reject(new GitError(`${what} ${why}${detail}`, stderr, code, timedOut, aborted));
    });
  });
}

function lastLines(text: string, count = 4): string {
  return text.split('\n').filter(Boolean).slice(-count).join(' | ');
}
