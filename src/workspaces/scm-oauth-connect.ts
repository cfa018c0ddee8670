import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { and, eq, gt, isNotNull, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { Within } from '../db/client.js';
import { scmOauthFlows } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { decryptSecret, encryptSecret } from '../secrets/box.js';
import { hostById } from '../scm/hosts.js';
import { connectScm } from './scm-connection.js';
import {
  type ConnectState,
  type OAuthDeps,
  STATE_TTL_MS,
  exchangeCode,
  oauthAuthorizeUrl,
  oauthHost,
} from './scm-oauth.js';

/**
 * Connecting a code-host account through OAuth, bound to the browser and the account that
 * started it (RFC 6749 §10.12). The start gives the caller's browser a random cookie and puts
 * its hash in the signed state; the callback trades the code only in a browser that holds it.
 * Anywhere else (an API client started the flow, or someone sent the authorize link to another
 * person) the callback trades nothing: it keeps the code sealed and shows a one-time
 * confirmation code, which only the account that started the flow can redeem, from its own
 * session. A person who did not start a connection has no reason to hand that code over, and
 * the page tells them so.
 */

/** How long a confirmation code waits: the hosts' authorization codes live ten minutes. */
const CONFIRM_TTL_MS = 10 * 60_000;
/** Wrong confirmation codes an account may try before its waiting flows are dropped. */
export const CONFIRM_ATTEMPTS = 5;
/** No 0/O or 1/I/L: the code is read off a page and typed. 32 symbols, 8 of them: 40 bits. */
const CONFIRM_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

/** A confirmation code as people type it: any case, spaces and dashes ignored. */
const normalConfirmation = (value: string) => value.toUpperCase().replace(/[\s-]/g, '');

function newConfirmation(): string {
  const chars = Array.from({ length: 8 }, () => CONFIRM_ALPHABET[randomInt(CONFIRM_ALPHABET.length)]);
  return `${chars.slice(0, 4).join('')}-${chars.slice(4).join('')}`;
}

/** The associated data that ties a sealed code to its flow row. */
const codeContext = (flowId: string) => `scm-oauth-code:${flowId}`;

/**
 * GET /v1/auth/scm/start: records the flow and answers where to send the browser, with the
 * nonce the caller's browser is to hold (the route sets it as a cookie).
 */
export async function startConnect(
  deps: Pick<Deps, 'db' | 'config' | 'secretKey' | 'clock'>,
  who: { workspaceId: string; accountId: string },
  hostId?: string,
): Promise<{ url: string; browserNonce: string }> {
  const { workspaceId } = who;
  const host = oauthHost(deps, hostId);
  const now = deps.clock.now();
  const browserNonce = randomBytes(18).toString('base64url');
  const flowId = randomBytes(12).toString('base64url');
  // This account's finished and expired flows go while here, so the table does not grow without bound.
  await deps.db
    .delete(scmOauthFlows)
    .where(
      and(
        eq(scmOauthFlows.workspaceId, workspaceId),
        or(lte(scmOauthFlows.expiresAt, now), and(isNotNull(scmOauthFlows.usedAt), isNull(scmOauthFlows.codeEnc))),
      ),
    );
  await deps.db.insert(scmOauthFlows).values({
    id: flowId,
    workspaceId,
    host: host.id,
    createdAt: now,
    expiresAt: new Date(now.getTime() + STATE_TTL_MS),
  });
  const url = oauthAuthorizeUrl(
    deps,
    host,
    { a: workspaceId, u: who.accountId, f: flowId, b: sha256(browserNonce) },
    host.kind.oauth.connectScope,
  );
  return { url, browserNonce };
}

/** Whether the browser's cookie is the one its state was bound to at the start. */
export function browserHolds(state: Pick<ConnectState, 'browserHash'>, cookie: string | undefined): boolean {
  if (!cookie) return false;
  const held = Buffer.from(sha256(cookie));
  const bound = Buffer.from(state.browserHash);
  return held.length === bound.length && timingSafeEqual(held, bound);
}

export type ConnectOutcome =
  | { kind: 'connected'; login: string }
  | { kind: 'confirm'; confirmation: string; expiresAt: Date };

/**
 * The callback of a connection. The state is taken once (a replay is refused before anything
 * else). In the browser that started it the code is traded and the account connected; in any
 * other browser the code is sealed, untraded, behind a confirmation code for the starting account.
 */
export async function finishConnect(
  deps: OAuthDeps,
  state: ConnectState,
  code: string,
  inStartingBrowser: boolean,
  /** Run in the transaction that stores the connection, with the login (its audit row). */
  within?: Within<string>,
): Promise<ConnectOutcome> {
  const now = deps.clock.now();
  const [flow] = await deps.db
    .update(scmOauthFlows)
    .set({ usedAt: now })
    .where(
      and(
        eq(scmOauthFlows.id, state.flowId),
        eq(scmOauthFlows.workspaceId, state.workspaceId),
        isNull(scmOauthFlows.usedAt),
        gt(scmOauthFlows.expiresAt, now),
      ),
    )
    .returning({ id: scmOauthFlows.id });
  if (!flow) throw new AppError('bad_request', 'state: already used, or unknown; start the connection again');
  if (inStartingBrowser) {
    const token = await exchangeCode(deps, state.host, code);
    return { kind: 'connected', login: await connectScm(deps, state.workspaceId, token, state.host, within) };
  }
  const confirmation = newConfirmation();
  const expiresAt = new Date(now.getTime() + CONFIRM_TTL_MS);
  await deps.db
    .update(scmOauthFlows)
    .set({
      codeEnc: encryptSecret(deps.secretKey, code, codeContext(flow.id)),
      confirmHash: sha256(normalConfirmation(confirmation)),
      expiresAt,
    })
    .where(eq(scmOauthFlows.id, flow.id));
  return { kind: 'confirm', confirmation, expiresAt };
}

/**
 * POST /v1/auth/scm/confirm: the account that started a flow redeems the confirmation code the
 * callback page showed; the code is traded and the account connected. A wrong code counts against
 * every flow of the account that waits, and after CONFIRM_ATTEMPTS they are gone.
 */
export async function confirmConnect(
  deps: OAuthDeps,
  workspaceId: string,
  confirmation: string,
  /** Run in the transaction that stores the connection, with the login and host (its audit row). */
  within?: Within<{ login: string; hostId: string }>,
): Promise<{ login: string; hostId: string }> {
  const now = deps.clock.now();
  const waiting = and(
    eq(scmOauthFlows.workspaceId, workspaceId),
    isNotNull(scmOauthFlows.codeEnc),
    gt(scmOauthFlows.expiresAt, now),
    lt(scmOauthFlows.attempts, CONFIRM_ATTEMPTS),
  );
  // Deleted as it is read: a confirmation code is redeemed once, even by two requests at a time.
  const [flow] = await deps.db
    .delete(scmOauthFlows)
    .where(and(waiting, eq(scmOauthFlows.confirmHash, sha256(normalConfirmation(confirmation)))))
    .returning();
  if (!flow?.codeEnc) {
    await deps.db
      .update(scmOauthFlows)
      .set({ attempts: sql`${scmOauthFlows.attempts} + 1` })
      .where(waiting);
    throw new AppError(
      'bad_request',
      'confirmation: not a code shown for a connection this account started, or it expired (10 minutes) or was tried ' +
        'too often; start the connection again',
    );
  }
  const host = hostById(deps.config, flow.host);
  if (!host?.oauth)
    throw new AppError('bad_request', 'confirmation: for a code host this server no longer connects through OAuth');
  const token = await exchangeCode(deps, host, decryptSecret(deps.secretKey, flow.codeEnc, codeContext(flow.id)));
  const login = await connectScm(deps, workspaceId, token, host, (tx, made) =>
    within ? within(tx, { login: made, hostId: host.id }) : Promise.resolve(),
  );
  return { login, hostId: host.id };
}
