import type { IncomingMessage, ServerResponse } from 'node:http';
import type { State } from './state.js';
import { readBody } from './rest.js';

/** Codes an authorization lives for before the token request must trade it. */
export const CODE_TTL_MS = 10 * 60 * 1000;

/** What an issued authorization code stands for until it is traded. */
export interface CodeGrant {
  clientId: string;
  login: string;
  redirectUri: string | undefined;
  scope: string;
  expires: number;
}

/**
 * What every host's OAuth provider keeps: registered apps (client id → secret), the codes it
 * issued, and the user that approves at once (`oauthAs`; nobody: the user denies).
 */
export class OAuthApps<Grant> {
  protected readonly apps = new Map<string, string>();
  protected readonly codes = new Map<string, Grant>();
  protected approver: string | undefined;

  constructor(protected readonly users: Pick<State, 'ensureUser'>) {}

  addApp(clientId: string, clientSecret: string): void {
    this.apps.set(clientId, clientSecret);
  }

  approveAs(login: string): void {
    this.users.ensureUser(login);
    this.approver = login;
  }
}

/** A token request's parameters: the query's (when `query`), then the body's (JSON or form). */
export async function tokenParams(req: IncomingMessage, url: URL, query: boolean): Promise<Record<string, string>> {
  const raw = (await readBody(req)).toString('utf8');
  const params: Record<string, string> = query ? Object.fromEntries(url.searchParams) : {};
  if (/json/i.test(req.headers['content-type'] ?? '')) {
    try {
      for (const [k, v] of Object.entries(JSON.parse(raw) ?? {})) if (typeof v === 'string') params[k] = v;
    } catch {
      /* answered as missing fields */
    }
  } else for (const [k, v] of new URLSearchParams(raw)) params[k] = v;
  return params;
}

/** The 302 back to the client's redirect_uri, with `state` echoed and the host's page (if any). */
export function redirectBack(
  res: ServerResponse,
  target: URL,
  state: string | null,
  page?: (location: string) => string,
): number {
  if (state !== null) target.searchParams.set('state', state);
  const location = target.toString();
  res.writeHead(302, page ? { location, 'content-type': 'text/html; charset=utf-8' } : { location });
  res.end(page ? page(location) : undefined);
  return 302;
}

/** `error` and `error_description` (and more) on the redirect. */
export function setParams(target: URL, params: Record<string, string>): void {
  for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v);
}
