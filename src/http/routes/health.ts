import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { count, sql } from 'drizzle-orm';
import { ping } from '../../db/client.js';
import { tasks } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { registerDatabaseGauges } from '../../metrics/registry.js';

export const healthRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/health',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        summary: 'Liveness and database reachability',
        security: [],
        response: {
          200: Type.Object({ ok: Type.Boolean(), ts: Type.Integer({ description: 'epoch milliseconds' }), database: Type.String() }),
          503: Type.Object({ ok: Type.Boolean(), ts: Type.Integer(), database: Type.String() }),
        },
      },
    },
    async (_request, reply) => {
      const ok = await ping(deps.db);
      return reply.status(ok ? 200 : 503).send({ ok, ts: deps.clock.now().getTime(), database: deps.dbKind });
    },
  );

  app.get(
    '/metrics',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        summary: 'Prometheus metrics',
        security: [],
        produces: ['text/plain'],
        response: { 200: Type.String({ description: 'Prometheus text exposition format' }) },
      },
    },
    async (_request, reply) => {
      const body = await deps.metrics.registry.metrics();
      return reply.type(deps.metrics.registry.contentType).send(body);
    },
  );
};

/** Wires the database-backed gauges once per app. */
export function registerTaskGauges(deps: Deps) {
  registerDatabaseGauges(deps.metrics, async () => {
    const rows = await deps.db
      .select({ status: tasks.status, taskType: tasks.taskType, mode: tasks.mode, count: count(), cost: sql<string>`coalesce(sum(${tasks.costUsd}), 0)` })
      .from(tasks)
      .groupBy(tasks.status, tasks.taskType, tasks.mode);
    const queueDepth = await deps.queue.depth().catch(() => 0);
    return { tasks: rows, costUsd: rows.reduce((sum, r) => sum + Number(r.cost), 0), queueDepth };
  });
}
