import { mkdtempSync, rmSync } from 'node:fs';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One request a fake host answered. The token itself is never recorded; secret query values are redacted. */
export type HostRequest = { method: string; path: string; status: number; authenticated: boolean; kind: HostPart };
type HostPart = 'rest' | 'git' | 'oauth' | 'web';

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<number>;

/** `webUrl`: http://127.0.0.1:PORT[/prefix], git smart HTTP and OAuth; `apiUrl`: webUrl + the host's REST path. */
export type Urls = { webUrl: string; apiUrl: string };

/**
 * Where a host serves what: `name` (fake-github…) in temporary directories' names and 500 bodies;
 * REST under `apiPath`, OAuth under `oauthPath`, git smart HTTP elsewhere; `notFound`, the body
 * for any other path. `prefix`: served under this path (a relative URL root), a 404 outside it;
 * `recordPrefix`: recorded paths keep it (Gitea) or drop it (GitLab). `credentialHeaders`: the
 * headers that make a request authenticated in the log (default: authorization).
 */
export interface HostLayout {
  name: string;
  apiPath: string;
  oauthPath: string;
  notFound: string;
  prefix?: string;
  recordPrefix?: boolean;
  credentialHeaders?: string[];
}

/** Paths a route takes, and its handler. */
export type PathRoutes = { matches(path: string): boolean; handle: Handler };

/** `pages`: a host's own web pages (GitHub's App manifest and install pages), tried before git. */
export type HostRoutes = Record<'rest' | 'oauth', Handler> & { git: PathRoutes; pages?: PathRoutes };

const SECRET_PARAM = /token|secret|code|password|key|auth/i;

/** pathname plus query, with the values of secret-looking parameters replaced. */
function redacted(url: URL): string {
  const q = new URLSearchParams();
  for (const [k, v] of url.searchParams) q.append(k, SECRET_PARAM.test(k) ? 'REDACTED' : v);
  return url.search ? `${url.pathname}?${q}` : url.pathname;
}

/**
 * A code host's HTTP server on 127.0.0.1: every request recorded, then routed to REST, OAuth or
 * git smart HTTP by path, anything else 404. `routes` gets the directory for the bare
 * repositories, a scratch directory (work trees, git's HOME) and the URLs (filled in once
 * listening) to build the host's state and handlers on.
 */
export async function startHost(layout: HostLayout, routes: (root: string, scratch: string, urls: Urls) => HostRoutes) {
  const prefix = (layout.prefix ?? '').replace(/\/+$/, '');
  const root = mkdtempSync(join(tmpdir(), `emend-${layout.name}-`));
  const scratch = mkdtempSync(join(tmpdir(), `emend-${layout.name}-scratch-`));
  const urls: Urls = { webUrl: '', apiUrl: '' };
  const { rest, oauth, git, pages } = routes(root, scratch, urls);
  const requests: HostRequest[] = [];
  const credentialHeaders = layout.credentialHeaders ?? ['authorization'];

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const full = new URL(req.url ?? '/', 'http://127.0.0.1');
    const inside = prefix === '' || full.pathname.startsWith(`${prefix}/`);
    // The handlers see the path under the prefix, as the host does behind its proxy.
    const url =
      prefix === ''
        ? full
        : new URL(`${inside ? full.pathname.slice(prefix.length) : '/-outside-'}${full.search}`, full);
    const api = url.pathname === layout.apiPath || url.pathname.startsWith(`${layout.apiPath}/`);
    const page = !api && pages?.matches(url.pathname);
    const kind: HostPart = api ? 'rest' : page ? 'web' : url.pathname.startsWith(layout.oauthPath) ? 'oauth' : 'git';
    const authenticated = credentialHeaders.some((h) => req.headers[h] !== undefined);
    const path = redacted(inside && !layout.recordPrefix ? url : full);
    const record: HostRequest = { method: req.method ?? 'GET', path, status: 0, authenticated, kind };
    requests.push(record);
    const handler =
      kind === 'git' && !git.matches(url.pathname)
        ? undefined
        : kind === 'web'
          ? pages?.handle
          : { rest, oauth, git: git.handle }[kind];
    try {
      record.status = await (handler ? handler(req, res, url) : plain(req, res, 404, layout.notFound));
    } catch (err) {
      record.status = 500;
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`${layout.name}: ${(err as Error).message}\n`);
    }
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

/** One answer of `type`; its status back, for the request log. */
export function send(res: ServerResponse, status: number, type: string, body: string, headers = {}): number {
  res.writeHead(status, { 'content-type': type, ...headers });
  res.end(body);
  return status;
}

/** A text/plain answer, the request body left unread. */
export function plain(req: IncomingMessage, res: ServerResponse, status: number, text: string, headers = {}) {
  req.resume();
  return Promise.resolve(send(res, status, 'text/plain; charset=utf-8', text, headers));
}
