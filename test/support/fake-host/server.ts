import { mkdtempSync, rmSync } from 'node:fs';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One request a fake host answered. The token itself is never recorded; secret query values are redacted. */
export interface HostRequest {
  method: string;
  path: string;
  status: number;
  authenticated: boolean;
  kind: 'rest' | 'git' | 'oauth';
}

/** Answers one request and resolves with the status it wrote. */
export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<number>;

export interface Urls {
  /** http://127.0.0.1:PORT[/prefix]: git smart HTTP and OAuth. */
  webUrl: string;
  /** webUrl + the host's REST path. */
  apiUrl: string;
}

/** Where a host serves what, and its words for a path it does not know. */
export interface HostLayout {
  /** `fake-github`: in temporary directories' names and 500 bodies. */
  name: string;
  /** `/api/v3`: REST below it. */
  apiPath: string;
  /** `/login/oauth/`: OAuth below it. */
  oauthPath: string;
  /** Served under this path (a relative URL root); outside it every request is a 404. */
  prefix?: string;
  /** Recorded paths keep the prefix (Gitea) or drop it (GitLab). */
  recordPrefix?: boolean;
  /** The 404 body for a path that is neither REST, OAuth nor git. */
  notFound: string;
  /** Headers that carry credentials (default: authorization). */
  credentialHeaders?: string[];
}

export interface HostRoutes {
  rest: Handler;
  oauth: Handler;
  git: { matches(pathname: string): boolean; handle: Handler };
}

export interface HostDirs {
  /** The bare repositories. */
  root: string;
  /** Work trees and git's HOME. */
  scratch: string;
  /** Filled in once the server listens. */
  urls: Urls;
}

export interface HostServer {
  urls: Urls;
  requests: HostRequest[];
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

/**
 * A code host's HTTP server on 127.0.0.1: every request recorded, then routed to REST, OAuth or
 * git smart HTTP by path, anything else 404. `routes` gets the directories and the URLs object
 * (filled in once listening) to build the host's state and handlers on.
 */
export async function startHost(layout: HostLayout, routes: (dirs: HostDirs) => HostRoutes): Promise<HostServer> {
  const prefix = (layout.prefix ?? '').replace(/\/+$/, '');
  const root = mkdtempSync(join(tmpdir(), `emend-${layout.name}-`));
  const scratch = mkdtempSync(join(tmpdir(), `emend-${layout.name}-scratch-`));
  const urls: Urls = { webUrl: '', apiUrl: '' };
  const { rest, oauth, git } = routes({ root, scratch, urls });
  const requests: HostRequest[] = [];
  const credentialHeaders = layout.credentialHeaders ?? ['authorization'];

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const full = new URL(req.url ?? '/', 'http://127.0.0.1');
    const inside = prefix === '' || full.pathname.startsWith(`${prefix}/`);
    // The handlers see the path under the prefix, as the host does behind its proxy.
    const url =
      prefix === ''
        ? full
        : new URL(`${inside ? full.pathname.slice(prefix.length) : '/-outside-'}${full.search}`, full);
    const api = url.pathname === layout.apiPath || url.pathname.startsWith(`${layout.apiPath}/`);
    const kind: HostRequest['kind'] = api ? 'rest' : url.pathname.startsWith(layout.oauthPath) ? 'oauth' : 'git';
    const record: HostRequest = {
      method: req.method ?? 'GET',
      path: redacted(inside && !layout.recordPrefix ? url : full),
      status: 0,
      authenticated: credentialHeaders.some((h) => req.headers[h] !== undefined),
      kind,
    };
    requests.push(record);
    let answered: Promise<number>;
    if (api) answered = rest(req, res, url);
    else if (kind === 'oauth') answered = oauth(req, res, url);
    else if (git.matches(url.pathname)) answered = git.handle(req, res, url);
    else answered = plain(req, res, 404, layout.notFound);
    answered.then(
      (status) => {
        record.status = status;
      },
      (err: unknown) => {
        record.status = 500;
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`${layout.name}: ${(err as Error).message}\n`);
      },
    );
  });
  // No idle timeout: a test's synchronous set-up (commits by git plumbing) can block the event loop
  // past Node's 5 s, and the server then closed a kept-alive socket just as the client reused it.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  urls.webUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`;
  urls.apiUrl = `${urls.webUrl}${layout.apiPath}`;

  return {
    urls,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/** A text/plain answer, the request body left unread. */
export function plain(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): Promise<number> {
  req.resume();
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  res.end(text);
  return Promise.resolve(status);
}
