import { and, eq, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKEN_SCOPES, type TokenScope, type WorkspaceRole } from '../../src/db/access-vocabulary.js';
import {
  apiTokens,
  repoMemory,
  tasks,
  webhookEndpoints,
  workspaceInvitations,
  workspaceMembers,
  workspaces,
} from '../../src/db/schema.js';
import { actOf } from '../../src/http/route-acts.js';
import type { RouteEntry } from '../../src/http/route-table.js';
import { ACTS, type Act, type Actor, authorize, may, roleAtLeast } from '../../src/workspaces/access.js';
import { insertTasks, taskRow } from '../feedback/seed.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { type RawRequest, type RawResponse, inBatches, rawClient } from '../support/raw-http.js';
import { type JsonSchema, sampleOf } from '../support/schema-values.js';

/**
 * Issue 33's roles, swept over every route of the route table under /v1 that is neither public
 * nor the operator's: a caller whose role in the workspace is below the route's act, or whose
 * token lacks the act's scope, is answered 403 `forbidden` with the gate's own sentence; every
 * other caller is let through (never that 403); and a token of one workspace is answered 404
 * `not_found` on every route that names another workspace's resource. The oracle is `may()` on
 * the route's act (src/http/route-acts.ts), so a route given a wrong act, or a handler that
 * checks a role of its own, or a resource looked up outside the token's workspace, fails here.
 */

const REPO = 'https://github.com/acme/widgets';

let h: Harness;
let client: ReturnType<typeof rawClient>;

/** One workspace's resources, by what the path segment before a parameter calls it. */
interface Fixture {
  workspace: string;
  task: string;
  /** A token of the workspace's owner that nobody uses (DELETE /me/tokens/:id aims at it). */
  spareToken: string;
  memory: string;
  webhook: string;
  delivery: string;
  /** A member below the owner whom DELETE …/members/:account_id may remove. */
  member: string;
  /** An invitation not yet accepted. */
  invitation: string;
  /** A control-panel session of the workspace's owner (DELETE /me/sessions/:id aims at it). */
  session: string;
}

interface Caller {
  label: string;
  secret: string;
  /** The person: leaving revokes all of a person's tokens for the workspace. */
  person: string;
  actor: Actor;
}

const T = {} as Fixture;
const U = {} as Fixture;
const callers: Caller[] = [];
/** Workspace T's owner, acting in T with a full token (for the cross-workspace sweep). */
let ownerInT: Caller;
/** The same person's personal token (a third workspace). */
let ownerPersonal: Caller;
let uOwnerId = '';
let tOwnerId = '';

interface Answer {
  status: number;
  json: Record<string, unknown> & { error?: string; message?: string };
  body: string;
}

