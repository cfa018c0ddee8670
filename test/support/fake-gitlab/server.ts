import { mkdtempSync, rmSync } from 'node:fs';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Identity } from '../fake-github/bare.js';
import type { FakeGitHubRequest, FakeRepoInfo } from '../fake-github/server.js';
import { type Pull, newToken } from '../fake-github/state.js';
import { handleGit, isGitPath } from './git.js';
import { ACCESS, GitLabModel, type Visibility } from './model.js';
import { OAuth } from './oauth.js';
import { type Reply, Rest } from './rest.js';
import { repositorySide } from '../fake-github/repository-side.js';

export type { Pull } from '../fake-github/state.js';
export type FakeGitLabRequest = FakeGitHubRequest;
export { ACCESS } from './model.js';

export interface FakeGitLabRepoInfo extends FakeRepoInfo {
  visibility: Visibility;
}

/** The same test-side API as FakeGitHub (test/support/fake-github/server.ts), plus GitLab's visibility and groups. */
export interface FakeGitLab {
  /** http://127.0.0.1:PORT: git smart HTTP and OAuth. */
  webUrl: string;
  /** webUrl + '/api/v4': the REST subset. */
  apiUrl: string;
  requests: FakeGitLabRequest[];
  /** A user and a token (default 'glpat-' + 20 characters); `readOnly`: a read_api token (writes 403). */
  addUser(
    login: string,
    opts?: { token?: string; name?: string; email?: string; readOnly?: boolean },
  ): { login: string; token: string };
  /**
   * A project. `owner` is a user (one added with addUser) or a group path (`acme/tools`, made with
   * its parents). `collaborators` get Developer (30), `reporters` Reporter (20); the namespace's
   * user is Owner (50). `visibility` wins over `private`.
   */
  createRepo(
    owner: string,
    name: string,
    opts?: {
      files?: Record<string, string>;
      links?: Record<string, string>;
      branch?: string;
      private?: boolean;
      visibility?: Visibility;
      allowDrafts?: boolean;
      collaborators?: string[];
      reporters?: string[];
      protectedBranches?: string[];
      description?: string;
    },
  ): { commit: string };
  /** A member of a group (and so of its subgroups and projects) at an access level (ACCESS). */
  addGroupMember(group: string, login: string, level: number): void;
  commit(
    owner: string,
    name: string,
    opts: { branch: string; files: Record<string, string | null>; message?: string; author?: Identity; from?: string },
  ): string;
  branchHead(owner: string, name: string, branch: string): string | undefined;
  files(owner: string, name: string, ref: string): Record<string, string>;
  diff(owner: string, name: string, base: string, head: string): string;
  /** The merge requests targeting the project, as fake-github's Pull (number = iid). */
  pulls(owner: string, name: string): Pull[];
  mergePull(owner: string, name: string, number: number): string;
  repo(owner: string, name: string): FakeGitLabRepoInfo | undefined;
  /** Pushes to these branches are refused with GitLab's words. */
  protectBranches(owner: string, name: string, branches: string[]): void;
  oauthAs(login: string): void;
  addOAuthApp(clientId: string, clientSecret: string): void;
  /** Every OAuth access token of the user expires (REST 401 invalid_token); refresh tokens keep working. */
  expireOAuth(login: string): void;
  failNext(method: string, pathPattern: RegExp, reply: Reply): void;
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
 * A GitLab double on 127.0.0.1: REST under /api/v4, git smart HTTP and OAuth at the web root.
 * `relativeUrlRoot` (e.g. '/gitlab'): a self-managed GitLab installed under a relative URL root;
 * everything is served under it and webUrl/apiUrl include it (request paths are recorded without it).
 */
export async function startFakeGitLab(opts: { relativeUrlRoot?: string } = {}): Promise<FakeGitLab> {
  const prefix = (opts.relativeUrlRoot ?? '').replace(/\/+$/, '');
  const root = mkdtempSync(join(tmpdir(), 'emend-fake-gitlab-'));
  const scratch = mkdtempSync(join(tmpdir(), 'emend-fake-gitlab-scratch-'));
  const model = new GitLabModel(root, scratch);
  const oauth = new OAuth(model);
  const requests: FakeGitLabRequest[] = [];
  const urls = { webUrl: '', apiUrl: '' };
  const rest = new Rest(model, urls);

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    // Outside the relative URL root nothing answers (recorded as a git-kind 404 with its full path).
    const outside = prefix !== '' && !url.pathname.startsWith(`${prefix}/`);
    if (prefix && !outside) url.pathname = url.pathname.slice(prefix.length);
    const api = !outside && (url.pathname === '/api/v4' || url.pathname.startsWith('/api/v4/'));
    const kind: FakeGitLabRequest['kind'] = api
      ? 'rest'
      : !outside && url.pathname.startsWith('/oauth/')
        ? 'oauth'
        : 'git';
    const record: FakeGitLabRequest = {
      method: req.method ?? 'GET',
      path: redacted(url),
      status: 0,
      authenticated: req.headers.authorization !== undefined || req.headers['private-token'] !== undefined,
      kind,
    };
    requests.push(record);
    let answered: Promise<number>;
    if (api) answered = rest.handle(req, res, url);
    else if (kind === 'oauth') answered = oauth.handle(req, res, url);
    else if (!outside && isGitPath(url.pathname)) answered = handleGit(model, req, res, url);
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
        res.end(`fake-gitlab: ${(err as Error).message}\n`);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  urls.webUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`;
  urls.apiUrl = `${urls.webUrl}/api/v4`;

  const state = model.state;
  const { need, ...repositoryCalls } = repositorySide(state, 'fake-gitlab');

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
      const token = opts.token ?? newToken('glpat-').slice(0, 26);
      const readOnly = opts.readOnly ?? false;
      state.addToken(user.login, token, { readOnly, scopes: readOnly ? ['read_api'] : ['api'] });
      return { login: user.login, token };
    },
    createRepo(owner, name, opts = {}) {
      // A namespace no user was added for is a group (nested ones made with their parents).
      if (model.groups.has(owner.toLowerCase()) || owner.includes('/') || !state.user(owner)) model.ensureGroup(owner);
      const branch = opts.branch ?? 'main';
      const visibility = opts.visibility ?? (opts.private ? 'private' : 'public');
      const repo = state.addRepo(owner, name, {
        branch,
        private: visibility !== 'public',
        allowDrafts: opts.allowDrafts ?? true,
        description: opts.description ?? null,
      });
      model.setVisibility(repo, visibility);
      const members = model.extra(repo).members;
      for (const c of opts.collaborators ?? []) members.set(c.toLowerCase(), ACCESS.developer);
      for (const r of opts.reporters ?? []) members.set(r.toLowerCase(), ACCESS.reporter);
      const commit = state.commit(repo, {
        branch,
        files: opts.files ?? { 'README.md': `# ${name}\n` },
        links: opts.links,
        message: 'Initial commit',
      });
      state.setProtected(repo, opts.protectedBranches ?? []);
      return { commit };
    },
    addGroupMember(group, login, level) {
      model.ensureGroup(group).members.set(login.toLowerCase(), level);
    },
    ...repositoryCalls,
    repo(owner, name) {
      const r = state.repo(owner, name);
      if (!r) return undefined;
      return {
        private: r.private,
        visibility: model.extra(r).visibility,
        defaultBranch: r.defaultBranch,
        fork: r.fork,
        ...(r.parent ? { parent: r.parent } : {}),
        allowDrafts: r.allowDrafts,
      };
    },
    oauthAs: (login) => oauth.approveAs(login),
    addOAuthApp: (clientId, clientSecret) => oauth.addApp(clientId, clientSecret),
    expireOAuth: (login) => oauth.expire(login),
    failNext: (method, pathPattern, reply) => rest.failNext(method, pathPattern, reply),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
