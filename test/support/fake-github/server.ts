import { mkdtempSync, rmSync } from 'node:fs';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Identity } from './bare.js';
import { handleGit, isGitPath } from './git.js';
import { OAuth } from './oauth.js';
import { Rest } from './rest.js';
import { type Pull, State, newToken } from './state.js';
import { repositorySide } from './repository-side.js';

export type { Pull } from './state.js';

/** One request the fake answered. The token itself is never recorded; secret query values are redacted. */
export interface FakeGitHubRequest {
  method: string;
  path: string;
  status: number;
  authenticated: boolean;
  kind: 'rest' | 'git' | 'oauth';
}

export interface FakeRepoInfo {
  private: boolean;
  defaultBranch: string;
  fork: boolean;
  parent?: string;
  allowDrafts: boolean;
}

export interface FakeGitHub {
  /** http://127.0.0.1:PORT: git smart HTTP and OAuth (EMEND_SCM_WEB_URL). */
  webUrl: string;
  /** http://127.0.0.1:PORT/api/v3: the REST subset (EMEND_SCM_API_URL). */
  apiUrl: string;
  requests: FakeGitHubRequest[];
  /**
   * A user and a token for it (default: 'ghp_' + 36 random characters). Calling it again for a
   * known login adds the given token (or returns the first one). `readOnly`: a token that can
   * read but not write (REST writes 403 `Resource not accessible by personal access token`, pushes 403).
   */
  addUser(
    login: string,
    opts?: { token?: string; name?: string; email?: string; readOnly?: boolean },
  ): { login: string; token: string };
  createRepo(
    owner: string,
    name: string,
    opts?: {
      files?: Record<string, string> /** symlinks, path → target */;
      links?: Record<string, string>;
      branch?: string;
      private?: boolean;
      allowDrafts?: boolean;
      collaborators?: string[];
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
  repo(owner: string, name: string): FakeRepoInfo | undefined;
  /** Adds branches to the repository's protected ones (pushes to them are refused with GH006). */
  protectBranches(owner: string, name: string, branches: string[]): void;
  oauthAs(login: string): void;
  addOAuthApp(clientId: string, clientSecret: string): void;
  failNext(
    method: string,
    pathPattern: RegExp,
    reply: { status: number; body?: unknown; headers?: Record<string, string> },
  ): void;
  close(): Promise<void>;
}

const SECRET_PARAM = /token|secret|code|password|key|auth/i;

/** pathname plus query, with the values of secret-looking parameters replaced. */
function redacted(url: URL): string {
  if (!url.search) return url.pathname;
  const q = new URLSearchParams();
  for (const [k, v] of url.searchParams) q.append(k, SECRET_PARAM.test(k) ? 'REDACTED' : v);
  return `${url.pathname}?${q.toString()}`;
}

/** A GitHub double on 127.0.0.1: REST under /api/v3, git smart HTTP and OAuth at the web root. */
export async function startFakeGitHub(): Promise<FakeGitHub> {
  const root = mkdtempSync(join(tmpdir(), 'emend-fake-github-'));
  const scratch = mkdtempSync(join(tmpdir(), 'emend-fake-github-scratch-'));
  const state = new State(root, scratch);
  const oauth = new OAuth(state);
  const requests: FakeGitHubRequest[] = [];
  const urls = { webUrl: '', apiUrl: '' };
  const rest = new Rest(state, urls);

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const api = url.pathname === '/api/v3' || url.pathname.startsWith('/api/v3/');
    const kind: FakeGitHubRequest['kind'] = api ? 'rest' : url.pathname.startsWith('/login/oauth/') ? 'oauth' : 'git';
    const record: FakeGitHubRequest = {
      method: req.method ?? 'GET',
      path: redacted(url),
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
      res.end('Not Found\n');
      answered = Promise.resolve(404);
    }
    answered.then(
      (status) => {
        record.status = status;
      },
      (err: unknown) => {
        record.status = 500;
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`fake-github: ${(err as Error).message}\n`);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  urls.webUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  urls.apiUrl = `${urls.webUrl}/api/v3`;

  const { need, ...repositoryCalls } = repositorySide(state, 'fake-github');

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
      const token = opts.token ?? newToken('ghp_');
      state.addToken(user.login, token, { readOnly: opts.readOnly ?? false });
      return { login: user.login, token };
    },
    createRepo(owner, name, opts = {}) {
      const branch = opts.branch ?? 'main';
      const repo = state.addRepo(owner, name, {
        branch,
        private: opts.private ?? false,
        allowDrafts: opts.allowDrafts ?? true,
        description: opts.description ?? null,
      });
      for (const c of opts.collaborators ?? []) repo.collaborators.add(c.toLowerCase());
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
        defaultBranch: r.defaultBranch,
        fork: r.fork,
        ...(r.parent ? { parent: r.parent } : {}),
        allowDrafts: r.allowDrafts,
      };
    },
    oauthAs: (login) => oauth.approveAs(login),
    addOAuthApp: (clientId, clientSecret) => oauth.addApp(clientId, clientSecret),
    failNext: (method, pathPattern, reply) => rest.failNext(method, pathPattern, reply),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
