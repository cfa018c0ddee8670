import { AppError } from '../errors.js';

export interface RepoRef {
  /** Normalised: https://HOST/OWNER/NAME, no .git, no trailing slash. */
  url: string;
  owner: string;
  name: string;
}

const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const NAME = /^[A-Za-z0-9._-]{1,100}$/;

/**
 * Accepts https://HOST/OWNER/NAME with an optional .git or trailing slash, where HOST is the
 * configured code host's web address; anything else is not_a_scm_url.
 */
export function parseRepoUrl(raw: string, scmWebUrl: string): RepoRef {
  const reject = (why: string) => new AppError('not_a_scm_url', `repo_url: ${why}; expected ${scmWebUrl}/OWNER/NAME`);
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw reject('not a URL');
  }
  const host = new URL(scmWebUrl);
  if (url.protocol !== host.protocol || url.host.toLowerCase() !== host.host.toLowerCase()) {
    throw reject(`not a repository on ${host.host}`);
  }
  if (url.username || url.password) throw reject('credentials do not belong in the URL');
  if (url.search || url.hash) throw reject('query strings and fragments are not part of a repository URL');
  const basePath = host.pathname.replace(/\/+$/, '');
  if (!url.pathname.startsWith(`${basePath}/`)) throw reject(`not a repository on ${host.host}`);
  const parts = url.pathname
    .slice(basePath.length + 1)
    .replace(/\/$/, '')
    .split('/');
  if (parts.length !== 2) throw reject('the path must be OWNER/NAME');
  const owner = parts[0]!;
  const name = parts[1]!.replace(/\.git$/, '');
  if (!OWNER.test(owner) || !NAME.test(name) || name === '.' || name === '..')
    throw reject('the owner or repository name is not valid');
  return { url: `${host.protocol}//${host.host}${basePath}/${owner}/${name}`, owner, name };
}
