import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import type { Deps } from '../deps.js';
import { errorResponses } from './errors.js';
import { gateRefusals } from './route-refusals.js';
import { stepOutputComponents } from './step-output-schemas.js';

export const OPENAPI_INFO = {
  title: 'emend API',
  version: '1.0.0',
  description:
    'Code-change agents: plan, locate, inspect, fix, validate in a sandbox, and open a pull request. ' +
    'Each operation lists every status it answers; any may also answer 500 (a fault of ours, logged under the ' +
    'request id) or 503 with Retry-After (the database cannot be reached for a moment).',
};

/**
 * A route's documented responses with the refusals of the gates in front of its handler added
 * (src/http/route-refusals.ts), so a route cannot answer a 401, 403, 400, 413 or 415 its document
 * leaves out. What the route declares itself is kept as written.
 */
function withGateRefusals(schema: FastifySchema | undefined, route: RouteOptions): FastifySchema | undefined {
  const declared = schema?.response;
  if (!schema || schema.hide || typeof declared !== 'object' || declared === null) return schema;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  const missing = [
    ...new Set(
      methods.flatMap((method) =>
        gateRefusals({ method, url: route.url, access: route.config?.access ?? 'any', schema }),
      ),
    ),
  ].filter((status) => !(status in declared));
  return missing.length === 0 ? schema : { ...schema, response: { ...errorResponses(...missing), ...declared } };
}

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
    transform: ({ schema, url, route }) => ({ schema: withGateRefusals(schema, route) ?? schema, url }),
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
