import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_SCOPES, WORKSPACE_ROLES } from '../../src/db/access-vocabulary.js';
import { actOf } from '../../src/http/route-acts.js';
import type { RouteEntry } from '../../src/http/route-table.js';
import { may } from '../../src/workspaces/access.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { type JsonSchema, sampleOf } from '../support/schema-values.js';

/**
 * Issue 42: every operation of the OpenAPI document lists every status its route can answer.
 * The refusals of the gates in front of every handler follow from the route table alone, written
 * out here apart from the code that documents them: 401 on every route that needs a token; 403
 * where the auth gate can refuse some caller (a full or admin route, a write a panel cookie from
 * another site makes, an act that some role or token scope does not meet — may() is the oracle);
 * 400 where a request part is validated or a body read; 413 and 415 wherever a body is read.
 * Then every route is called by callers the gates treat differently, and each answer must be one
 * its operation documents.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

interface Operation {
  responses: Record<string, unknown>;
}
type Doc = { paths: Record<string, Record<string, Operation>> };

const REPO = 'https://github.com/acme/widgets';
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const partOf = (route: RouteEntry, part: 'body' | 'querystring' | 'params') =>
  (route.schema as Record<string, JsonSchema | undefined> | undefined)?.[part];

/** The routes the document shows: under /v1, not hidden, HEAD apart (it is its GET's). */
function documented(): RouteEntry[] {
  return h.app.routeTable.filter(
    (r) => r.url.startsWith('/v1/') && r.method !== 'HEAD' && !(r.schema as { hide?: boolean } | undefined)?.hide,
  );
}

function operationOf(route: RouteEntry): Operation | undefined {
  const doc = h.app.swagger() as unknown as Doc;
  return doc.paths[route.url.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()];
}

/** Some role and token in the workspace is refused the route's act. */
function someoneRefused(route: RouteEntry): boolean {
  const act = actOf(route.method, route.url);
  if (act === undefined) return true;
  const tokens = [null, [], ...TOKEN_SCOPES.map((s) => [s])];
  return WORKSPACE_ROLES.some((role) => tokens.some((scopes) => !may({ role, scopes }, act)));
}

function impliedRefusals(route: RouteEntry): number[] {
  const out: number[] = [];
  const reads = WRITES.has(route.method);
  if (reads || partOf(route, 'body') || partOf(route, 'querystring') || partOf(route, 'params')) out.push(400);
  if (route.access !== 'public') {
    out.push(401);
    if (route.access === 'full' || route.access === 'admin' || WRITES.has(route.method) || someoneRefused(route))
      out.push(403);
  }
  if (reads) out.push(413, 415);
  return out;
}

function pathOf(route: RouteEntry): string {
  const path = route.url.replace(/:(\w+)/g, '01900000-0000-7000-8000-000000000000');
  const query = partOf(route, 'querystring');
  if (!query) return path;
  const values = { ...(sampleOf(query) as Record<string, unknown>) };
  if (query.properties?.repo) values.repo = REPO;
  const qs = new URLSearchParams(Object.entries(values).map(([k, v]) => [k, String(v)])).toString();
  return qs ? `${path}?${qs}` : path;
}

describe('the OpenAPI document and the route table', () => {
  it("lists on every operation the refusals the route table implies (the 403 of the task routes' acts among them)", () => {
    const routes = documented();
    expect(routes.length).toBeGreaterThan(60);
    const missing = routes.flatMap((route) => {
      const op = operationOf(route);
      if (!op) return [`${route.method} ${route.url}: not documented`];
      const absent = impliedRefusals(route).filter((s) => !(String(s) in op.responses));
      return absent.length ? [`${route.method} ${route.url}: ${absent.join(', ')}`] : [];
    });
    expect(missing).toEqual([]);
    // The eleven: their act is read or tasks, which a scoped token can lack.
    for (const [method, url] of [
      ['GET', '/v1/tasks'],
      ['GET', '/v1/tasks/limits'],
      ['GET', '/v1/tasks/:id'],
      ['GET', '/v1/tasks/:id/logs/stream'],
      ['GET', '/v1/tasks/:id/feedback'],
      ['POST', '/v1/tasks'],
      ['DELETE', '/v1/tasks/:id'],
      ['POST', '/v1/tasks/:id/kill'],
      ['POST', '/v1/tasks/:id/approve'],
      ['POST', '/v1/tasks/:id/continue'],
      ['POST', '/v1/tasks/:id/feedback'],
    ] as const) {
      const route = routes.find((r) => r.method === method && r.url === url)!;
      expect(operationOf(route)?.responses, `${method} ${url}`).toHaveProperty('403');
    }
    // A route no gate refuses keeps a short list: reading one's own profile.
    expect(Object.keys(operationOf(routes.find((r) => r.method === 'GET' && r.url === '/v1/me')!)!.responses)).toEqual([
      '200',
      '401',
    ]);
  });

  it('answers, to callers the gates treat differently, only statuses its document lists', async () => {
    const owner = await newAccount(h, { plan: 'pro', scm: false });
    const scoped = await h.app.inject({
      method: 'POST',
      url: '/v1/me/tokens',
      headers: owner.auth,
      payload: { name: 'narrow', scopes: ['tasks:read'] },
    });
    expect(scoped.statusCode, scoped.body).toBe(201);
    const demo = await h.app.inject({ method: 'POST', url: '/v1/demo/token', payload: { email: 'gate@example.com' } });
    expect(demo.statusCode, demo.body).toBe(201);
    const callers: Record<string, Record<string, string>> = {
      nobody: {},
      demo: { authorization: `Bearer ${demo.json().token}` },
      'tasks:read token': { authorization: `Bearer ${scoped.json().token}` },
    };
    const seen = new Set<string>();
    const undocumented: string[] = [];
    const check = (route: RouteEntry, who: string, status: number) => {
      seen.add(`${status}`);
      if (!(String(status) in (operationOf(route)?.responses ?? {})))
        undocumented.push(`${route.method} ${route.url} as ${who}: ${status}`);
    };
    for (const route of documented()) {
      const reads = WRITES.has(route.method);
      for (const [who, headers] of Object.entries(callers)) {
        // A body no route accepts: a caller the gate lets through is answered 400 before any handler.
        const res = await h.app.inject({
          method: route.method as 'GET',
          url: pathOf(route),
          headers: { ...headers, ...(reads ? { 'content-type': 'application/json' } : {}) },
          ...(reads ? { payload: '"not an object"' } : {}),
        });
        check(route, who, res.statusCode);
      }
      if (reads) {
        // The owner's full token past the gate, with a body that is not JSON: refused before any handler.
        const res = await h.app.inject({
          method: route.method as 'POST',
          url: pathOf(route),
          headers: { ...owner.auth, 'content-type': 'text/plain' },
          payload: 'not json',
        });
        check(route, 'owner, text/plain', res.statusCode);
      }
    }
    expect(undocumented).toEqual([]);
    for (const status of ['400', '401', '403', '404', '415']) expect(seen, status).toContain(status);
  }, 120_000);
});
