import type { Act } from '../workspaces/access.js';

/**
 * What each authenticated route does in its workspace (src/workspaces/access.ts: the role and
 * token scope an act needs). Keyed by method and path without the /v1 prefix (its aliases share
 * it). Every route that is not public is listed: test/workspaces/route-acts.db.test.ts fails on one
 * missing or one listed that does not exist; test/workspaces/role-sweep.db.test.ts drives every role
 * and scoped token against every route.
 */
export const ROUTE_ACTS: Readonly<Record<string, Act>> = {
  'GET /me': 'self',
  'POST /me/tokens': 'account',
  'GET /me/tokens': 'self',
  'DELETE /me/tokens/:id': 'account',
  'GET /me/sessions': 'self',
  'DELETE /me/sessions/:id': 'account',
  'GET /workspaces/:id/sso': 'owner',
  'PUT /workspaces/:id/sso': 'owner',
  'DELETE /workspaces/:id/sso': 'owner',

  'GET /tasks': 'read',
  'GET /tasks/limits': 'read',
  'GET /tasks/:id': 'read',
  'GET /tasks/:id/logs/stream': 'read',
  'GET /tasks/:id/screenshots/:name': 'read',
  'GET /tasks/:id/feedback': 'read',
  'GET /me/training/summary': 'read',
  'GET /me/training/export.jsonl': 'read',

  'POST /tasks': 'tasks',
  'DELETE /tasks/:id': 'tasks',
  'POST /tasks/:id/kill': 'tasks',
  'POST /tasks/:id/approve': 'tasks',
  'POST /tasks/:id/continue': 'tasks',
  'POST /tasks/:id/deploy-git': 'tasks',
  'POST /tasks/:id/feedback': 'tasks',

  'GET /me/repos': 'settings:read',
  'GET /me/repos/settings': 'settings:read',
  'GET /me/repos/secrets': 'settings:read',
  'GET /me/repos/triggers': 'settings:read',
  'GET /me/memory': 'settings:read',
  'GET /me/keys': 'settings:read',
  'GET /me/webhooks': 'settings:read',
  'GET /me/webhooks/:id/deliveries': 'settings:read',

  'PATCH /me/repos/settings': 'settings',
  'DELETE /me/repos/settings': 'settings',
  'POST /me/repos/secrets': 'settings',
  'DELETE /me/repos/secrets/:name': 'settings',
  'PUT /me/repos/triggers': 'settings',
  'DELETE /me/repos/triggers': 'settings',
  'DELETE /me/memory/:id': 'settings',
  'POST /me/byok': 'settings',
  'POST /me/settings': 'settings',
  'POST /me/webhooks': 'settings',
  'PATCH /me/webhooks/:id': 'settings',
  'DELETE /me/webhooks/:id': 'settings',
  'POST /me/webhooks/:id/test': 'settings',
  'POST /me/webhooks/:id/deliveries/:delivery_id/redeliver': 'settings',

  'POST /me/keys': 'keys',
  'DELETE /me/keys/:provider': 'keys',
  'POST /me/keys/test': 'keys',

  'POST /me/scm': 'owner',
  'DELETE /me/scm': 'owner',
  'GET /auth/scm/start': 'owner',
  'GET /apps/:host/install': 'owner',
  'GET /apps/installations': 'settings:read',
  'POST /me/scm/groups': 'owner',
  'GET /me/scm/groups': 'settings:read',
  'DELETE /me/scm/groups': 'owner',
  'DELETE /apps/:host/installations/:id': 'owner',
  'POST /auth/scm/confirm': 'owner',

  // One's own workspaces: listing them, making one, joining one, switching the panel to one.
  'GET /workspaces': 'self',
  'POST /workspaces': 'account',
  'POST /invitations/accept': 'account',
  'POST /auth/session/workspace': 'account',
  'GET /workspaces/:id': 'read',
  'POST /workspaces/:id/leave': 'account',
  'GET /workspaces/:id/members': 'read',
  'GET /workspaces/:id/limits': 'read',
  'PATCH /workspaces/:id/members/:account_id': 'members',
  'DELETE /workspaces/:id/members/:account_id': 'members',
  'POST /workspaces/:id/members/:account_id/sign-out': 'owner',
  'POST /workspaces/:id/invitations': 'members',
  'GET /workspaces/:id/invitations': 'members',
  'DELETE /workspaces/:id/invitations/:invitation_id': 'members',
  'PATCH /workspaces/:id': 'owner',
  'PATCH /workspaces/:id/limits': 'owner',
  'DELETE /workspaces/:id': 'owner',
  'GET /workspaces/:id/export': 'owner',
  'POST /workspaces/:id/transfer': 'owner',
  'GET /workspaces/:id/audit': 'audit',
  'GET /workspaces/:id/audit.jsonl': 'audit',

  // The operator's: access 'admin' decides; the workspace plays no part.
  'GET /admin/accounts': 'self',
  'GET /apps/:host/manifest': 'self',
  'PATCH /admin/accounts/:id': 'self',
  'GET /admin/workspaces': 'self',
  'PATCH /admin/workspaces/:id': 'self',
};

/** The act of a route as registered (`/v1/...` or its alias), or undefined when none is listed. */
export function actOf(method: string, url: string): Act | undefined {
  const path = url.startsWith('/v1/') ? url.slice(3) : url;
  // HEAD is the GET route's (Fastify adds one to every GET).
  return ROUTE_ACTS[`${method === 'HEAD' ? 'GET' : method} ${path}`];
}
