import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPersonalToken } from '../../src/accounts/token-store.js';
import { apiTokens, providerKeys, repoMemory, tasks } from '../../src/db/schema.js';
import type { RouteEntry } from '../../src/http/route-table.js';
import { saveSiteFiles } from '../../src/sites/store.js';
import { insertTasks, taskRow } from '../feedback/seed.js';
import { ensurePanelBuilt } from '../web/build-panel.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { type RawRequest, type RawResponse, inBatches, rawClient } from '../support/raw-http.js';
import {
  HOSTILE_DATE_TIMES,
  type JsonSchema,
  fieldsOf,
  isDateTimeField,
  isStringField,
  sampleOf,
  withValue,
  wrongTypeOf,
} from '../support/schema-values.js';
import { type ScriptedModel, startScriptedModel } from '../support/scripted-model/server.js';

/**
 * Every route the app has (from its route table: /v1 and the unprefixed aliases, /s/, /app/,
 * the explorer), called over a real socket with values generated from the route's own schema.
 * No answer may be a 5xx or take 10 s; a NUL or lone surrogate is a 400 naming the field;
 * another account's resource is a 404; no secret appears in any answer or log line.
 */

const PROVIDER_KEY = 'sk-live-SWEEPSECRET-0123456789abcdef';
const REPO_SECRET = 'npm_SWEEPREPOSECRET_9876543210fedcba';
const HANG_BOUND_MS = 10_000;
const MB = 'x'.repeat(1024 * 1024);
const REPO = 'https://github.com/acme/widgets';
const SLUG = 'sweep-site';

let h: Harness;
let model: ScriptedModel;
let client: ReturnType<typeof rawClient>;
let A: Awaited<ReturnType<typeof newAccount>>;
let B: Awaited<ReturnType<typeof newAccount>>;
const owned = {
  taskId: '',
  scaffoldId: '',
  tokenId: '',
  tokenSecret: '',
  memoryId: '',
  otherAccountId: '',
  webhookId: '',
  deliveryId: '',
  triggerId: '',
};

beforeAll(async () => {
  await ensurePanelBuilt();
  model = await startScriptedModel({ validKeys: [PROVIDER_KEY] });
  h = await startHarness({
    OPENAI_BASE_URL: model.urls.openai,
    ANTHROPIC_BASE_URL: model.urls.anthropic,
    GOOGLE_BASE_URL: model.urls.google,
  });
  client = rawClient(await h.app.listen({ port: 0, host: '127.0.0.1' }), {
    maxSockets: 6,
    timeoutMs: HANG_BOUND_MS + 5_000,
  });

  // Account A owns one of everything; B is another account; C is an account for the admin routes.
  A = await newAccount(h, { plan: 'scale', credits: 100, admin: true });
  B = await newAccount(h, { plan: 'pro', credits: 100 });
  owned.otherAccountId = (await newAccount(h, { scm: false })).account.id;
  const task = taskRow(A.account.id, 1, { mode: 'preview', prUrl: null });
  const scaffold = taskRow(A.account.id, 2, {
    taskType: 'scaffold',
    repoUrl: null,
    repoOwner: null,
    repoName: null,
    prUrl: null,
    siteSlug: SLUG,
    deployedUrl: `http://127.0.0.1/s/${SLUG}/`,
  });
  await insertTasks(h.deps.db, [task, scaffold]);
  owned.taskId = task.id!;
  owned.scaffoldId = scaffold.id!;
  await saveSiteFiles(h.deps, owned.scaffoldId, [
    { path: 'index.html', content: '<!doctype html><title>sweep</title><p>home</p>' },
    { path: 'about/index.html', content: '<!doctype html><title>about</title>' },
  ]);
  const spare = await createPersonalToken(h.deps, { accountId: A.account.id, workspaceId: A.workspace.id }, 'spare');
  owned.tokenId = spare.record.id;
  owned.tokenSecret = spare.secret;
  const as = (who: typeof A) => ({ ...who.auth, 'content-type': 'application/json' });
  const ok = async (req: RawRequest) => {
    const res = await client.send(req);
    expect(res.status, `${req.method} ${req.path}: ${res.body}`).toBeLessThan(300);
    return res;
  };
  await ok({
    method: 'POST',
    path: '/v1/me/keys',
    headers: as(A),
    body: JSON.stringify({ provider: 'openai', api_key: PROVIDER_KEY }),
  });
  await ok({
    method: 'POST',
    path: `/v1/tasks/${owned.taskId}/feedback`,
    headers: as(A),
    body: JSON.stringify({ correct: 'no', note: 'the sweep lesson' }),
  });
  await ok({
    method: 'POST',
    path: `/v1/me/repos/secrets?repo=${encodeURIComponent(REPO)}`,
    headers: as(A),
    body: JSON.stringify({ name: 'NPM_TOKEN', value: REPO_SECRET }),
  });
  const memory = await ok({ method: 'GET', path: `/v1/me/memory?repo=${encodeURIComponent(REPO)}`, headers: A.auth });
  owned.memoryId = JSON.parse(memory.body).items[0].id;
  // A webhook endpoint on a name that does not resolve (so it passes the save-time address check)
  // and the delivery of its ping, which fails: one of each for the sweeps to aim at.
  const hook = await ok({
    method: 'POST',
    path: '/v1/me/webhooks',
    headers: as(A),
    body: JSON.stringify({ url: 'https://hooks.example.invalid/emend', events: ['task.done'] }),
  });
  owned.webhookId = JSON.parse(hook.body).id;
  const ping = await ok({ method: 'POST', path: `/v1/me/webhooks/${owned.webhookId}/test`, headers: A.auth });
  owned.deliveryId = JSON.parse(ping.body).id;
  // Triggers on a repository A owns on the fake GitHub: the receiving route's target.
  h.github.createRepo(A.scm!.login, 'triggered');
  const triggers = await ok({
    method: 'PUT',
    path: `/v1/me/repos/triggers?repo=${encodeURIComponent(`https://github.com/${A.scm!.login}/triggered`)}`,
    headers: as(A),
    body: '{}',
  });
  owned.triggerId = JSON.parse(triggers.body).hook_url.split('/').pop();
}, 180_000);

