import { createHash } from 'node:crypto';

/** The `prev_hash` of a workspace's first row. */
export const GENESIS_HASH = '0'.repeat(64);

/** The fields of an audit row that its hash covers: all of them but the hash itself. */
export interface ChainedFields {
  workspaceId: string;
  seq: number;
  at: Date;
  kind: string;
  action: string;
  decision: string;
  actorAccountId: string | null;
  actorTokenId: string | null;
  actorSessionId: string | null;
  actorRole: string | null;
  targets: Record<string, string>;
  requestId: string | null;
  clientAddress: string | null;
  userAgent: string | null;
  detail: Record<string, unknown>;
  prevHash: string;
}

/** JSON with every object's keys sorted, so the same row always reads the same (jsonb reorders keys). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** sha256 (hex) of the previous row's hash, a newline and the canonical JSON of this row's fields. */
export function rowHash(row: ChainedFields): string {
  // Named one by one: a row read back carries its hash too, which the hash cannot cover.
  const fields = {
    workspace_id: row.workspaceId,
    seq: row.seq,
    at: row.at,
    kind: row.kind,
    action: row.action,
    decision: row.decision,
    actor_account_id: row.actorAccountId,
    actor_token_id: row.actorTokenId,
    actor_session_id: row.actorSessionId,
    actor_role: row.actorRole,
    targets: row.targets,
    request_id: row.requestId,
    client_address: row.clientAddress,
    user_agent: row.userAgent,
    detail: row.detail,
  };
  return createHash('sha256')
    .update(`${row.prevHash}\n${canonicalJson(fields)}`)
    .digest('hex');
}
