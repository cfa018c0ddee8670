import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest, onSendHookHandler, preValidationHookHandler } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import {
  type Claim,
  type IdempotentRoute,
  IDEMPOTENCY_TTL_MS,
  claimOrWait,
  completeClaim,
  releaseClaim,
  requestFingerprint,
} from '../tasks/idempotency-keys.js';
import type { CreateOptions } from '../tasks/service.js';
import { caller } from './auth.js';
import { taskJson } from '../tasks/present.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const KEY = /^[\x20-\x7e]{1,255}$/;

/** Declared on the routes that take the header, so the OpenAPI document shows it. */
export const IdempotencyHeaders = Type.Object({
  [IDEMPOTENCY_HEADER]: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: '^[\\x20-\\x7e]+$',
      description:
        `1 to 255 printable ASCII characters, unique per request you mean (a UUID is a good key). Sent again within ${IDEMPOTENCY_TTL_MS / 3600_000} h ` +
        'with the same body, the first answer is replayed (header Idempotent-Replayed: true) and nothing is created, charged or counted again; ' +
        'with another body: 409 conflict. A refused request creates nothing and stores nothing: the key may be sent again.',
    }),
  ),
});

/** The claim each request holds, if it carries a key and won it. */
const claims = new WeakMap<FastifyRequest, Claim>();

/** The request's Idempotency-Key, undefined without one, or 400 naming the header. */
function keyOf(request: FastifyRequest): string | undefined {
  const raw = request.raw.rawHeaders;
  let sent = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === IDEMPOTENCY_HEADER) sent++;
  if (sent === 0) return undefined;
  if (sent > 1) throw new AppError('bad_request', 'Idempotency-Key: send the header once');
  const value = request.headers[IDEMPOTENCY_HEADER];
  if (typeof value !== 'string' || !KEY.test(value)) {
    throw new AppError('bad_request', 'Idempotency-Key: must be 1 to 255 printable ASCII characters');
  }
  return value;
}

/**
 * The hook that makes a route idempotent (runs before the body is validated and before the
 * rate limit counts, so a replay counts nothing): claims the key, or replays the answer
 * stored for it, or refuses a reuse with another body.
 */
export function idempotent(
  deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  route: IdempotentRoute,
): preValidationHookHandler {
  return async function claimIdempotencyKey(request: FastifyRequest, reply: FastifyReply) {
    const key = keyOf(request);
    if (key === undefined) return;
    const auth = caller(request);
    const accountId = auth.account.id;
    const fingerprint = requestFingerprint(auth.workspace.id, request.params, request.body);
    const result = await claimOrWait(deps, { accountId, route, key, fingerprint }, deps.config.idempotencyWaitMs);
    switch (result.kind) {
      case 'claimed':
        claims.set(request, result.claim);
        return;
      case 'replay':
        reply.header('idempotent-replayed', 'true');
        reply.status(result.status).send(result.body);
        return reply;
      case 'mismatch':
        throw new AppError(
          'conflict',
          `Idempotency-Key "${key}" was used for a different request in the last 24 h; send a new key for a new request`,
        );
      case 'in_progress':
        throw new AppError(
          'conflict',
          `a request with Idempotency-Key "${key}" is in progress; retry when it has answered`,
          1,
        );
    }
  };
}

/**
 * For a request holding a key: stores its answer (201 and the task as first presented) in
 * the transaction that creates the task, so the two commit together or not at all.
 */
export function storeCreated(request: FastifyRequest): CreateOptions['within'] {
  const claim = claims.get(request);
  if (!claim) return undefined;
  return (tx, task) => completeClaim(tx, claim, { status: 201, body: taskJson(task), taskId: task.id });
}

/**
 * Gives the key back when the request did not succeed (validation, limits, credits, faults):
 * nothing was created, so the caller may fix the request and send it again with the same key.
 * A successful answer was stored with its task; the release then finds nothing to delete.
 */
export function releaseUnlessStored(deps: Pick<Deps, 'db'>): onSendHookHandler {
  return async function releaseIdempotencyKey(request, reply, payload) {
    const claim = claims.get(request);
    if (claim && reply.statusCode >= 400) {
      claims.delete(request);
      // Left behind if the database is gone: the claim's lease then lets the next request take it.
      await releaseClaim(deps, claim).catch((err) => request.log.warn({ err }, 'could not release an idempotency key'));
    }
    return payload;
  };
}
