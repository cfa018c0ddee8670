import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gitHttpBackend } from './git-cgi.js';

/** One request the server answered, as tests check it (credentials must arrive as a header). */
export interface GitHttpRequest {
  method: string;
  path: string;
  query: string;
  authorization: string | undefined;
  status: number;
}

export interface GitHttpServer {
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  /** GIT_PROJECT_ROOT: OWNER/NAME.git bare repositories. */
  root: string;
  requests: GitHttpRequest[];
  repoUrl(owner: string, name: string): string;
  bareDir(owner: string, name: string): string;
  /** A bare repository with one commit of `files` on `branch`; with `token`, private (HTTP Basic, password = token). */
  createRepo(
    owner: string,
    name: string,
    opts?: { files?: Record<string, string>; branch?: string; token?: string },
  ): string;
  /**
   * Commits `files` (null deletes) on `branch` straight into the bare repository, as a push would; returns the commit.
   */
  commit(
    owner: string,
    name: string,
    opts: { branch: string; files: Record<string, string | null>; message?: string; from?: string },
  ): string;
  close(): Promise<void>;
}

const IDENTITY = {
  GIT_AUTHOR_NAME: 'Test Author',
  GIT_AUTHOR_EMAIL: 'author@example.com',
  GIT_COMMITTER_NAME: 'Test Author',
  GIT_COMMITTER_EMAIL: 'author@example.com',
};

/**
 * The code host's git smart HTTP over real bare repositories: a Node server running
 * `git http-backend` as CGI. "Private" repositories answer 401 unless the request carries
 * HTTP Basic credentials whose password is the repository's token.
 */
export async function startGitHttp(): Promise<GitHttpServer> {
  const root = mkdtempSync(join(tmpdir(), 'emend-git-http-'));
  const scratch = mkdtempSync(join(tmpdir(), 'emend-git-scratch-'));
  const gitEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: scratch,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    ...IDENTITY,
  };
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  const tokens = new Map<string, string>();
  const requests: GitHttpRequest[] = [];

  const allowed = (repoKey: string, authorization: string | undefined): boolean => {
    const token = tokens.get(repoKey);
    if (token === undefined) return true;
    const m = /^Basic (.+)$/.exec(authorization ?? '');
    if (!m) return false;
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    return decoded.slice(decoded.indexOf(':') + 1) === token;
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const record: GitHttpRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.search.slice(1),
      authorization: req.headers.authorization,
      status: 0,
    };
    requests.push(record);
    const repoKey = url.pathname
      .split('/')
      .slice(1, 3)
      .join('/')
      .replace(/\.git$/, '');
    const answer = (status: number, headers: Record<string, string>, body: Buffer | string) => {
      record.status = status;
      res.writeHead(status, headers);
      res.end(body);
    };
    if (!allowed(repoKey, req.headers.authorization)) {
      req.resume();
      answer(
        401,
        { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' },
        'authentication required\n',
      );
      return;
    }
    void gitHttpBackend(req, res, {
      env: gitEnv,
      projectRoot: root,
      pathInfo: url.pathname,
      query: url.search.slice(1),
      remoteUser: 'tester',
    }).then((status) => {
      record.status = status;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const bareDir = (owner: string, name: string) => join(root, owner, `${name}.git`);

  const commit: GitHttpServer['commit'] = (owner, name, { branch, files, message = 'change', from }) => {
    const work = mkdtempSync(join(scratch, 'work-'));
    try {
      git(work, 'init', '--quiet');
      const bare = bareDir(owner, name);
      const start = from ?? branch;
      const exists = git(bare, 'for-each-ref', `refs/heads/${start}`) !== '';
      if (exists) {
        git(work, 'fetch', '--quiet', bare, `refs/heads/${start}`);
        git(work, 'checkout', '--quiet', '-B', branch, 'FETCH_HEAD');
      } else {
        git(work, 'checkout', '--quiet', '--orphan', branch);
      }
      for (const [path, content] of Object.entries(files)) {
        const file = join(work, path);
        if (content === null) {
          rmSync(file, { force: true });
        } else {
          mkdirSync(dirname(file), { recursive: true });
          writeFileSync(file, content);
        }
      }
      git(work, 'add', '--all');
      git(work, 'commit', '--quiet', '--allow-empty', '-m', message);
      git(work, 'push', '--quiet', '--force', bare, `HEAD:refs/heads/${branch}`);
      return git(work, 'rev-parse', 'HEAD');
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  };

  return {
    baseUrl,
    root,
    requests,
    repoUrl: (owner, name) => `${baseUrl}/${owner}/${name}.git`,
    bareDir,
    createRepo(owner, name, opts = {}) {
      const branch = opts.branch ?? 'main';
      const bare = bareDir(owner, name);
      mkdirSync(bare, { recursive: true });
      git(bare, 'init', '--quiet', '--bare', `--initial-branch=${branch}`);
      if (opts.token !== undefined) tokens.set(`${owner}/${name}`, opts.token);
      return commit(owner, name, {
        branch,
        files: opts.files ?? { 'README.md': `# ${name}\n` },
        message: 'initial commit',
      });
    },
    commit,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
