import { Readable } from 'node:stream';
import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { type AuditQuery, AUDIT_PAGE_MAX, eachAudit, listAudit } from '../../audit/list.js';
import { auditJson } from '../../audit/record.js';
import { timeParameter } from '../../db/time-range.js';
import type { Deps } from '../../deps.js';
import { audited } from '../audit.js';
import { caller, workspaceInPath } from '../auth.js';
import { errorResponses } from '../errors.js';
import { IdParams, Nullable, StringEnum, Timestamp, Uuid, described } from '../schema-parts.js';

// The workspace's audit log (docs/security.md, "Audit log"): read a page, or export it whole.

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });

export const AuditEventRecord = Type.Object(
  {
    seq: Type.Integer({ minimum: 1, description: 'the row’s place in the workspace’s chain, from 1' }),
    at: Timestamp,
    kind: StringEnum(['event', 'summary'] as const, {
      description: 'event: an act or a security event; summary: the rows retention folded (detail says which)',
    }),
    action: Type.String({
      description:
        'what happened (token.minted, member.role_changed, task.killed…); for a refused act, the gate’s act (settings, owner…)',
    }),
    decision: StringEnum(['allowed', 'denied'] as const, { description: 'denied: the gate refused it (403)' }),
    actor: Type.Object({
      account_id: Nullable(Uuid()),
      token_id: Nullable(Uuid({ description: 'the token the request acted through' })),
      session_id: Nullable(Uuid({ description: 'the control-panel session it came with (null: a Bearer token)' })),
      role: Nullable(Type.String({ description: 'the actor’s role in the workspace at the time' })),
    }),
    targets: Type.Record(Type.String(), Type.String(), { description: 'the ids acted on: task_id, account_id…' }),
    request_id: Nullable(Type.String()),
    client_address: Nullable(Type.String({ description: 'as the trusted-proxy rules read it' })),
    user_agent: Nullable(Type.String()),
    detail: Type.Object({}, { additionalProperties: true, description: 'names and states, never a secret’s value' }),
    prev_hash: Sha256,
    hash: Type.String({
      pattern: '^[0-9a-f]{64}$',
      description: 'sha256 of prev_hash and the row’s canonical JSON (emend audit verify checks the chain)',
    }),
  },
  { $id: 'AuditEvent' },
);

export const auditSchemas = [AuditEventRecord];

const Filters = {
  actor: Type.Optional(Uuid({ description: 'rows of this account' })),
  action: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[a-z_:]+(\\.[a-z_]*)*$',
      description: 'one action (token.minted), every one of a family (member.), or a gate act for refusals',
    }),
  ),
  decision: Type.Optional(StringEnum(['allowed', 'denied'] as const)),
  target: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'rows naming this id among their targets (a task, an account, a token, a provider…)',
    }),
  ),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'rows at or after' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'rows before' })),
};

const ListQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: AUDIT_PAGE_MAX, default: 100, description: 'rows per page' }),
  ),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 32, description: 'where the page starts: from the Link header' }),
  ),
  ...Filters,
});

const ExportQuery = Type.Object(Filters);

function queryOf(q: { since?: string; until?: string } & Omit<AuditQuery, 'since' | 'until'>): AuditQuery {
  return {
    ...q,
    since: q.since === undefined ? undefined : timeParameter('since', q.since),
    until: q.until === undefined ? undefined : timeParameter('until', q.until),
  };
}

/** The next page's address, relative to the request's own path (the /v1 alias and proxies keep working). */
function nextLink(url: string, query: Record<string, unknown>, cursor: string): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && k !== 'cursor') params.set(k, String(v));
  params.set('cursor', cursor);
  return `<${url.split('?')[0]}?${params}>; rel="next"`;
}

async function* lines(deps: Deps, workspaceId: string, q: AuditQuery) {
  let chunk = '';
  for await (const row of eachAudit(deps.db, workspaceId, q)) {
    chunk += `${JSON.stringify(auditJson(row))}\n`;
    if (chunk.length > 32 * 1024) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

export const auditRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/workspaces/:id/audit',
    {
      config: { access: 'full' },
      schema: {
        tags: ['workspaces'],
        operationId: 'listAudit',
        summary: 'The workspace’s audit log, newest first, filtered (owner and maintainers)',
        description:
          'A page of rows, newest first (100 unless `limit` says). When more follow, the `Link` header carries the ' +
          'next page (`rel="next"`, the same filters and a `cursor`). Filters combine with AND.',
        params: IdParams,
        querystring: ListQuery,
        response: {
          200: described(
            'rows, newest first; a `Link` header (rel="next") when more follow',
            Type.Array(Type.Ref('AuditEvent')),
          ),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const workspaceId = workspaceInPath(caller(request), request.params.id).id;
      const page = await listAudit(deps.db, workspaceId, queryOf(request.query));
      if (page.next) reply.header('link', nextLink(request.url, request.query, page.next));
      return page.rows.map(auditJson);
    },
  );

  app.get(
    '/workspaces/:id/audit.jsonl',
    {
      config: { access: 'full' },
      schema: {
        tags: ['workspaces'],
        operationId: 'exportAudit',
        summary: 'The workspace’s audit log as JSON Lines, oldest first, filtered (owner and maintainers)',
        params: IdParams,
        querystring: ExportQuery,
        response: {
          200: {
            description: 'the rows, streamed, one per line as GET …/audit shows them; the export itself is a row',
            content: { 'application/x-ndjson': { schema: Type.String({ description: 'one JSON object per line' }) } },
          },
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const workspaceId = workspaceInPath(caller(request), request.params.id).id;
      const q = queryOf(request.query);
      await audited(deps, request, async () => {}, { action: 'audit.exported', detail: { filters: request.query } });
      const date = deps.clock.now().toISOString().slice(0, 10);
      const body = Readable.from(lines(deps, workspaceId, q), { objectMode: false, highWaterMark: 64 * 1024 });
      body.on('error', (err) => request.log.warn({ err }, 'audit export failed mid-stream'));
      return reply
        .header('content-type', 'application/x-ndjson; charset=utf-8')
        .header('content-disposition', `attachment; filename="emend-audit-${date}.jsonl"`)
        .header('cache-control', 'no-store')
        .send(body as unknown as string);
    },
  );
};
