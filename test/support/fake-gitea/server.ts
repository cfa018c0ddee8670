import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Identity } from '../fake-github/bare.js';
import type { Pull } from '../fake-github/state.js';
import { handleGit, isGitPath } from './git.js';
import { OAuth } from './oauth.js';
import { type Flavour, Rest } from './rest.js';
import { GiteaState, type Visibility } from './state.js';
import { repositorySide } from '../fake-github/repository-side.js';

export type { Pull } from '../fake-github/state.js';
export type { Visibility } from './state.js';

/** One request the fake answered. The token itself is never recorded; secret query values are redacted. */
export interface FakeGiteaRequest {
  method: string;
  path: string;
  status: number;
  authenticated: boolean;
  kind: 'rest' | 'git' | 'oauth';
}

export interface FakeGiteaRepoInfo {
  private: boolean;
  visibility: Visibility;
  defaultBranch: string;
  fork: boolean;
  parent?: string;
}

export interface FakeGitea {
  /** http://127.0.0.1:PORT: git smart HTTP and OAuth. */
  webUrl: string;
  /** http://127.0.0.1:PORT/api/v1: the REST subset. */
  apiUrl: string;
  requests: FakeGiteaRequest[];
  /**
   * A user and a token for it (default: 40 hex characters, like a Gitea access token). Calling it
   * again for a known login adds the given token (or returns the first one). `readOnly`: a token
   * scoped read:repository (REST writes 403 naming the scope it lacks, pushes 403).
   */
  addUser(
    login: string,
    opts?: { token?: string; name?: string; email?: string; readOnly?: boolean },
  ): { login: string; token: string };
  createRepo(
    owner: string,
    name: string,
    opts?: {
      files?: Record<string, string>;
      /** symlinks, path → target */
      links?: Record<string, string>;
      branch?: string;
      private?: boolean;
      /** Overrides `private`: internal repositories are readable by every signed-in user. */
      visibility?: Visibility;
      internal?: boolean;
      /** Logins with write access. */
      collaborators?: string[];
      /** Logins with read access only. */
      readers?: string[];
      protectedBranches?: string[];
      description?: string;
    },
  ): { commit: string };
  commit(
    owner: string,
    name: string,
    opts: { branch: string; files: Record<string, string | null>; message?: string; author?: Identity; from?: string },
  ): string;
  branchHead(owner: string, name: string, branch: string): string | undefined;
  files(owner: string, name: string, ref: string): Record<string, string>;
  diff(owner: string, name: string, base: string, head: string): string;
  pulls(owner: string, name: string): Pull[];
  mergePull(owner: string, name: string, number: number): string;
  repo(owner: string, name: string): FakeGiteaRepoInfo | undefined;
  /** Adds branches to the repository's protected ones (pushes refused in Gitea's words). */
  protectBranches(owner: string, name: string, branches: string[]): void;
  oauthAs(login: string): void;
  addOAuthApp(clientId: string, clientSecret: string): void;
  /** Every OAuth access token issued so far stops working (REST and git answer 401). */
  expireOAuthTokens(): void;
  failNext(
    method: string,
    pathPattern: RegExp,
    reply: { status: number; body?: unknown; headers?: Record<string, string> },
  ): void;
  close(): Promise<void>;
}

const SECRET_PARAM = /token|secret|code|password|key|auth/i;

function redacted(url: URL): string {
  if (!url.search) return url.pathname;
  const q = new URLSearchParams();
  for (const [k, v] of url.searchParams) q.append(k, SECRET_PARAM.test(k) ? 'REDACTED' : v);
  return `${url.pathname}?${q.toString()}`;
}

/**
 * A Gitea double on 127.0.0.1: REST under /api/v1, git smart HTTP and OAuth at the web root.
 * `subPath` (e.g. `/gitea`): the instance is served under it, as Gitea behind a reverse proxy
 * with ROOT_URL `https://host/gitea/`; webUrl and apiUrl include it, requests outside it get 404.
 * `flavour: 'forgejo'`: forks are synced at Forgejo's POST …/sync_fork[/{branch}] (204), and
 * Gitea's …/merge-upstream is an unknown route (404).
 */