afterAll(async () => {
  client?.close();
  await h?.close();
  await model?.close();
});

/** What a route's path parameters name for account A; a parameter the sweep does not know fails it. */
function ownerPath(route: RouteEntry): string {
  const segments = route.url.split('/');
  return segments
    .map((segment, i) => {
      const before = segments[i - 1];
      if (segment === '*') {
        if (route.url.startsWith('/s/')) return 'about/index.html';
        return 'index.html';
      }
      if (!segment.startsWith(':')) return segment;
      const name = segment.slice(1);
      const value: Record<string, string | undefined> = {
        'tasks:id': owned.taskId,
        'tokens:id': owned.tokenId,
        'memory:id': owned.memoryId,
        'accounts:id': owned.otherAccountId,
        'webhooks:id': owned.webhookId,
        'deliveries:delivery_id': owned.deliveryId,
        'keys:provider': 'openai',
        'secrets:name': 'NPM_TOKEN',
        's:slug': SLUG,
        'screenshots:name': 'desktop.png',
        'hooks:host': 'github',
        // The harness's GitHub has no app: the app's routes answer 404 for it, as for anyone's.
        'apps:host': 'github',
        'installations:id': '4242',
        ':host:id': owned.triggerId,
        // No group bot has this id: the group hooks' receiving route answers 404, as for a guess.
        'groups:id': owned.triggerId,
        // A's personal workspace: the sweep's DELETE, leave and transfer of it are refused (409), never done.
        'workspaces:id': route.url.includes('/admin/') ? owned.otherAccountId : A.workspace.id,
        'members:account_id': owned.otherAccountId,
        'invitations:invitation_id': owned.otherAccountId,
        // No session has this id: ending it answers 404, as for another person's.
        'sessions:id': owned.otherAccountId,
      };
      const v = value[`${before}:${name}`];
      if (v === undefined)
        throw new Error(`the sweep does not know what :${name} in ${route.url} names; teach ownerPath`);
      return v;
    })
    .join('/');
}

const schemaOf = (route: RouteEntry, part: 'body' | 'querystring' | 'params' | 'headers') =>
  (route.schema as Record<string, JsonSchema | undefined> | undefined)?.[part];

const authFor = (route: RouteEntry, who = A): Record<string, string> => (route.access === 'public' ? {} : who.auth);

const queryString = (values: Record<string, unknown>) =>
  Object.entries(values)
    .map(
      ([k, v]) =>
        `${encodeURIComponent(k)}=${typeof v === 'string' && v.startsWith('%') ? v : encodeURIComponent(String(v))}`,
    )
    .join('&');

interface Case {
  label: string;
  route: RouteEntry;
  req: RawRequest;
  /** Beyond "not 5xx, within 10 s": a check on the answer; returns a complaint or undefined. */
  check?: (res: RawResponse) => string | undefined;
}

