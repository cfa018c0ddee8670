import { ACTS } from '../workspaces/access.js';
import type { AccessLevel } from './auth.js';
import { BODY_METHODS } from './bodies.js';
import { actOf } from './route-acts.js';
import { STATE_CHANGING } from './session-cookie.js';

/** What the gates in front of every handler look at: the route as registered. */
export interface GatedRoute {
  method: string;
  url: string;
  access: AccessLevel;
  /** The request parts the route validates (any present: a malformed one is a 400). */
  schema?: { body?: unknown; querystring?: unknown; params?: unknown; headers?: unknown } | undefined;
}

/** Whether the auth gate (src/http/auth.ts) can answer 403 on the route, for some caller. */
function canForbid(route: GatedRoute): boolean {
  // A demo token on a full route; anyone but an admin on the operator's.
  if (route.access === 'full' || route.access === 'admin') return true;
  // A cookie-signed write from another origin.
  if (STATE_CHANGING.has(route.method)) return true;
  const act = actOf(route.method, route.url);
  // A route no act names is refused to everyone; an act above the lowest role, or one a token's scopes narrow, to some.
  if (act === undefined) return true;
  return ACTS[act].role !== 'viewer' || ACTS[act].scope !== null;
}

/**
 * The error statuses the app answers on a route before its handler runs, from the route alone:
 * 400 where it validates a request part or reads a body (malformed JSON, a body it takes none
 * of), 401 where it needs a token, 403 where the auth gate can refuse a caller it knows
 * (a demo or scoped token, a role below the act, the operator's routes, a cookie from another
 * site), 413 and 415 wherever a body is read. The OpenAPI document lists these on every route
 * (src/http/openapi.ts) beside what the handler itself answers, so the two cannot drift.
 */
export function gateRefusals(route: GatedRoute): number[] {
  const statuses = new Set<number>();
  const readsBody = BODY_METHODS.has(route.method);
  const parts = route.schema ?? {};
  const validates = [parts.body, parts.querystring, parts.params, parts.headers].some((part) => part !== undefined);
  if (validates || readsBody) statuses.add(400);
  if (route.access !== 'public') {
    statuses.add(401);
    if (canForbid(route)) statuses.add(403);
  }
  if (readsBody) {
    statuses.add(413);
    statuses.add(415);
  }
  return [...statuses].sort((a, b) => a - b);
}
