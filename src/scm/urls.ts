import type { Config } from '../config/config.js';
import { AppError } from '../errors.js';
import { hostOfUrl, scmHosts } from './hosts.js';

export interface RepoRef {
  /** Normalised: the host's web URL, then OWNER/NAME (GROUP/…/NAME on GitLab); no .git, no trailing slash. */
  url: string;
  owner: string;
  name: string;
  /** The id of the code host it is on (config.scmHosts). */
  host: string;
}

/** What a repository URL looks like on each configured host, for the error message. */
function expected(config: Pick<Config, 'scmHosts'>): string {
  return scmHosts(config)
    .map((h) => `${h.webUrl}/${h.kind.kind === 'gitlab' ? 'GROUP/…/PROJECT' : 'OWNER/NAME'}`)
    .join(' or ');
}

/**
 * Accepts a repository's web address on one of the configured code hosts, with an optional .git
 * or trailing slash; the host's kind says how its path reads. Anything else is not_a_scm_url,
 * naming the hosts accepted.
 */
export function parseRepoUrl(raw: string, config: Pick<Config, 'scmHosts'>): RepoRef {
  const reject = (why: string) => new AppError('not_a_scm_url', `repo_url: ${why}; expected ${expected(config)}`);
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw reject('not a URL');
  }
  const found = hostOfUrl(config, url.href);
  if (!found) {
    const names = config.scmHosts.map((h) => new URL(h.webUrl).host);
    throw reject(`not a repository on ${names.join(' or ')}`);
  }
  if (url.username || url.password) throw reject('credentials do not belong in the URL');
  if (url.search || url.hash) throw reject('query strings and fragments are not part of a repository URL');
  const segments = found.path
    .replace(/\/$/, '')
    .replace(/\.git$/, '')
    .split('/');
  const path = found.host.kind.repoPath(segments);
  if (typeof path === 'string') throw reject(path);
  return {
    url: `${found.host.webUrl}/${path.owner}/${path.name}`,
    owner: path.owner,
    name: path.name,
    host: found.host.id,
  };
}
