import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { issueDemoToken } from '../../accounts/demo.js';
import { DEMO_STAGES, DEMO_TOKEN_DAYS, BILLING_PLANS } from '../../billing/billing-plan.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { STEP_NAMES } from '../../step-contract/index.js';
import { errorResponses } from '../errors.js';
import { StringEnum, described } from '../schema-parts.js';

export const demoRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/demo/token',
    {
      config: { access: 'public' },
      schema: {
        tags: ['public'],
        operationId: 'createDemoToken',
        summary: 'Get a demo token: 2 tasks on public repositories, planner to inspector only',
        description:
          'An operator may turn demo tokens off (EMEND_DEMO_TOKENS=off): then 404 `not_found`, and GET /v1/auth/methods says `demo: false`.',
        security: [],
        body: Type.Object(
          { email: Type.String({ format: 'email', maxLength: 254 }) },
          { additionalProperties: false, examples: [{ email: 'ada@example.com' }] },
        ),
        response: {
          201: described(
            'the demo token (its secret is shown this once) and its limits',
            Type.Object({
              token: Type.String(),
              expires_in_days: Type.Integer({ minimum: 1 }),
              scope: StringEnum(['demo'] as const),
              limits: Type.Object({
                max_tasks_per_token: Type.Integer({ minimum: 1 }),
                public_repos_only: Type.Boolean(),
                pipeline_stages: Type.Array(StringEnum(STEP_NAMES)),
              }),
            }),
          ),
          ...errorResponses(400, 404, 429),
        },
      },
    },
    async (request, reply) => {
      // Before the body's email is looked at or an issuance counted: the feature is not here.
      if (!deps.config.demoTokens)
        throw new AppError('not_found', 'demo tokens are turned off on this server (EMEND_DEMO_TOKENS=off)');
      const token = await issueDemoToken(deps, request.body.email, request.ip);
      return reply.status(201).send({
        token,
        expires_in_days: DEMO_TOKEN_DAYS,
        scope: 'demo' as const,
        limits: {
          max_tasks_per_token: BILLING_PLANS.demo.monthly,
          public_repos_only: true,
          pipeline_stages: DEMO_STAGES,
        },
      });
    },
  );
};
