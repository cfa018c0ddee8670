import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** What `emend login` saves: the server's base address and a personal access token. */
export interface RemoteLogin {
  server: string;
  token: string;
}

/** A remote command that cannot run as configured (not logged in, unreadable config file). */
export class RemoteConfigError extends Error {}

/** $XDG_CONFIG_HOME/emend/config.json, ~/.config when XDG_CONFIG_HOME is unset or not absolute (as the spec says). */
export function configPath(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg?.startsWith('/') ? xdg : join(env.HOME || homedir(), '.config');
  return join(base, 'emend', 'config.json');
}

export function readSavedLogin(env: NodeJS.ProcessEnv): Partial<RemoteLogin> {
  const path = configPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new RemoteConfigError(`cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    return {
      server: typeof parsed.server === 'string' ? parsed.server : undefined,
      token: typeof parsed.token === 'string' ? parsed.token : undefined,
    };
  } catch {
    throw new RemoteConfigError(`${path} is not JSON: run emend login again`);
  }
}

/**
 * Saves the login where only its owner can read it: the directory 0700 and the file 0600, set
 * explicitly (the umask could widen them) and written to a temporary name first, so a reader never
 * sees half a file and the token never sits in a file with wider rights.
 */
export function saveLogin(env: NodeJS.ProcessEnv, login: RemoteLogin): string {
  const path = configPath(env);
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
  return path;
}

/** Removes the saved login; false when there was none. */
export function removeLogin(env: NodeJS.ProcessEnv): boolean {
  const path = configPath(env);
  try {
    rmSync(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** The server address without trailing slashes, checked to be http(s). */
export function normalServer(value: string): string {
  parseServer(value);
  return value.replace(/\/+$/, '');
}

function parseServer(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new RemoteConfigError(`not a URL: "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new RemoteConfigError(`the server address must be http or https, got "${value}"`);
  return url;
}

/**
 * Which server an address names, as a token is bound to it: the origin (scheme, host in lower
 * case, port unless the default) and the path without trailing slashes. No user name, password,
 * query or fragment, so it is also what an error message may show.
 */
export function serverIdentity(value: string): string {
  const url = parseServer(value);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * The login to use. EMEND_TOKEN, given explicitly, goes to EMEND_SERVER or the saved server. The
 * saved token goes only to the server it was saved for: EMEND_SERVER naming another one is refused
 * here, before any request, so the token never reaches a server it was not issued by.
 */
export function resolveLogin(env: NodeJS.ProcessEnv): RemoteLogin {
  const saved = readSavedLogin(env);
  if (env.EMEND_TOKEN) {
    const server = env.EMEND_SERVER || saved.server;
    if (!server) throw notLoggedIn(env);
    return { server: normalServer(server), token: env.EMEND_TOKEN };
  }
  if (!saved.token) throw notLoggedIn(env);
  if (!saved.server)
    throw new RemoteConfigError(`${configPath(env)} names no server for its token: run emend login again`);
  if (env.EMEND_SERVER) {
    const wanted = serverIdentity(env.EMEND_SERVER);
    const bound = serverIdentity(saved.server);
    if (wanted !== bound)
      throw new RemoteConfigError(
        `EMEND_SERVER is ${wanted} but the saved login is for ${bound}, and its token is sent only there: ` +
          `set EMEND_TOKEN for ${wanted} or run \`emend login --server ${wanted}\``,
      );
  }
  return { server: normalServer(saved.server), token: saved.token };
}

function notLoggedIn(env: NodeJS.ProcessEnv): RemoteConfigError {
  return new RemoteConfigError(
    'not logged in: run `emend login --server URL` or set EMEND_SERVER and EMEND_TOKEN ' +
      `(looked in ${configPath(env)})`,
  );
}
