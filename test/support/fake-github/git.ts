import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { credentials } from './rest.js';
import { type State, now } from './state.js';

/**
 * git smart HTTP at /OWNER/NAME.git/... and /OWNER/NAME/...: `git http-backend` as CGI over the
 * fake's bare repositories, behind GitHub's access rules. Credentials are HTTP Basic with the
 * token as password (any username); `token T`/`Bearer T` headers are accepted too.
 */

const GIT_PATH = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;

export function isGitPath(pathname: string): boolean {
  return GIT_PATH.test(pathname);
}

export function handleGit(state: State, req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
  const m = GIT_PATH.exec(url.pathname)!;
  const [, owner, name, endpoint] = m as unknown as [string, string, string, string];
  const writing =
    endpoint === 'git-receive-pack' ||
    (endpoint === 'info/refs' && url.searchParams.get('service') === 'git-receive-pack');
  const plain = (status: number, text: string, headers: Record<string, string> = {}): Promise<number> => {
    req.resume();
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
    res.end(text);
    return Promise.resolve(status);
  };
  const challenge = { 'www-authenticate': 'Basic realm="GitHub"' };

  const { present, token } = credentials(req.headers.authorization);
  const found = token !== undefined ? state.byToken(token) : undefined;
  if (present && !found)
    return plain(
      401,
      'Invalid username or token. Password authentication is not supported for Git operations.\n',
      challenge,
    );
  const login = found?.user.login;
  const repo = state.repo(decodeURIComponent(owner), decodeURIComponent(name));
  if (!repo || !state.canSee(repo, login)) {
    return login ? plain(404, 'Repository not found.\n') : plain(401, '', challenge);
  }
  if (writing) {
    if (!found) return plain(401, '', challenge);
    if (found.token.readOnly || !state.permissions(repo, login).push) {
      return plain(403, `Permission to ${repo.owner}/${repo.name}.git denied to ${found.user.login}.\n`);
    }
  }

  const cgi = spawn('git', ['http-backend'], {
    env: {
      ...state.git.env,
      GIT_PROJECT_ROOT: state.root,
      GIT_HTTP_EXPORT_ALL: '1',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: `/${repo.owner}/${repo.name}.git/${endpoint}`,
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      ...(req.headers['content-length'] ? { CONTENT_LENGTH: String(req.headers['content-length']) } : {}),
      REMOTE_ADDR: req.socket.remoteAddress ?? '',
      ...(login ? { REMOTE_USER: login } : {}),
      ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) } : {}),
      ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  req.pipe(cgi.stdin);
  cgi.stdin.on('error', () => {});

  return new Promise<number>((resolve) => {
    let head = Buffer.alloc(0);
    let status = 0;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (status !== 0) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      let split = head.indexOf('\r\n\r\n');
      let sep = 4;
      const lf = head.indexOf('\n\n');
      if (split < 0 || (lf >= 0 && lf < split)) {
        split = lf;
        sep = 2;
      }
      if (split < 0) return;
      const headers: Record<string, string> = {};
      status = 200;
      for (const line of head.subarray(0, split).toString('utf8').split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i < 0) continue;
        const field = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (field.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else headers[field] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(split + sep));
    });
    cgi.on('close', () => {
      if (status === 0) {
        status = 502;
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end('bad CGI output\n');
      } else {
        res.end();
      }
      if (writing && endpoint === 'git-receive-pack' && status === 200) repo.updatedAt = now();
      resolve(status);
    });
  });
}
