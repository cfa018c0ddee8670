import type { Config } from '../config/config.js';
import type { ScmHostConfig } from '../config/scm-hosts.js';
import type { CodeHost, HostKind } from './code-host.js';
import { HOST_KINDS } from './kinds.js';

/** A configured code host with its kind's adapter and rules. */
export interface ScmHost extends Omit<ScmHostConfig, 'kind'> {
  kind: HostKind;
}

/**
 * A host with its kind's adapter. Where a GitHub App is configured, its user sign-in is the host's
 * OAuth (connect and sign in): people authorise one app, not an app and an OAuth app beside it.
 */
const resolved = (h: ScmHostConfig): ScmHost => ({
  ...h,
  kind: HOST_KINDS[h.kind],
  ...(h.app ? { oauth: { clientId: h.app.clientId, clientSecret: h.app.clientSecret } } : {}),
});

/** The deployment's hosts, the default first. */
export const scmHosts = (config: Pick<Config, 'scmHosts'>): ScmHost[] => config.scmHosts.map(resolved);

/** The default host: the first configured. */
export const defaultHost = (config: Pick<Config, 'scmHosts'>): ScmHost => resolved(config.scmHosts[0]!);

/** The host with this id, or undefined. */
export function hostById(config: Pick<Config, 'scmHosts'>, id: string): ScmHost | undefined {
  const found = config.scmHosts.find((h) => h.id === id);
  return found ? resolved(found) : undefined;
}

/**
 * The host a web address (a repository's or a pull request's) belongs to, and the path after the
 * host's web URL; undefined when it is on none of them. Scheme and host compare without case.
 */
export function hostOfUrl(
  config: Pick<Config, 'scmHosts'>,
  raw: string,
): { host: ScmHost; path: string; url: URL } | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  for (const h of config.scmHosts) {
    const web = new URL(h.webUrl);
    if (url.protocol !== web.protocol || url.host.toLowerCase() !== web.host.toLowerCase()) continue;
    const base = web.pathname.replace(/\/+$/, '');
    if (!url.pathname.startsWith(`${base}/`)) continue;
    return { host: resolved(h), path: url.pathname.slice(base.length + 1), url };
  }
  return undefined;
}

/** The address git pushes to and fetches from, built from the configured web URL (never from an API answer). */
export const gitUrlOf = (host: Pick<ScmHost, 'webUrl'>, owner: string, name: string) =>
  `${host.webUrl}/${owner}/${name}.git`;

/** The host's API as the caller sees it: with their token, anonymous without. */
export const clientOf = (host: ScmHost, fetch: typeof globalThis.fetch, token?: string): CodeHost =>
  host.kind.client({ apiUrl: host.apiUrl, fetch, token });

/** The host's name for people: its kind's product name, with its id when it differs from the kind. */
export const hostLabel = (host: ScmHost) =>
  host.id === host.kind.kind ? host.kind.productName : `${host.kind.productName} (${host.id})`;