async function call(secret: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await client.send({
    method,
    path,
    headers: {
      authorization: `Bearer ${secret}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let json = {};
  try {
    json = JSON.parse(res.body);
  } catch {
    /* an empty or non-JSON answer */
  }
  return { status: res.status, json, body: res.body };
}

async function ok(secret: string, method: string, path: string, body?: unknown) {
  const res = await call(secret, method, path, body);
  expect(res.status, `${method} ${path}: ${res.body}`).toBeLessThan(300);
  return res.json;
}

/** A token acting in `workspaceId`, minted by `secret` (the person's token) with POST /v1/me/tokens. */
async function mint(secret: string, workspaceId: string, scopes?: TokenScope[], name = 'sweep') {
  const made = await ok(secret, 'POST', '/v1/me/tokens', { workspace_id: workspaceId, name, scopes });
  return { id: made.id as string, secret: made.token as string };
}

/** Invites with `inviter` (acting in the workspace) and accepts with the invitee's own token. */
async function join(inviter: string, workspaceId: string, inviteeSecret: string, role: WorkspaceRole) {
  const invitation = await ok(inviter, 'POST', `/v1/workspaces/${workspaceId}/invitations`, { role });
  const joined = await ok(inviteeSecret, 'POST', '/v1/invitations/accept', { token: invitation.token });
  expect(joined).toMatchObject({ id: workspaceId, role });
}

/**
 * A team workspace made through the API by `owner`, with a task, a webhook and its delivery, a
 * memory item, a spare token, a pending invitation and a member to remove.
 */
async function teamWorkspace(
  name: string,
  owner: Awaited<ReturnType<typeof newAccount>>,
  spareMember: Awaited<ReturnType<typeof newAccount>>,
  into: Fixture,
  taskMode: 'pr' | 'preview',
) {
  const made = await ok(owner.token, 'POST', '/v1/workspaces', { name });
  into.workspace = made.id as string;
  const full = await mint(owner.token, into.workspace, undefined, 'owner');
  await join(full.secret, into.workspace, spareMember.token, 'member');
  into.member = spareMember.account.id;
  const pending = await ok(full.secret, 'POST', `/v1/workspaces/${into.workspace}/invitations`, {
    role: 'viewer',
    email: 'pending@example.com',
  });
  into.invitation = pending.id as string;
  const task = taskRow(into.workspace, 1, { mode: taskMode, prUrl: null, createdBy: owner.account.id });
  await insertTasks(h.deps.db, [task]);
  into.task = task.id!;
  into.spareToken = (await mint(owner.token, into.workspace, undefined, 'spare')).id;
  const signedIn = await h.app.inject({ method: 'POST', url: '/v1/auth/session', payload: { token: owner.token } });
  expect(signedIn.statusCode, signedIn.body).toBe(200);
  into.session = ((await ok(owner.token, 'GET', '/v1/me/sessions')) as unknown as { id: string }[])[0]!.id;
  // A lesson (the memory item) from feedback; a webhook on a name that does not resolve, and the
  // failed delivery of its ping.
  await ok(full.secret, 'POST', `/v1/tasks/${into.task}/feedback`, { correct: 'no', note: `the ${name} lesson` });
  const memory = await ok(full.secret, 'GET', `/v1/me/memory?repo=${encodeURIComponent(REPO)}`);
  into.memory = (memory.items as { id: string }[])[0]!.id;
  const hook = await ok(full.secret, 'POST', '/v1/me/webhooks', {
    url: 'https://hooks.example.invalid/emend',
    events: ['task.done'],
  });
  into.webhook = hook.id as string;
  into.delivery = (await ok(full.secret, 'POST', `/v1/me/webhooks/${into.webhook}/test`)).id as string;
  return full;
}

beforeAll(async () => {
  h = await startHarness();
  client = rawClient(await h.app.listen({ port: 0, host: '127.0.0.1' }), { maxSockets: 6, timeoutMs: 15_000 });
  const account = () => newAccount(h, { scm: false });
  const [tOwner, maintainer, member, viewer, tSpare, uOwner, uSpare] = await Promise.all(
    Array.from({ length: 7 }, account),
  );
  tOwnerId = tOwner!.account.id;
  uOwnerId = uOwner!.account.id;

  // Workspace T: its owner, a maintainer, a member and a viewer (each joined by invitation and
  // acting through a token minted for T), and tokens narrowed by scopes.
  const ownerT = await teamWorkspace('Team T', tOwner!, tSpare!, T, 'pr');
  const person = (label: string, secret: string, who: string, role: WorkspaceRole, scopes: TokenScope[] | null) =>
    callers.push({ label, secret, person: who, actor: { role, scopes } });
  person('owner', ownerT.secret, tOwnerId, 'owner', null);
  for (const [role, who] of [
    ['maintainer', maintainer!],
    ['member', member!],
    ['viewer', viewer!],
  ] as const) {
    await join(ownerT.secret, T.workspace, who.token, role);
    person(role, (await mint(who.token, T.workspace)).secret, who.account.id, role, null);
  }
  // The owner's tokens narrowed to each scope alone, and to reading and writing tasks.
  const scoped: TokenScope[][] = [...TOKEN_SCOPES.map((s) => [s]), ['tasks:read', 'tasks:write']];
  for (const scopes of scoped)
    person(`owner [${scopes}]`, (await mint(ownerT.secret, T.workspace, scopes)).secret, tOwnerId, 'owner', scopes);
  // Narrow tokens of the others: one within the role, and ones whose scopes the role does not reach.
  for (const [role, who, scopes] of [
    ['maintainer', maintainer!, ['tasks:read', 'settings:write']],
    ['member', member!, ['keys', 'members', 'settings:write']],
    ['viewer', viewer!, ['tasks:read']],
    ['viewer', viewer!, ['tasks:write', 'settings:read']],
  ] as const) {
    const token = await mint(who.token, T.workspace, [...scopes]);
    person(`${role} [${scopes}]`, token.secret, who.account.id, role, [...scopes]);
  }
  ownerInT = callers[0]!;

  // Workspace U, another team, whose maintainer is T's owner: their T token must still find
  // nothing of U's.
  const ownerU = await teamWorkspace('Team U', uOwner!, uSpare!, U, 'preview');
  await join(ownerU.secret, U.workspace, tOwner!.token, 'maintainer');
  ownerPersonal = {
    label: "T's owner, personal",
    secret: tOwner!.token,
    person: tOwnerId,
    actor: { role: 'owner', scopes: null },
  };
}, 120_000);

afterAll(async () => {
  client?.close();
  await h?.close();
});

/** The routes swept: under /v1, neither public nor the operator's. */
const swept = () =>
  h.app.routeTable.filter((r) => r.url.startsWith('/v1/') && r.access !== 'public' && r.access !== 'admin');

/** Parameters that name a thing inside the caller's own workspace (a provider, a secret's or a file's name), not an id. */
const NAME_PARAMS = new Set(['keys:provider', 'secrets:name', 'screenshots:name']);

/** The parameters of a route, each as `segment-before:name`. */
const paramsOf = (route: RouteEntry) =>
  route.url
    .split('/')
    .flatMap((segment, i, all) => (segment.startsWith(':') ? [`${all[i - 1]}:${segment.slice(1)}`] : []));

/** What a parameter names in a workspace's fixture; a parameter the sweep does not know fails it. */
function paramValue(key: string, f: Fixture): string {
  const value: Record<string, string> = {
    'tasks:id': f.task,
    'tokens:id': f.spareToken,
    'memory:id': f.memory,
    'webhooks:id': f.webhook,
    'deliveries:delivery_id': f.delivery,
    'workspaces:id': f.workspace,
    'members:account_id': f.member,
    'invitations:invitation_id': f.invitation,
    'keys:provider': 'openai',
    'secrets:name': 'NPM_TOKEN',
    'screenshots:name': 'desktop.png',
    'apps:host': 'github',
    'installations:id': '4242',
    'sessions:id': f.session,
  };
  const v = value[key];
  if (v === undefined) throw new Error(`the sweep does not know what ${key} names; teach paramValue`);
  return v;
}

/** The route's path with each parameter taken from the fixture `pick` chooses for it. */
function pathOf(route: RouteEntry, pick: (key: string) => Fixture): string {
  const segments = route.url.split('/');
  const path = segments
    .map((segment, i) => {
      if (!segment.startsWith(':')) return segment;
      const key = `${segments[i - 1]}:${segment.slice(1)}`;
      return paramValue(key, pick(key));
    })
    .join('/');
  const query = (route.schema as { querystring?: JsonSchema } | undefined)?.querystring;
  if (!query) return path;
  const values = { ...(sampleOf(query) as Record<string, unknown>) };
  if (query.properties?.repo) values.repo = REPO;
  const qs = Object.entries(values)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  return qs ? `${path}?${qs}` : path;
}

const bodySchemaOf = (route: RouteEntry) => (route.schema as { body?: JsonSchema } | undefined)?.body;

const actOfRoute = (route: RouteEntry): Act => {
  const act = actOf(route.method, route.url);
  if (!act) throw new Error(`${route.method} ${route.url} has no act`);
  return act;
};

/** The gate's sentence for an actor refused an act (authorize's own), or undefined when allowed. */
function refusal(actor: Actor, act: Act): string | undefined {
  try {
    authorize(actor, act);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

interface Case {
  caller: Caller;
  route: RouteEntry;
  req: RawRequest;
}

async function send(c: Case): Promise<RawResponse> {
  return client
    .send(c.req)
    .catch((err: Error) => ({ status: -1, headers: {}, body: `connection failed: ${err.message}`, ms: 0 }));
}

const describeCase = (c: Case, res: RawResponse) =>
  `${c.caller.label}: ${c.req.method} ${c.route.url} → ${res.status}: ${res.body.slice(0, 200)}`;

const errorOf = (res: RawResponse): { error?: string; message?: string } => {
  try {
    return JSON.parse(res.body);
  } catch {
    return {};
  }
};

describe('roles and workspaces over every route of the route table', () => {
  it('the acts keep to the roles of the issue: a viewer may read, only one’s own things are written below member', () => {
    // The sweeps below take the route's act as given; this is what the act of a route may be.
    const lowestRole = (route: RouteEntry) => ACTS[actOfRoute(route)].role;
    const reads = swept().filter((r) => r.method === 'GET' || r.method === 'HEAD');
    const writes = swept().filter((r) => r.method !== 'GET' && r.method !== 'HEAD');
    // Reads above a member: the export (the owner's), the invitations (those who invite), the audit
    // log (the owner's and maintainers') and the start of a code-host connection (the owner's, a GET
    // only because it is a redirect).
    const above = reads.filter((r) => !roleAtLeast('member', lowestRole(r))).map((r) => `${r.method} ${r.url}`);
    expect(above.sort()).toEqual(
      [
        'GET /v1/workspaces/:id/export',
        'HEAD /v1/workspaces/:id/export',
        'GET /v1/workspaces/:id/invitations',
        'HEAD /v1/workspaces/:id/invitations',
        'GET /v1/workspaces/:id/audit',
        'HEAD /v1/workspaces/:id/audit',
        'GET /v1/workspaces/:id/audit.jsonl',
        'HEAD /v1/workspaces/:id/audit.jsonl',
        'GET /v1/auth/scm/start',
        'HEAD /v1/auth/scm/start',
        // The single sign-on setting: the owner's, as its client belongs to whoever may change it.
        'GET /v1/workspaces/:id/sso',
        'HEAD /v1/workspaces/:id/sso',
        // The start of a GitHub App installation: a claim for the workspace, the owner's like a connection.
        'GET /v1/apps/:host/install',
        'HEAD /v1/apps/:host/install',
      ].sort(),
    );
    // Writes a viewer may make: only one's own tokens, workspaces and memberships.
    const byViewer = writes.filter((r) => lowestRole(r) === 'viewer');
    expect(byViewer.map((r) => `${r.method} ${r.url} ${actOfRoute(r)}`).sort()).toEqual(
      [
        'POST /v1/me/tokens account',
        'DELETE /v1/me/tokens/:id account',
        'DELETE /v1/me/sessions/:id account',
        'POST /v1/workspaces account',
        'POST /v1/invitations/accept account',
        'POST /v1/auth/session/workspace account',
        'POST /v1/workspaces/:id/leave account',
      ].sort(),
    );
  });

  it("a token of one workspace finds none of another's resources: 404 on every route that names one, nothing changed", async () => {
    const routes = swept().filter((r) => paramsOf(r).some((p) => !NAME_PARAMS.has(p)));
    expect(routes.length).toBeGreaterThan(25);
    // Every parameter that is an id taken from U, and for routes with two, each one alone from U
    // (T's task with U's delivery, T's workspace with U's member or invitation…).
    const cases: Case[] = [];
    for (const route of routes) {
      const ids = paramsOf(route).filter((p) => !NAME_PARAMS.has(p));
      const picks: ((key: string) => Fixture)[] = [(key) => (ids.includes(key) ? U : T)];
      if (ids.length > 1) for (const one of ids) picks.push((key) => (key === one ? U : T));
      const body = bodySchemaOf(route);
      for (const pick of picks)
        for (const caller of [ownerInT, ownerPersonal])
          cases.push({
            caller,
            route,
            req: {
              method: route.method,
              path: pathOf(route, pick),
              headers: {
                authorization: `Bearer ${caller.secret}`,
                ...(body ? { 'content-type': 'application/json' } : {}),
              },
              // A body the route accepts, so that the answer is the handler's, not validation's.
              body: body ? JSON.stringify(validBody(body)) : undefined,
            },
          });
    }
    const results = await inBatches(cases, 6, async (c) => ({ c, res: await send(c) }));
    const wrong = results.filter(
      ({ c, res }) => res.status !== 404 || (c.req.method !== 'HEAD' && errorOf(res).error !== 'not_found'),
    );
    expect(wrong.map(({ c, res }) => describeCase(c, res))).toEqual([]);

    // U is as it was: its task (a preview, not continued), invitation, members, tokens, memory, webhook.
    const db = h.deps.db;
    const [task] = await db.select().from(tasks).where(eq(tasks.id, U.task));
    expect(task).toMatchObject({ status: 'done', mode: 'preview', workspaceId: U.workspace });
    expect(await db.select().from(tasks).where(eq(tasks.parentId, U.task))).toHaveLength(0);
    const [invitation] = await db.select().from(workspaceInvitations).where(eq(workspaceInvitations.id, U.invitation));
    expect(invitation).toMatchObject({ revokedAt: null, acceptedAt: null });
    const members = await db.select().from(workspaceMembers).where(eq(workspaceMembers.workspaceId, U.workspace));
    expect(Object.fromEntries(members.map((m) => [m.accountId, m.role]))).toEqual({
      [uOwnerId]: 'owner',
      [U.member]: 'member',
      [tOwnerId]: 'maintainer',
    });
    const [workspace] = await db.select().from(workspaces).where(eq(workspaces.id, U.workspace));
    expect(workspace).toMatchObject({ name: 'Team U', deletedAt: null });
    const [spare] = await db.select().from(apiTokens).where(eq(apiTokens.id, U.spareToken));
    expect(spare!.revokedAt).toBeNull();
    expect(await db.select().from(repoMemory).where(eq(repoMemory.id, U.memory))).toHaveLength(1);
    expect(await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, U.webhook))).toHaveLength(1);

    // And the lists of T show nothing of U's.
    const lists = swept().filter((r) => r.method === 'GET' && !r.url.includes(':'));
    for (const route of lists) {
      const res = await send({
        caller: ownerInT,
        route,
        req: { method: 'GET', path: pathOf(route, () => T), headers: { authorization: `Bearer ${ownerInT.secret}` } },
      });
      expect(res.status, `${route.url}: ${res.body.slice(0, 200)}`).toBeLessThan(500);
      // GET /v1/workspaces lists the person's workspaces (U among them), by design; nothing else of U's shows.
      for (const theirs of [U.task, U.memory, U.webhook, U.delivery, U.invitation, U.spareToken, 'Team U lesson'])
        expect(res.body, route.url).not.toContain(theirs);
    }
  }, 120_000);

  it("every role and scoped token against every route: 403 forbidden exactly when may() refuses the route's act", async () => {
    const routes = swept();
    expect(routes.length).toBeGreaterThan(60);
    const cases: Case[] = routes.flatMap((route) =>
      callers.map((caller) => {
        const body = bodySchemaOf(route);
        return {
          caller,
          route,
          req: {
            method: route.method,
            path: pathOf(route, () => T),
            headers: {
              authorization: `Bearer ${caller.secret}`,
              ...(body ? { 'content-type': 'application/json' } : {}),
            },
            // The gate runs before the body is read: a body no route accepts makes an allowed call
            // a harmless 400, and a refused one is still refused.
            body: body ? '"not an object"' : undefined,
          },
        };
      }),
    );
    const is = (method: string, url: string) => (c: Case) => c.route.method === method && c.route.url === url;
    const isLeave = is('POST', '/v1/workspaces/:id/leave');
    const isDeleteWorkspace = is('DELETE', '/v1/workspaces/:id');
    const allowed = (c: Case) => may(c.caller.actor, actOfRoute(c.route));
    const isDeleteTask = is('DELETE', '/v1/tasks/:id');
    // First what changes nothing the callers stand on; then the deletions (of the spare token and
    // member, the invitation, the memory item, the webhook…), the task's last (its lessons go with
    // it); then the refused deletions of T, then everyone leaving, and last the owner deleting T.
    const phases: Case[][] = [
      cases.filter((c) => c.req.method !== 'DELETE' && !isLeave(c)),
      cases.filter((c) => c.req.method === 'DELETE' && !isDeleteWorkspace(c) && !isDeleteTask(c)),
      cases.filter(isDeleteTask),
      cases.filter((c) => isDeleteWorkspace(c) && !allowed(c)),
    ];
    const results: { c: Case; res: RawResponse }[] = [];
    for (const phase of phases) results.push(...(await inBatches(phase, 6, async (c) => ({ c, res: await send(c) }))));

    const complaints: string[] = [];
    for (const { c, res } of results) {
      const expected = refusal(c.caller.actor, actOfRoute(c.route));
      const error = errorOf(res);
      if (expected !== undefined) {
        if (
          res.status !== 403 ||
          (c.req.method !== 'HEAD' && (error.error !== 'forbidden' || error.message !== expected))
        )
          complaints.push(`expected 403 "${expected}": ${describeCase(c, res)}`);
      } else if (res.status === 403 || res.status === 401 || res.status >= 500 || res.status <= 0) {
        complaints.push(`expected to pass the gate: ${describeCase(c, res)}`);
      }
    }
    expect(complaints).toEqual([]);
    // The deletions reached T's real objects: for each, one caller allowed to deleted it.
    for (const url of [
      '/v1/tasks/:id',
      '/v1/me/tokens/:id',
      '/v1/me/memory/:id',
      '/v1/me/webhooks/:id',
      '/v1/workspaces/:id/members/:account_id',
      '/v1/workspaces/:id/invitations/:invitation_id',
    ])
      expect(
        results.filter(({ c, res }) => c.route.method === 'DELETE' && c.route.url === url && res.status < 300),
        url,
      ).not.toHaveLength(0);
    // The sweep saw a refusal of every act but reading one's own (changing one's own is refused to
    // scoped tokens), and the three kinds of refusal.
    const refusedActs = new Set(results.filter(({ res }) => res.status === 403).map(({ c }) => actOfRoute(c.route)));
    expect([...refusedActs].sort()).toEqual(
      ['account', 'audit', 'keys', 'members', 'owner', 'read', 'settings', 'settings:read', 'tasks'].sort(),
    );
    const messages = results.map(({ res }) => errorOf(res).message ?? '');
    expect(messages.some((m) => m.startsWith('this needs the owner role'))).toBe(true);
    expect(messages.some((m) => m.startsWith('this token lacks the tasks:write scope'))).toBe(true);
    expect(messages.some((m) => m.startsWith('this needs a token without scopes'))).toBe(true);

    // Everyone leaves: the owner cannot (409); each other person's first token leaves (204) and
    // takes the person's other tokens for T with it (401 after).
    // A scoped token may not leave (403: changing one's own needs a token without scopes).
    const left = new Set<string>();
    for (const c of cases.filter(isLeave)) {
      const res = await send(c);
      const expected =
        c.caller.actor.role === 'owner'
          ? allowed(c)
            ? 409
            : 403
          : left.has(c.caller.person)
            ? 401
            : allowed(c)
              ? 204
              : 403;
      expect(res.status, describeCase(c, res)).toBe(expected);
      if (res.status === 204) left.add(c.caller.person);
    }
    const members = await h.deps.db
      .select()
      .from(workspaceMembers)
      .where(eq(workspaceMembers.workspaceId, T.workspace));
    expect(members.map((m) => [m.accountId, m.role])).toEqual([[tOwnerId, 'owner']]);
    // And the owner deletes T: the first token allowed to (204); the workspace and its tokens are gone after.
    const deletions = cases.filter((c) => isDeleteWorkspace(c) && allowed(c));
    expect(deletions.map((c) => c.caller.label)).toEqual(['owner', 'owner [workspace]']);
    const first = await send(deletions[0]!);
    expect(first.status, describeCase(deletions[0]!, first)).toBe(204);
    const second = await send(deletions[1]!);
    expect(second.status, describeCase(deletions[1]!, second)).toBe(401);
    const [gone] = await h.deps.db.select().from(workspaces).where(eq(workspaces.id, T.workspace));
    expect(gone!.deletedAt).not.toBeNull();
    // U stood through it all.
    const live = await h.deps.db
      .select()
      .from(apiTokens)
      .where(and(eq(apiTokens.workspaceId, U.workspace), isNull(apiTokens.revokedAt)));
    expect(live.length).toBeGreaterThan(0);
  }, 180_000);
});

/** A body the route's schema accepts, naming U's or nobody's things, for the cross-workspace sweep. */
function validBody(schema: JsonSchema): unknown {
  const sample = sampleOf(schema) as Record<string, unknown>;
  // A role below the owner: a change to owner is refused as such before the member is looked up.
  if ('role' in sample) sample.role = 'viewer';
  return sample;
}