/** A 400 bad_request whose message starts with the field's name. */
const namesField = (subject: string) => (res: RawResponse) => {
  let json: { error?: string; message?: string } = {};
  try {
    json = JSON.parse(res.body);
  } catch {
    /* not JSON: reported below */
  }
  return res.status === 400 && json.error === 'bad_request' && json.message?.startsWith(`${subject}:`)
    ? undefined
    : `expected 400 bad_request naming ${subject}`;
};

/** The check for a hostile date-time: out of range when well-formed, else only naming the field. */
const refusesDate = (subject: string, wellFormed: boolean) => (res: RawResponse) => {
  const named = namesField(subject)(res);
  if (named || !wellFormed) return named;
  return JSON.parse(res.body).message === `${subject}: out of range (years 0001 to 9999)`
    ? undefined
    : `expected "${subject}: out of range (years 0001 to 9999)"`;
};

const PATH_ATTACKS = [
  '..',
  '%2e%2e',
  '%2e%2e%2f%2e%2e%2fpackage.json',
  '..%2f..%2f..%2fetc%2fpasswd',
  '../../package.json',
  '%00',
  '%ED%A0%80',
  'x'.repeat(3000),
  encodeURIComponent("'; drop table tasks;--"),
];
const BODY_JUNK = [
  'null',
  '"text"',
  '[]',
  '0',
  '{',
  '{"__proto__":{"is_admin":true}}',
  '{"constructor":{"prototype":{"x":1}}}',
  `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`,
  JSON.stringify({ x: MB }),
];
const MULTIPART = '--sweep\r\ncontent-disposition: form-data; name="prompt"\r\n\r\nfix it\u0000\r\n--sweep--\r\n';
const OTHER_TYPES: [string | undefined, string][] = [
  [undefined, '{"a":1}'],
  ['text/plain', 'hello'],
  ['multipart/form-data; boundary=sweep', MULTIPART],
  ['application/x-www-form-urlencoded', 'prompt=fix%00it&a=1'],
];

