import type { FastifyRequest } from 'fastify';
import type { AuthContext } from '../accounts/authenticate.js';
import type { AuditAction } from '../audit/actions.js';
import { type AuditActor, recordAudit } from '../audit/record.js';
import type { Tx } from '../db/client.js';
import type { Deps } from '../deps.js';
import { announceDeliveries } from '../webhooks/deliveries.js';

/**
 * Who acts in a request, as the audit log records them: the account, the token (and the panel
 * session, when it came with one) and the role at the time, the request id, the client address
 * as the trusted-proxy rules read it (request.ip) and the User-Agent.
 */
export function auditActor(request: FastifyRequest, auth: AuthContext | null = request.auth): AuditActor {
  return {
    accountId: auth?.account.id ?? null,
    tokenId: auth?.tokenId ?? null,
    sessionId: auth?.sessionId ?? null,
    role: auth?.role ?? null,
    requestId: request.id,
    clientAddress: request.ip ?? null,
    userAgent: request.headers['user-agent'] ?? null,
  };
}

/** What an act writes to the audit log besides who did it (src/audit/record.ts AuditEntry). */
export interface ActRecord {
  action: AuditAction;
  /** The request's workspace unless given (an act on another: accepting an invitation, making one). */
  workspaceId?: string;
  targets?: Record<string, string>;
  detail?: Record<string, unknown>;
}

/**
 * Runs an act and records it in one transaction: the act gets `deps` whose `db` is the
 * transaction (its own transactions become savepoints), then its record is appended; when the act
 * throws, neither stays. `record` may read the act's result (the id it made). Acts that reach past
 * the database (the queue, a code host, a run's processes) record through their own
 * transaction's hook instead (auditWithin).
 */
export async function audited<T>(
  deps: Deps,
  request: FastifyRequest,
  act: (deps: Deps) => Promise<T>,
  record: ActRecord | ((result: T) => ActRecord | null),
  /** Who acts, when the request's gate did not say (signing in: the token just read). */
  auth: AuthContext | null = request.auth,
): Promise<T> {
  let deliveries: string[] = [];
  const result = await deps.db.transaction(async (tx) => {
    const done = await act({ ...deps, db: tx });
    deliveries = await recordIn(tx, deps, request, typeof record === 'function' ? record(done) : record, auth);
    return done;
  });
  await announceDeliveries(deps, deliveries);
  return result;
}

/** Appends an act's record in the caller's transaction; the webhook deliveries to announce after commit. */
export async function recordIn(
  tx: Tx,
  deps: Pick<Deps, 'clock'>,
  request: FastifyRequest,
  record: ActRecord | null,
  auth: AuthContext | null = request.auth,
): Promise<string[]> {
  if (!record) return [];
  const workspaceId = record.workspaceId ?? auth?.workspace.id;
  if (!workspaceId) return [];
  const { deliveries } = await recordAudit(tx, deps, {
    workspaceId,
    action: record.action,
    actor: auditActor(request, auth),
    targets: record.targets,
    detail: record.detail,
  });
  return deliveries;
}

/**
 * An act's record for a domain function that runs its own transaction and takes a `within` hook
 * (src/db/client.ts Within: creating or continuing a task, a trigger turned on, a task killed):
 * `within` appends the record there, last (after `before`, e.g. the idempotent answer's store),
 * so the act's change and its row commit together or not at all; `announce` wakes the row's
 * webhook deliveries once that has committed. The domain function makes any call to a code host
 * whose answer it stores before that transaction, and side effects (a hook removed, a run's
 * processes signalled) after it: no transaction is held open across them.
 */
export function auditWithin<T = void>(
  deps: Deps,
  request: FastifyRequest,
  record: ActRecord | ((result: T) => ActRecord | null),
  before?: (tx: Tx, result: T) => Promise<void>,
) {
  let deliveries: string[] = [];
  return {
    within: async (tx: Tx, result: T) => {
      await before?.(tx, result);
      deliveries = await recordIn(tx, deps, request, typeof record === 'function' ? record(result) : record);
    },
    announce: () => announceDeliveries(deps, deliveries),
  };
}
