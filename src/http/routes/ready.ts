import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { ping } from '../../db/client.js';
import type { Deps } from '../../deps.js';
import { described, StringEnum } from '../schema-parts.js';

/** Why a node is not ready: it is stopping (SIGTERM), or its database does not answer. */
export const NOT_READY_REASONS = ['draining', 'database_unreachable'] as const;

/**
 * GET /ready: readiness, for a load balancer or a Kubernetes readiness probe (GET /health is
 * liveness). A node stops being ready once it starts to stop, so traffic moves elsewhere while
 * it finishes its requests, and while its database does not answer.
 */
export const readyRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  // app.close() (SIGTERM) starts with the preClose hooks: from then on this node is draining.
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });

  app.get(
    '/ready',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'getReady',
        summary: 'Readiness: whether this node should be sent traffic',
        description:
          '503 while the node is stopping (it finishes its requests and ends its event streams with a `retry:` hint) ' +
          'or while its database does not answer. GET /health stays the liveness check.',
        security: [],
        response: {
          200: described('the node takes traffic', Type.Object({ ready: Type.Literal(true) })),
          503: described(
            'the node should not be sent traffic now',
            Type.Object({
              ready: Type.Literal(false),
              reason: StringEnum(NOT_READY_REASONS, {
                description: 'draining: the node is stopping; database_unreachable: its database does not answer',
              }),
            }),
          ),
        },
      },
    },
    async (_request, reply) => {
      if (draining) return reply.status(503).send({ ready: false, reason: 'draining' });
      if (!(await ping(deps.db))) return reply.status(503).send({ ready: false, reason: 'database_unreachable' });
      return { ready: true as const };
    },
  );
};
