import { eq } from 'drizzle-orm';
import { decryptSecret, encryptSecret } from '../secret-box.js';
import { accounts } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { type CodeHost, ScmError } from '../scm/code-host.js';
import { gitHub } from '../scm/github.js';

const context = (accountId: string) => `scm-token:${accountId}`;

type ScmDeps = Pick<Deps, 'db' | 'config' | 'fetch' | 'secretKey'>;

/** The code host as the account sees it: with its token when connected, anonymous otherwise. */
export const hostFor = (deps: Pick<Deps, 'config' | 'fetch'>, token?: string): CodeHost =>
  gitHub({ apiUrl: deps.config.scmApiUrl, fetch: deps.fetch, token });

/** A failure to reach the code host, as an API error (never a 500). */
export function scmUnavailable(err: unknown): AppError {
  const message = err instanceof ScmError ? err.message : 'the code host could not be reached';
  return new AppError('scm_unavailable', message);
}

/**
 * Connects the account to the code host with a token: checked against the host (GET /user),
 * stored encrypted, the login shown in the profile. A rejected token is the caller's error.
 */
export async function connectScm(deps: ScmDeps, accountId: string, token: string): Promise<string> {
  const trimmed = token.trim();
  if (trimmed.length < 8 || /\s/.test(trimmed)) throw new AppError('bad_request', 'token: not a code-host token');
  let login: string;
  try {
    login = await hostFor(deps, trimmed).user();
  } catch (err) {
    if (err instanceof ScmError && (err.status === 401 || err.status === 403))
      throw new AppError('bad_request', `token: the code host rejected it (HTTP ${err.status})`);
    throw scmUnavailable(err);
  }
  await deps.db
    .update(accounts)
    .set({ scmLogin: login, scmTokenEnc: encryptSecret(deps.secretKey, trimmed, context(accountId)) })
    .where(eq(accounts.id, accountId));
  return login;
}

export async function disconnectScm(deps: Pick<Deps, 'db'>, accountId: string): Promise<boolean> {
  const [row] = await deps.db.select({ login: accounts.scmLogin }).from(accounts).where(eq(accounts.id, accountId));
  await deps.db.update(accounts).set({ scmLogin: null, scmTokenEnc: null }).where(eq(accounts.id, accountId));
  return !!row?.login;
}

/** The account's code-host token, decrypted for one use in this process; undefined when not connected. */
export function scmTokenOf(
  deps: Pick<Deps, 'secretKey'>,
  account: { id: string; scmTokenEnc: string | null },
): string | undefined {
  return account.scmTokenEnc ? decryptSecret(deps.secretKey, account.scmTokenEnc, context(account.id)) : undefined;
}
