import type { FastifyInstance, FastifySchema, HTTPMethods } from 'fastify';
import type { AccessLevel } from './auth.js';

/** One route as registered: what a sweep over every route (tests) or a listing needs. */
export interface RouteEntry {
  method: HTTPMethods;
  url: string;
  access: AccessLevel;
  schema: FastifySchema | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route of the app (each method separately), in registration order; filled as routes are added. */
    routeTable: readonly RouteEntry[];
  }
}

/**
 * Records every route as it is registered (aliases, /s/, /app/, the explorer's included), so
 * whatever must hold for every route can be checked against the routes that exist rather
 * than against a hand-kept list. Install before any route.
 */
export function recordRoutes(app: FastifyInstance) {
  const table: RouteEntry[] = [];
  app.decorate('routeTable', table);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    // Read when asked: onRoute hooks of inner scopes (aliases, the explorer) still change these.
    for (const method of methods) {
      table.push({
        method,
        url: route.url,
        get access() {
          return route.config?.access ?? 'any';
        },
        get schema() {
          return route.schema;
        },
      });
    }
  });
}
