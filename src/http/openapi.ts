import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { stepOutputComponents } from './step-output-schemas.js';

export const OPENAPI_INFO = {
  title: 'emend API',
  version: '1.0.0',
  description: 'Code-change agents: plan, locate, inspect, fix, validate in a sandbox, and open a pull request.',
};

export async function registerOpenApi(app: FastifyInstance, deps: Deps) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: OPENAPI_INFO,
      servers: [{ url: deps.config.baseUrl }],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'tk_... or tk_demo_...' } },
        // Named so clients can type a log record's output by its step (no route returns them alone).
        schemas: stepOutputComponents(),
      },
      security: [{ bearer: [] }],
      tags: [
        { name: 'tasks', description: 'Tasks and their logs' },
        { name: 'account', description: 'Your profile, provider keys and tokens' },
        { name: 'webhooks', description: 'Signed notifications of task events (Standard Webhooks)' },
        { name: 'admin', description: 'Operator endpoints' },
        { name: 'public', description: 'No token needed' },
      ],
    },
    // Shared schemas are published under their $id in components.schemas.
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  // The explorer and its assets are public, like the document it shows.
  await app.register(async (scope) => {
    scope.addHook('onRoute', (route) => {
      route.config = { ...route.config, access: 'public' };
    });
    await scope.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  });
  const hidden = { schema: { hide: true }, config: { access: 'public' as const } };
  app.get('/openapi-public.yaml', hidden, async (_req, reply) =>
    reply.type('application/yaml').send(app.swagger({ yaml: true })),
  );
  app.get('/openapi-public.json', hidden, async () => app.swagger());
}