export async function startFakeGitea(opts: { subPath?: string; flavour?: Flavour } = {}): Promise<FakeGitea> {
  const prefix = (opts.subPath ?? '').replace(/\/+$/, '');
  const root = mkdtempSync(join(tmpdir(), 'emend-fake-gitea-'));
  const scratch = mkdtempSync(join(tmpdir(), 'emend-fake-gitea-scratch-'));
  const state = new GiteaState(root, scratch);
  const oauth = new OAuth(state);
  const requests: FakeGiteaRequest[] = [];
  const urls = { webUrl: '', apiUrl: '' };
  const rest = new Rest(state, urls, opts.flavour);

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const full = new URL(req.url ?? '/', 'http://127.0.0.1');
    const inside = full.pathname === prefix || full.pathname.startsWith(`${prefix}/`);
    // The handlers see the path under the sub-path, as Gitea does behind its proxy.
    const url = new URL(`${inside ? full.pathname.slice(prefix.length) || '/' : '/-outside-'}${full.search}`, full);
    const api = url.pathname === '/api/v1' || url.pathname.startsWith('/api/v1/');
    const kind: FakeGiteaRequest['kind'] = api ? 'rest' : url.pathname.startsWith('/login/oauth/') ? 'oauth' : 'git';
    const record: FakeGiteaRequest = {
      method: req.method ?? 'GET',
      path: redacted(full),
      status: 0,
      authenticated: req.headers.authorization !== undefined,
      kind,
    };
    requests.push(record);
    let answered: Promise<number>;
    if (api) answered = rest.handle(req, res, url);
    else if (kind === 'oauth') answered = oauth.handle(req, res, url);
    else if (isGitPath(url.pathname)) answered = handleGit(state, req, res, url);
    else {
      req.resume();
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('Not found.\n');
      answered = Promise.resolve(404);
    }
    answered.then(
      (status) => {
        record.status = status;
      },
      (err: unknown) => {
        record.status = 500;
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`fake-gitea: ${(err as Error).message}\n`);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  urls.webUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`;
  urls.apiUrl = `${urls.webUrl}/api/v1`;

  const { need, ...repositoryCalls } = repositorySide(state, 'fake-gitea');

  return {
    webUrl: urls.webUrl,
    apiUrl: urls.apiUrl,
    requests,
    addUser(login, opts = {}) {
      const known = state.user(login);
      const user = state.ensureUser(login);
      if (opts.name !== undefined) user.name = opts.name;
      if (opts.email !== undefined) user.email = opts.email;
      if (known && opts.token === undefined && opts.readOnly === undefined) {
        const first = [...state.tokens.entries()].find(([, t]) => t.login === user.login);
        if (first) return { login: user.login, token: first[0] };
      }
      const token = opts.token ?? randomBytes(20).toString('hex');
      const readOnly = opts.readOnly ?? false;
      state.addToken(user.login, token, {
        readOnly,
        scopes: readOnly ? ['read:repository', 'read:user'] : ['write:repository', 'read:user'],
      });
      return { login: user.login, token };
    },
    createRepo(owner, name, opts = {}) {
      const branch = opts.branch ?? 'main';
      const repo = state.addRepo(owner, name, { branch, description: opts.description ?? null });
      state.setVisibility(repo, opts.visibility ?? (opts.internal ? 'internal' : opts.private ? 'private' : 'public'));
      for (const c of opts.collaborators ?? []) repo.collaborators.add(c.toLowerCase());
      for (const r of opts.readers ?? []) state.addReader(repo, r);
      const commit = state.commit(repo, {
        branch,
        files: opts.files ?? { 'README.md': `# ${name}\n` },
        links: opts.links,
        message: 'Initial commit',
      });
      state.setProtected(repo, opts.protectedBranches ?? []);
      return { commit };
    },
    ...repositoryCalls,
    repo(owner, name) {
      const r = state.repo(owner, name);
      if (!r) return undefined;
      return {
        private: r.private,
        visibility: state.visibility(r),
        defaultBranch: r.defaultBranch,
        fork: r.fork,
        ...(r.parent ? { parent: r.parent } : {}),
      };
    },
    oauthAs: (login) => oauth.approveAs(login),
    addOAuthApp: (clientId, clientSecret) => oauth.addApp(clientId, clientSecret),
    expireOAuthTokens: () => oauth.expireTokens(),
    failNext: (method, pathPattern, reply) => rest.failNext(method, pathPattern, reply),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
