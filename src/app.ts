import fastifyCookie from '@fastify/cookie';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps } from './deps.js';
import { newId } from './ids.js';
import { authPlugin } from './http/auth.js';
import { installErrorHandling } from './http/errors.js';
import { registerOpenApi } from './http/openapi.js';
import { adminRoutes } from './http/routes/admin.js';
import { demoRoutes } from './http/routes/demo.js';
import { deployRoutes } from './http/routes/deploy.js';
import { feedbackRoutes } from './http/routes/feedback.js';
import { healthRoutes, registerTaskGauges } from './http/routes/health.js';
import { readyRoutes } from './http/routes/ready.js';
import { keyRoutes } from './http/routes/keys.js';
import { repoSettingsRoutes } from './http/routes/repo-settings.js';
import { triggerRoutes } from './http/routes/triggers.js';
import { meRoutes } from './http/routes/me.js';
import { panelRoutes } from './http/routes/panel.js';
import { taskActionRoutes } from './http/routes/task-actions.js';
import { taskStreamRoutes } from './http/routes/task-stream.js';
import { taskRoutes } from './http/routes/tasks.js';
import { scmRoutes } from './http/routes/scm.js';
import { gitHubAppRoutes } from './http/routes/github-app.js';
import { groupBotRoutes } from './http/routes/group-bots.js';
import { panelSessionRoutes } from './http/routes/panel-sessions.js';
import { sessionRoutes } from './http/routes/session.js';
import { screenshotRoutes, siteRoutes } from './http/routes/sites.js';
import { tokenRoutes } from './http/routes/tokens.js';
import { webhookRoutes } from './http/routes/webhooks.js';
import { ssoRoutes } from './http/routes/sso.js';
import { spendLimitRoutes } from './http/routes/spend-limits.js';
import { workspaceRoutes } from './http/routes/workspaces.js';
import { auditRoutes } from './http/routes/audit.js';
import { trainingRoutes } from './http/routes/training.js';
import { namedSchemas } from './http/components.js';
import { installValidators } from './http/validation.js';
import { installBodyParsing } from './http/bodies.js';
import { recordRoutes } from './http/route-table.js';

const resources = [
  healthRoutes,
  readyRoutes,
  taskRoutes,
  taskActionRoutes,
  taskStreamRoutes,
  screenshotRoutes,
  deployRoutes,
  meRoutes,
  keyRoutes,
  repoSettingsRoutes,
  triggerRoutes,
  scmRoutes,
  gitHubAppRoutes,
  groupBotRoutes,
  tokenRoutes,
  webhookRoutes,
  demoRoutes,
  adminRoutes,
  sessionRoutes,
  panelSessionRoutes,
  feedbackRoutes,
  trainingRoutes,
  workspaceRoutes,
  ssoRoutes,
  spendLimitRoutes,
  auditRoutes,
];

export interface AppOptions {
  /**
   * Fastify's schema controller (its compilers' factories): unset in the service. Tests that build
   * many apps in one process pass one whose response serializers are reused across apps, compiled
   * once from the same schemas (test/support/serializer-cache.ts).
   */
  schemaController?: FastifyServerOptions['schemaController'];
}

/** Builds the HTTP application; it does not listen (tests use app.inject, cli.ts listens). */
export async function buildApp(deps: Deps, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    genReqId: () => newId(),
    bodyLimit: deps.config.bodyLimitBytes,
    // A hop count is valid at run time (proxy-addr); the type declarations omit it.
    trustProxy: deps.config.trustProxy as boolean | string[],
    // A request that reaches a stopping node (on a connection already open) is served, with
    // Connection: close, rather than refused: it is in flight, and GET /ready answers it `draining`.
    return503OnClosing: false,
    ...(options.schemaController ? { schemaController: options.schemaController } : {}),
  }).withTypeProvider<TypeBoxTypeProvider>();

  recordRoutes(app);
  // Bodies are JSON (an empty one with any Content-Type is no body); anything else is 415.
  installBodyParsing(app);
  installValidators(app);
  installErrorHandling(app);
  for (const schema of namedSchemas) app.addSchema(schema);
  await registerOpenApi(app, deps);
  // Before auth: the control panel's session cookie is read in auth's onRequest hook.
  await app.register(fastifyCookie);
  await app.register(authPlugin, { deps });
  registerTaskGauges(deps);

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    deps.metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    deps.metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  // Published sites live at {site_base}/s/<slug>/, outside the API's paths.
  await app.register(siteRoutes, { deps });
  // The control panel (static files) at /app/, also outside the API's paths.
  await app.register(panelRoutes, { deps });

  // /v1 is the documented, stable form; the unprefixed aliases serve the same handlers.
  for (const prefix of ['/v1', '']) {
    await app.register(
      async (scope) => {
        if (prefix === '') {
          scope.addHook('onRoute', (route) => {
            route.schema = { ...route.schema, hide: true };
          });
        }
        for (const resource of resources) await scope.register(resource, { deps });
      },
      { prefix },
    );
  }
  return app;
}
