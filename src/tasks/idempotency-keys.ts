import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, eq, isNull, lte, or, sql } from 'drizzle-orm';
import { configure } from 'safe-stable-stringify';
import type { Db } from '../db/client.js';
import { idempotencyKeys } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';

/** How long a key's first answer is replayed (as Stripe and the IETF draft suggest: 24 h). */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/**
 * A claim with no answer after this long belongs to a request that died (process killed,
 * database lost mid-request): the next request with the key takes it over. Longer than any
 * creation can take, the code host's checks (20 s a call) included.
 */
export const CLAIM_LEASE_MS = 120_000;

/** The operations that take an Idempotency-Key; keys are scoped per account and per operation. */
export type IdempotentRoute = 'tasks.create' | 'tasks.continue';

export interface KeyedRequest {
  accountId: string;
  route: IdempotentRoute;
  key: string;
  fingerprint: string;
}

/** The right to run the request and store its answer; held by exactly one request per key. */
export interface Claim {
  accountId: string;
  route: IdempotentRoute;
  key: string;
  claimId: string;
}

export type ClaimResult =
  | { kind: 'claimed'; claim: Claim }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' };

// Sorted keys at every level; depth is capped so a hostile, deeply nested body cannot exhaust
// the stack. What lies deeper than 64 levels is left out of the fingerprint: no route takes a
// body deeper than 3, so such a request is refused by validation and its key never stored.
const canonicalJson = configure({ deterministic: true, maximumDepth: 64, circularValue: null, bigint: false });

/**
 * sha256 of the canonical JSON of what the request asks: the workspace it acts in, its path
 * parameters and its body (none = {}). Keys are the person's: the same key and body sent with a
 * token of another workspace is a reuse (409), never a replay of the other workspace's answer.
 */
export function requestFingerprint(workspaceId: string, params: unknown, body: unknown): string {
  return createHash('sha256')
    .update(canonicalJson({ workspace: workspaceId, params: params ?? {}, body: body ?? {} }) ?? '')
    .digest('hex');
}

const keyOf = (r: { accountId: string; route: IdempotentRoute; key: string }) =>
  and(eq(idempotencyKeys.accountId, r.accountId), eq(idempotencyKeys.route, r.route), eq(idempotencyKeys.key, r.key));

/**
 * One attempt to claim a key. A single upsert on the primary key, so two requests can never
 * both claim it, whatever the number of connections or API nodes: it inserts a new key, or
 * takes over one whose 24 h are over or whose claim was abandoned (see CLAIM_LEASE_MS).
 * Otherwise the stored row says what to answer.
 */
export async function claimKey(deps: Pick<Deps, 'db' | 'clock'>, req: KeyedRequest): Promise<ClaimResult> {
  const now = deps.clock.now();
  const abandonedBefore = new Date(now.getTime() - CLAIM_LEASE_MS);
  const claimId = newId();
  const claimed = await deps.db
    .insert(idempotencyKeys)
    .values({ ...req, claimId, claimedAt: now, expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS) })
    .onConflictDoUpdate({
      target: [idempotencyKeys.accountId, idempotencyKeys.route, idempotencyKeys.key],
      set: {
        fingerprint: sql`excluded.fingerprint`,
        claimId: sql`excluded.claim_id`,
        claimedAt: sql`excluded.claimed_at`,
        expiresAt: sql`excluded.expires_at`,
        responseStatus: sql`null`,
        responseBody: sql`null`,
        taskId: sql`null`,
      },
      where: or(
        lte(idempotencyKeys.expiresAt, now),
        and(isNull(idempotencyKeys.responseStatus), lte(idempotencyKeys.claimedAt, abandonedBefore)),
      ),
    })
    .returning({ claimId: idempotencyKeys.claimId });
  if (claimed[0]?.claimId === claimId)
    return { kind: 'claimed', claim: { accountId: req.accountId, route: req.route, key: req.key, claimId } };

  const [row] = await deps.db.select().from(idempotencyKeys).where(keyOf(req));
  // Released between the two statements (the request holding it failed): try again.
  if (!row) return claimKey(deps, req);
  if (row.fingerprint !== req.fingerprint) return { kind: 'mismatch' };
  if (row.responseStatus !== null) return { kind: 'replay', status: row.responseStatus, body: row.responseBody };
  return { kind: 'in_progress' };
}

/**
 * Claims a key, or waits (up to `waitMs` of real time: it waits for another request, not for
 * business time) while a request with the same key and body is in flight, then answers with
 * what that request stored. Still in flight after the wait: `in_progress`.
 */
export async function claimOrWait(
  deps: Pick<Deps, 'db' | 'clock'>,
  req: KeyedRequest,
  waitMs: number,
): Promise<ClaimResult> {
  const deadline = performance.now() + waitMs;
  let pause = 10;
  for (;;) {
    const result = await claimKey(deps, req);
    if (result.kind !== 'in_progress' || performance.now() + pause > deadline) return result;
    await sleep(pause);
    pause = Math.min(pause * 2, 200);
  }
}

/**
 * Stores the answer of a claimed request, in the transaction that made what it answers, so
 * the task and its stored answer commit together. Fails (and so rolls the task back) if the
 * claim was taken over meanwhile: then another request owns the key and only it may create.
 */
export async function completeClaim(
  tx: Db,
  claim: Claim,
  answer: { status: number; body: unknown; taskId: string },
): Promise<void> {
  const done = await tx
    .update(idempotencyKeys)
    .set({ responseStatus: answer.status, responseBody: answer.body, taskId: answer.taskId })
    .where(and(keyOf(claim), eq(idempotencyKeys.claimId, claim.claimId), isNull(idempotencyKeys.responseStatus)))
    .returning({ key: idempotencyKeys.key });
  if (done.length === 0) {
    throw new AppError(
      'conflict',
      `Idempotency-Key "${claim.key}": another request with this key took it over; retry to get its answer`,
    );
  }
}

/** Gives a key back after its request was refused or failed, so the caller may retry with it. */
export async function releaseClaim(deps: Pick<Deps, 'db'>, claim: Claim): Promise<void> {
  await deps.db
    .delete(idempotencyKeys)
    .where(and(keyOf(claim), eq(idempotencyKeys.claimId, claim.claimId), isNull(idempotencyKeys.responseStatus)));
}

/** Deletes keys whose 24 h are over (worker maintenance); returns how many. */
export async function sweepExpiredKeys(deps: Pick<Deps, 'db' | 'clock'>): Promise<number> {
  const gone = await deps.db
    .delete(idempotencyKeys)
    .where(lte(idempotencyKeys.expiresAt, deps.clock.now()))
    .returning({ key: idempotencyKeys.key });
  return gone.length;
}