/** The hostile requests for one route, all generated from its schema and path. */
function casesFor(route: RouteEntry): Case[] {
  const path = ownerPath(route);
  const auth = authFor(route);
  const bodySchema = schemaOf(route, 'body');
  const querySchema = schemaOf(route, 'querystring');
  const headerSchema = schemaOf(route, 'headers');
  const sampleQuery = querySchema ? (sampleOf(querySchema) as Record<string, unknown>) : {};
  const withQuery = (q: Record<string, unknown>) => (Object.keys(q).length ? `${path}?${queryString(q)}` : path);
  const baseBody = bodySchema ? JSON.stringify(sampleOf(bodySchema)) : undefined;
  const json: Record<string, string> = baseBody === undefined ? {} : { 'content-type': 'application/json' };
  const basePath = withQuery(sampleQuery);
  const out: Case[] = [];
  const add = (label: string, req: Partial<RawRequest>, check?: Case['check']) =>
    out.push({
      label,
      route,
      check,
      req: { method: route.method, path: basePath, headers: { ...auth, ...json }, body: baseBody, ...req },
    });

  add('as documented', {});
  if (route.method === 'HEAD') return out;

  // query strings: junk on every route; each declared parameter with hostile values
  add('junk query', {
    path: `${basePath}${basePath.includes('?') ? '&' : '?'}a=%00&b=%ED%A0%80&__proto__[x]=1&c[]=1&c[]=2&d=${'q'.repeat(4000)}`,
  });
  for (const field of fieldsOf(querySchema ?? {})) {
    const q = (v: unknown) => withQuery({ ...sampleQuery, [field.name]: v });
    add(`query ${field.name} wrong type`, {
      path: q(field.schema.type === 'string' ? 'x'.repeat((field.schema.maxLength ?? 10) + 1) : 'abc'),
    });
    add(`query ${field.name} NUL`, { path: q('%00') }, namesField(`querystring ${field.name}`));
    add(`query ${field.name} lone surrogate`, { path: q('%ED%A0%80') });
    add(`query ${field.name} 1 MB`, { path: q(MB), fresh: true });
    if (!isDateTimeField(field.schema)) continue;
    for (const { value, wellFormed } of HOSTILE_DATE_TIMES)
      add(
        `query ${field.name} date ${value}`,
        { path: q(value) },
        refusesDate(`querystring ${field.name}`, wellFormed),
      );
  }
  for (const field of fieldsOf(headerSchema ?? {})) {
    add(`header ${field.name} wrong type`, { headers: { ...auth, ...json, [field.name]: 'abc' } });
    add(`header ${field.name} 1 MB`, { headers: { ...auth, ...json, [field.name]: MB }, fresh: true });
  }

  // path parameters (and wildcards): traversal, NUL, bad UTF-8, long, SQL
  const segments = route.url.split('/');
  segments.forEach((segment, i) => {
    if (!segment.startsWith(':') && segment !== '*') return;
    for (const attack of PATH_ATTACKS) {
      const attacked = path.split('/');
      // a wildcard is the rest of the path: replace from there on
      const hostile =
        segment === '*'
          ? [...attacked.slice(0, i), attack].join('/')
          : Object.assign([...attacked], { [i]: attack }).join('/');
      add(`path ${segment} = ${attack.slice(0, 40)}`, { path: hostile });
    }
  });

  if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method)) return out;

  // bodies: other media types, empty and not; JSON that is not the schema's
  for (const [type, body] of OTHER_TYPES) {
    const headers = { ...auth, ...(type ? { 'content-type': type } : {}) };
    add(`${type ?? 'no content-type'}, empty`, { headers, body: '' });
    add(`${type ?? 'no content-type'}, not empty`, { headers, body }, (res) =>
      res.status === 415 ? undefined : 'expected 415',
    );
  }
  for (const junk of BODY_JUNK)
    add(`JSON ${junk.slice(0, 30)}`, { headers: { ...auth, 'content-type': 'application/json' }, body: junk });

  // each field of the body: a wrong type, 1 MB, text the database cannot hold, times it cannot hold
  for (const field of fieldsOf(bodySchema ?? {})) {
    const base = sampleOf(bodySchema!);
    const send = (v: unknown) => JSON.stringify(withValue(base, field.path, v));
    const headers = { ...auth, 'content-type': 'application/json' };
    add(`body ${field.name} wrong type`, { headers, body: send(wrongTypeOf(field.schema)) }, namesField(field.name));
    const inArray = field.schema.type === 'array';
    const text = (t: string) => (inArray ? [t] : t);
    const subject = inArray ? `${field.name}.0` : field.name;
    // before the test for text fields: a date-time that may be null is a union, not a string
    if (isDateTimeField(field.schema))
      for (const { value, wellFormed } of HOSTILE_DATE_TIMES)
        add(`body ${field.name} date ${value}`, { headers, body: send(text(value)) }, refusesDate(subject, wellFormed));
    if (!isStringField(field.schema)) continue;
    add(`body ${field.name} NUL`, { headers, body: send(text('fix\u0000it')) }, namesField(subject));
    add(`body ${field.name} lone surrogate`, { headers, body: send(text('fix\ud800it')) }, namesField(subject));
    add(`body ${field.name} lone low surrogate`, { headers, body: send(text('\udc00')) }, namesField(subject));
    add(`body ${field.name} 1 MB`, { headers, body: send(text(MB)) });
  }
  return out;
}

/** Sends the cases; POST /tasks ones one at a time with the clock moved past the rate-limit window. */
async function run(cases: Case[]) {
  const isCreate = (c: Case) => c.route.method === 'POST' && /^(\/v1)?\/tasks$/.test(c.route.url);
  const results = new Map<Case, RawResponse>();
  const send = async (c: Case) => {
    const res = await client
      .send(c.req)
      .catch((err: Error) => ({ status: -1, headers: {}, body: `connection failed: ${err.message}`, ms: 0 }));
    results.set(c, res);
  };
  await inBatches(
    cases.filter((c) => !isCreate(c)),
    6,
    send,
  );
  for (const c of cases.filter(isCreate)) {
    h.clock.advance(61_000);
    await send(c);
  }
  return cases.map((c) => ({ c, res: results.get(c)! }));
}

const describeCase = (c: Case, res: RawResponse) =>
  `${c.req.method} ${c.route.url} [${c.label}] → ${res.status} in ${Math.round(res.ms)} ms: ${res.body.slice(0, 160)}`;

function secretsOf() {
  return [A.token, B.token, owned.tokenSecret, PROVIDER_KEY, REPO_SECRET, A.scm!.token, B.scm!.token];
}

