import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { issueDemoToken } from '../../accounts/demo.js';
import { DEMO_STAGES, DEMO_TOKEN_DAYS, PLANS } from '../../accounts/plans.js';
import type { Deps } from '../../deps.js';
import { errorResponses } from '../schemas.js';

export const demoRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/demo/token',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        summary: 'Get a demo token: 2 tasks on public repositories, planner to inspector only',
        security: [],
        body: Type.Object({ email: Type.String({ format: 'email', maxLength: 254 }) }, { additionalProperties: false }),
        response: {
          201: Type.Object({
            token: Type.String(),
            expires_in_days: Type.Integer(),
            scope: Type.Literal('demo'),
            limits: Type.Object({
              max_tasks_per_token: Type.Integer(),
              public_repos_only: Type.Boolean(),
              pipeline_stages: Type.Array(Type.String()),
            }),
          }),
          ...errorResponses(400, 429),
        },
      },
    },
    async (request, reply) => {
      const token = await issueDemoToken(deps, request.body.email, request.ip);
      return reply.status(201).send({
        token,
        expires_in_days: DEMO_TOKEN_DAYS,
        scope: 'demo' as const,
        limits: { max_tasks_per_token: PLANS.demo.monthly, public_repos_only: true, pipeline_stages: DEMO_STAGES },
      });
    },
  );
};
