import { type Ctx, type Reply, type Route, ok, text } from '../fake-host/rest.js';
import { ACCESS, type GroupState, type Hook } from '../fake-host/state.js';

/**
 * A group as GitLab's REST shows it (`GET /groups/:id`, by id or URL-encoded full path) and its
 * webhooks (`/groups/:id/hooks`): a group's hooks are its Owners' and Maintainers' (a group access
 * token's bot at that role included); anyone else gets 404, as for a group they cannot see.
 */

const SWITCHES = ['push_events', 'issues_events', 'note_events', 'merge_requests_events', 'pipeline_events'];
const notFound = (): Reply => ({ status: 404, body: { message: '404 Group Not Found' } });

const groupView = (ctx: Ctx, g: GroupState) => ({
  id: g.id,
  name: g.fullPath.split('/').at(-1),
  path: g.fullPath.split('/').at(-1),
  full_path: g.fullPath,
  web_url: `${ctx.urls.webUrl}/groups/${g.fullPath}`,
});

const hookView = (g: GroupState, h: Hook) => ({
  ...{ id: h.id, url: h.url, group_id: g.id, ...h.config },
  ...Object.fromEntries(SWITCHES.map((s) => [s, h.events.includes(s)])),
});

/** The group when the caller is a member (any role: it can see it), else 404. */
const seen = (ctx: Ctx, id: string, level: number, then: (g: GroupState) => Reply): Reply => {
  if (!ctx.login) return { status: 401, body: { message: '401 Unauthorized' } };
  const g = ctx.state.groupOf(id);
  return g && ctx.state.groupLevel(g, ctx.login) >= level ? then(g) : notFound();
};

export const groupRoutes: Route[] = [
  ['GET', /^\/groups\/([^/]+)$/, (ctx, id = '') => seen(ctx, id, ACCESS.guest, (g) => ok(groupView(ctx, g)))],
  [
    'GET',
    /^\/groups\/([^/]+)\/hooks$/,
    (ctx, id = '') => seen(ctx, id, ACCESS.maintainer, (g) => ok(g.hooks.map((h) => hookView(g, h)))),
  ],
  // Push events on unless turned off, every other switch off unless turned on, as for a project's.
  [
    'POST',
    /^\/groups\/([^/]+)\/hooks$/,
    (ctx, id = '') =>
      seen(ctx, id, ACCESS.maintainer, (g) => {
        const url = text(ctx.body.url);
        if (!url) return { status: 400, body: { error: 'url is missing' } };
        const events = SWITCHES.filter((s) => (ctx.body[s] ?? s === 'push_events') === true);
        const config = { enable_ssl_verification: ctx.body.enable_ssl_verification !== false };
        const secret = text(ctx.body.token) ?? '';
        return ok(hookView(g, ctx.state.addGroupHook(g, { url, secret, events, active: true, config })), 201);
      }),
  ],
  [
    'DELETE',
    /^\/groups\/([^/]+)\/hooks\/(\d+)$/,
    (ctx, id = '', hookId = '') =>
      seen(ctx, id, ACCESS.maintainer, (g) => {
        const at = g.hooks.findIndex((h) => String(h.id) === hookId);
        if (at < 0) return notFound();
        g.hooks.splice(at, 1);
        return { status: 204 };
      }),
  ],
];