describe('every route, generated from the route table', () => {
  it('knows the routes it must cover', () => {
    const urls = new Set(h.app.routeTable.map((r) => r.url));
    for (const url of [
      '/v1/tasks',
      '/tasks',
      '/v1/tasks/:id/continue',
      '/tasks/:id/feedback',
      '/s/:slug/*',
      '/app/*',
      '/docs/static/*',
      '/v1/admin/accounts/:id',
    ]) {
      expect(urls, url).toContain(url);
    }
    expect(h.app.routeTable.length).toBeGreaterThan(100);
  });

  it("another account's resources are 404 on every route that names one, and stay as they were", async () => {
    const routes = h.app.routeTable.filter((r) => r.url.includes(':') && r.access !== 'public' && r.access !== 'admin');
    expect(routes.length).toBeGreaterThan(20);
    const cases: Case[] = routes.map((route) => {
      const body = schemaOf(route, 'body');
      const query = schemaOf(route, 'querystring');
      const q = query ? `?${queryString(sampleOf(query) as Record<string, unknown>)}` : '';
      return {
        label: "B on A's resource",
        route,
        req: {
          method: route.method,
          path: `${ownerPath(route)}${q}`,
          headers: { ...B.auth, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(sampleOf(body)) : undefined,
        },
      };
    });
    const results = await run(cases);
    const wrong = results.filter(
      ({ c, res }) => res.status !== 404 || (c.req.method !== 'HEAD' && JSON.parse(res.body).error !== 'not_found'),
    );
    expect(wrong.map(({ c, res }) => describeCase(c, res))).toEqual([]);
    // B's calls changed nothing of A's: the task, the spare token, the memory item, the key
    const [task] = await h.deps.db.select().from(tasks).where(eq(tasks.id, owned.taskId));
    expect(task).toMatchObject({ status: 'done', mode: 'preview' });
    expect((await h.deps.db.select().from(tasks).where(eq(tasks.parentId, owned.taskId))).length).toBe(0);
    const [spare] = await h.deps.db.select().from(apiTokens).where(eq(apiTokens.id, owned.tokenId));
    expect(spare!.revokedAt).toBeNull();
    expect(await h.deps.db.select().from(repoMemory).where(eq(repoMemory.id, owned.memoryId))).toHaveLength(1);
    expect(await h.deps.db.select().from(providerKeys).where(eq(providerKeys.workspaceId, A.account.id))).toHaveLength(
      1,
    );
    // and the routes without a parameter show B nothing of A's
    const lists = h.app.routeTable.filter(
      (r) => r.method === 'GET' && !r.url.includes(':') && !r.url.includes('*') && r.access !== 'public',
    );
    const listed = await run(
      lists.map((route) => ({
        label: 'B lists',
        route,
        req: {
          method: 'GET',
          path: route.url.replace(/\/me\/memory$/, `/me/memory?repo=${encodeURIComponent(REPO)}`),
          headers: B.auth,
        },
      })),
    );
    for (const { c, res } of listed) {
      for (const mine of [owned.taskId, owned.tokenId, owned.memoryId, A.account.email, 'the sweep lesson'])
        expect(res.body, describeCase(c, res)).not.toContain(mine);
    }
  });

  it('hostile input on every route: no 5xx, no answer slower than 10 s, NUL and lone surrogates refused naming ' +
    'the field, dates out of range refused naming the field, no secret out', async () => {
    const cases = h.app.routeTable.flatMap(casesFor);
    // The date-time fields are found in the schemas: GET /v1/tasks has two, on both its paths.
    for (const url of ['/v1/tasks', '/tasks'])
      for (const name of ['created_after', 'created_before'])
        expect(cases.filter((c) => c.route.url === url && c.label.startsWith(`query ${name} date `))).toHaveLength(
          HOSTILE_DATE_TIMES.length,
        );
    const results = await run(cases);
    const failures = results.flatMap(({ c, res }) => {
      const complaint =
        res.status >= 500 || res.status <= 0 ? 'a server fault' : res.ms >= HANG_BOUND_MS ? 'too slow' : c.check?.(res);
      return complaint ? [`${complaint}: ${describeCase(c, res)}`] : [];
    });
    expect(failures).toEqual([]);
    expect(results.length).toBeGreaterThan(1000);
    // nothing secret in any answer (headers included) or any log line
    for (const secret of secretsOf()) {
      for (const { c, res } of results)
        expect(JSON.stringify(res.headers) + res.body, describeCase(c, res)).not.toContain(secret);
      for (const line of h.logLines) expect(line).not.toContain(secret);
    }
    // and nothing was logged as a fault of ours
    expect(h.logLines.filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
  }, 180_000);
});
