import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface GitCgiRequest {
  /** The environment git runs in (PATH, HOME, config isolation). */
  env: NodeJS.ProcessEnv;
  /** The directory holding the bare repositories. */
  projectRoot: string;
  /** The repository path and endpoint under projectRoot, e.g. `/acme/calc.git/info/refs`. */
  pathInfo: string;
  /** The query string without its `?`. */
  query: string;
  /** Who the request authenticated as, for git's receive-pack (which refuses anonymous pushes). */
  remoteUser?: string;
}

/**
 * Answers one git smart HTTP request with `git http-backend` as CGI, streaming its output as
 * the response (a clone's pack can be large). Resolves with the HTTP status sent; a CGI that
 * ends without a header block answers 502.
 */
export function gitHttpBackend(req: IncomingMessage, res: ServerResponse, cgiReq: GitCgiRequest): Promise<number> {
  const header = (name: string) => (req.headers[name] ? String(req.headers[name]) : undefined);
  const optional = (key: string, value: string | undefined) => (value ? { [key]: value } : {});
  const cgi = spawn('git', ['http-backend'], {
    env: {
      ...cgiReq.env,
      GIT_PROJECT_ROOT: cgiReq.projectRoot,
      GIT_HTTP_EXPORT_ALL: '1',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: cgiReq.pathInfo,
      QUERY_STRING: cgiReq.query,
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      ...optional('CONTENT_LENGTH', header('content-length')),
      REMOTE_ADDR: req.socket.remoteAddress ?? '',
      ...optional('REMOTE_USER', cgiReq.remoteUser),
      ...optional('HTTP_CONTENT_ENCODING', header('content-encoding')),
      ...optional('GIT_PROTOCOL', header('git-protocol')),
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
      const parsed = cgiHead(head);
      if (!parsed) return;
      status = parsed.status;
      res.writeHead(status, parsed.headers);
      res.write(head.subarray(parsed.bodyAt));
    });
    cgi.on('close', () => {
      if (status === 0) {
        status = 502;
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end('bad CGI output\n');
      } else {
        res.end();
      }
      resolve(status);
    });
  });
}

/** The CGI header block (`Status:` and the HTTP headers), once the blank line after it has arrived. */
function cgiHead(head: Buffer): { status: number; headers: Record<string, string>; bodyAt: number } | undefined {
  let split = head.indexOf('\r\n\r\n');
  let sep = 4;
  const lf = head.indexOf('\n\n');
  if (split < 0 || (lf >= 0 && lf < split)) {
    split = lf;
    sep = 2;
  }
  if (split < 0) return undefined;
  const headers: Record<string, string> = {};
  let status = 200;
  for (const line of head.subarray(0, split).toString('utf8').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i < 0) continue;
    const field = line.slice(0, i).trim();
    const value = line.slice(i + 1).trim();
    if (field.toLowerCase() === 'status') status = Number.parseInt(value, 10);
    else headers[field] = value;
  }
  return { status, headers, bodyAt: split + sep };
}
