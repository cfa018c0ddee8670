import { liveWorkspaceJoin, memberJoin } from '../src/workspaces/workspaces.js';
import { and, eq, isNull, lt, or } from 'drizzle-orm';
import Fastify, { type FastifyInstance } from 'fastify';
import { hashToken, type TokenKind } from '../src/accounts/token-secrets.js';
import { accounts, apiTokens, workspaceMembers, workspaces } from '../src/db/schema.js';
import type { Deps } from '../src/deps.js';
import { AppError } from '../src/errors.js';
import { type AuthContext, callerColumns } from '../src/accounts/authenticate.js';
import { STATUS_OF } from '../src/http/errors.js';
import { logJson } from '../src/http/routes/tasks.js';
import { taskJson } from '../src/tasks/present.js';
import { countTaskPost } from '../src/tasks/rate-limit.js';
import { type CreateTaskInput, createTask, getOwnTask, taskLogsOf } from '../src/tasks/service.js';

type BareDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'queue' | 'log' | 'fetch' | 'secretKey' | 'appTokens'>;

/**
 * The token lookup of src/accounts/authenticate.ts, statement for statement (including the
 * once-a-minute last_used_at write), without its error messages.
 */
async function tokenOwner(deps: BareDeps, header: string | undefined): Promise<AuthContext | undefined> {
  const secret = /^Bearer +(\S+)\s*$/i.exec(header ?? '')?.[1];
  if (!secret) return undefined;
  const rows = await deps.db
    .select(callerColumns)
    .from(apiTokens)
    .innerJoin(accounts, eq(accounts.id, apiTokens.accountId))
    .leftJoin(workspaceMembers, memberJoin(apiTokens.accountId, apiTokens.workspaceId))
    .leftJoin(workspaces, liveWorkspaceJoin)
    .where(eq(apiTokens.tokenHash, hashToken(secret)))
    .limit(1);
  const row = rows[0];
  const now = deps.clock.now();
  if (!row || row.token.revokedAt || (row.token.expiresAt && row.token.expiresAt <= now)) return undefined;
  if (!row.workspace || !row.role) return undefined;
  const last = row.token.lastUsedAt?.getTime() ?? 0;
  if (now.getTime() - last > 60_000) {
    const stale = new Date(now.getTime() - 60_000);
    await deps.db
      .update(apiTokens)
      .set({ lastUsedAt: now })
      .where(and(eq(apiTokens.id, row.token.id), or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, stale))));
  }
  return {
    account: row.account,
    workspace: row.workspace,
    role: row.role,
    scopes: row.token.scopes,
    tokenId: row.token.id,
    tokenKind: row.token.kind as TokenKind,
  };
}

/**
 * The comparison baseline: a minimal Fastify app (no auth plugin, no schemas or validation,
 * no OpenAPI, no metrics, no request ids) whose two routes run the same SQL as emend's
 * handlers, by calling the same service functions (and the same queue), and send the same JSON.
 */
export async function buildBareApp(deps: BareDeps): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });

  app.get<{ Params: { id: string } }>('/v1/tasks/:id', async (request, reply) => {
    const auth = await tokenOwner(deps, request.headers.authorization);
    if (!auth) return reply.status(401).send({ error: 'invalid_token' });
    const task = await getOwnTask(deps, auth.account.id, request.params.id);
    return { task: taskJson(task), logs: (await taskLogsOf(deps, task.id)).map(logJson) };
  });

  app.post<{ Body: CreateTaskInput }>('/v1/tasks', async (request, reply) => {
    const auth = await tokenOwner(deps, request.headers.authorization);
    if (!auth) return reply.status(401).send({ error: 'invalid_token' });
    await countTaskPost(deps, auth.account.id);
    const task = await createTask(deps, auth, request.body);
    await deps.queue.enqueue(task.id);
    return reply.status(201).send(taskJson(task));
  });

  // Refusals (rate limit, concurrency cap) answer with their status, as emend does, so
  // both apps count the same non-2xx responses.
  app.setErrorHandler((err, _request, reply) => {
    if (!(err instanceof AppError)) return reply.status(500).send({ error: 'internal_error', message: String(err) });
    return reply.status(STATUS_OF[err.code]).send({ error: err.code, message: err.message });
  });
  return app;
}
