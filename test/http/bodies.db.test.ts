import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiTokens, tasks } from '../../src/db/schema.js';
import { connectScm } from '../../src/workspaces/scm-connection.js';
import { insertTasks, taskRow } from '../feedback/seed.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { rawClient } from '../support/raw-http.js';
import { type JsonSchema, sampleOf } from '../support/schema-values.js';

/**
 * Request bodies as real clients send them, over a real socket: most HTTP clients and
 * generated SDKs put a Content-Type on every request, body or not.
 */

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await startHarness();
  base = await h.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => h.close());

/** The ways a client says "no body" (or an empty object). */
const NO_BODY: [string, RequestInit][] = [
  ['no body, no content-type', {}],
  ['application/json, empty', { headers: { 'content-type': 'application/json' }, body: '' }],
  [
    'application/json; charset=utf-8, empty',
    { headers: { 'content-type': 'application/json; charset=utf-8' }, body: '' },
  ],
  ['text/plain, empty', { headers: { 'content-type': 'text/plain' }, body: '' }],
  ['multipart/form-data, empty', { headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '' }],
  [
    'application/x-www-form-urlencoded, empty',
    { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' },
  ],
  ['application/octet-stream, empty', { headers: { 'content-type': 'application/octet-stream' }, body: '' }],
  ['application/json, whitespace', { headers: { 'content-type': 'application/json' }, body: ' \r\n' }],
  ['application/json, {}', { headers: { 'content-type': 'application/json' }, body: '{}' }],
  ['application/json, null', { headers: { 'content-type': 'application/json' }, body: 'null' }],
];

async function call(method: string, path: string, auth: Record<string, string>, init: RequestInit) {
  const res = await fetch(`${base}${path}`, {
    ...init,
    method,
    headers: { ...auth, ...(init.headers as Record<string, string>) },
  });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}

async function donePreview(accountId: string) {
  const row = taskRow(accountId, Math.floor(Math.random() * 1000), { mode: 'preview', prUrl: null });
  await insertTasks(h.deps.db, [row]);
  return row.id!;
}

/** The query string a route requires (the repository routes name their repository there), from its schema. */
function requiredQuery(route: { schema?: unknown }): string {
  const query = (route.schema as { querystring?: JsonSchema } | undefined)?.querystring;
  if (!query?.required?.length) return '';
  return `?${new URLSearchParams(Object.entries(sampleOf(query) as Record<string, string>))}`;
}

describe('a POST or DELETE that takes no body', () => {
  it('continue, kill, token creation and revocation work with every way of sending no body', async () => {
    const { auth, account } = await newAccount(h, { plan: 'scale', credits: 100 });
    for (const [label, init] of NO_BODY) {
      const parent = await donePreview(account.id);
      const child = await call('POST', `/v1/tasks/${parent}/continue`, auth, init);
      expect(child.status, `continue, ${label}: ${child.text}`).toBe(201);
      expect(child.json()).toMatchObject({ parent_id: parent, mode: 'pr', status: 'pending' });
      const killed = await call('POST', `/v1/tasks/${child.json().id}/kill`, auth, init);
      expect(killed.status, `kill, ${label}: ${killed.text}`).toBe(200);
      expect(killed.json().task.status).toBe('cancelled');
      const minted = await call('POST', '/v1/me/tokens', auth, init);
      expect(minted.status, `POST /v1/me/tokens, ${label}: ${minted.text}`).toBe(201);
      expect(minted.json()).toMatchObject({ name: '', expires_at: null, token: expect.stringMatching(/^tk_/) });
      const revoked = await call('DELETE', `/v1/me/tokens/${minted.json().id}`, auth, init);
      expect(revoked.status, `DELETE /v1/me/tokens/{id}, ${label}: ${revoked.text}`).toBe(200);
      const [row] = await h.deps.db.select().from(apiTokens).where(eq(apiTokens.id, minted.json().id));
      expect(row!.revokedAt).not.toBeNull();
      // the unprefixed alias behaves the same
      const alias = await call('POST', `/tasks/${parent}/kill`, auth, init);
      expect(alias.status, `alias kill, ${label}: ${alias.text}`).toBe(409);
    }
  });

  it(
    'every body-less POST, PUT, PATCH and DELETE in the route table answers the same to each way of sending no ' +
      'body',
    async () => {
      const { auth } = await newAccount(h, { plan: 'pro', scm: false });
      const routes = h.app.routeTable.filter(
        (r) =>
          ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method) && !(r.schema as { body?: unknown } | undefined)?.body,
      );
      expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(
        expect.arrayContaining([
          'POST /v1/tasks/:id/continue',
          'POST /v1/tasks/:id/kill',
          'DELETE /v1/me/tokens/:id',
          'DELETE /me/scm',
        ]),
      );
      for (const route of routes) {
        // a task, token or memory item that does not exist: the answer must come from the handler (404), not the body
        const path =
          route.url
            .replace(/:host/, 'github')
            // A GitHub App installation's id is the host's number.
            .replace(/installations\/:id/, 'installations/4242')
            .replace(/:id/, '01900000-0000-7000-8000-000000000000')
            .replace(/:delivery_id/, '01900000-0000-7000-8000-000000000001')
            .replace(/:account_id/, '01900000-0000-7000-8000-000000000002')
            .replace(/:invitation_id/, '01900000-0000-7000-8000-000000000003')
            .replace(/:provider/, 'openai')
            .replace(/:name/, 'SWEEP_NAME') + requiredQuery(route);
        const expected = (await call(route.method, path, auth, {})).status;
        expect(expected, `${route.method} ${route.url} with no body`).toBeLessThan(500);
        expect([400, 413, 415], `${route.method} ${route.url} with no body`).not.toContain(expected);
        for (const [label, init] of NO_BODY) {
          const res = await call(route.method, path, auth, init);
          expect(res.status, `${route.method} ${path}, ${label}: ${res.text}`).toBe(expected);
        }
      }
    },
  );

  it('refuses a body it would ignore: 400 for JSON other than {}, 415 for another media type', async () => {
    const { auth, account } = await newAccount(h, { plan: 'scale', credits: 100, scm: false });
    const parent = await donePreview(account.id);
    const json = await call('POST', `/v1/tasks/${parent}/kill`, auth, {
      headers: { 'content-type': 'application/json' },
      body: '{"reason":"stop"}',
    });
    expect(json.status).toBe(400);
    expect(json.json()).toMatchObject({
      error: 'bad_request',
      message: expect.stringMatching(/^body: .*takes no request body/),
    });
    const text = await call('POST', `/v1/tasks/${parent}/continue`, auth, {
      headers: { 'content-type': 'text/plain' },
      body: 'go',
    });
    expect(text.status).toBe(415);
    expect(text.json().error).toBe('unsupported_media_type');
    // neither changed anything
    expect((await h.deps.db.select().from(tasks).where(eq(tasks.parentId, parent))).length).toBe(0);
  });
});

describe('a body whose fields are all optional', () => {
  it('feedback takes {} and no body (nothing changes), with every way of sending no body', async () => {
    const { auth, account } = await newAccount(h, { scm: false });
    const id = await donePreview(account.id);
    for (const [label, init] of NO_BODY) {
      const res = await call('POST', `/v1/tasks/${id}/feedback`, auth, init);
      expect(res.status, `${label}: ${res.text}`).toBe(200);
      expect(res.json()).toMatchObject({ task_id: id, rating: null, history_count: 0 });
    }
    const rated = await call('POST', `/v1/tasks/${id}/feedback`, auth, {
      headers: { 'content-type': 'application/json' },
      body: '{"rating":4}',
    });
    expect(rated.json()).toMatchObject({ rating: 4, history_count: 1 });
    const again = await call('POST', `/v1/tasks/${id}/feedback`, auth, {
      headers: { 'content-type': 'application/json' },
      body: '',
    });
    expect(again.json()).toMatchObject({ rating: 4, history_count: 1 });
  });

  it('an admin PATCH takes {} and no body and answers the account unchanged', async () => {
    const admin = await newAccount(h, { admin: true, scm: false });
    const other = await newAccount(h, { plan: 'pro', credits: 7, scm: false });
    for (const [label, init] of NO_BODY) {
      const res = await call('PATCH', `/v1/admin/accounts/${other.account.id}`, admin.auth, init);
      expect(res.status, `${label}: ${res.text}`).toBe(200);
      expect(res.json()).toMatchObject({ id: other.account.id, plan: 'pro', credits: 7, is_admin: false });
    }
  });

  it('every route whose body has no required field accepts {} and no body', async () => {
    const routes = h.app.routeTable.filter((r) => {
      const body = (r.schema as { body?: { required?: string[] } } | undefined)?.body;
      return body !== undefined && !body.required?.length;
    });
    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining(['POST /v1/me/tokens', 'POST /v1/tasks/:id/feedback', 'PATCH /v1/admin/accounts/:id']),
    );
    const admin = await newAccount(h, { admin: true, scm: false });
    // PUT /v1/me/repos/triggers registers a hook on the sample repository (acme/widgets): the admin
    // account is connected to the fake GitHub as its owner, who may.
    const acme = h.github.addUser('acme');
    if (!h.github.repo('acme', 'widgets')) h.github.createRepo('acme', 'widgets');
    await connectScm(h.deps, admin.account.id, acme.token);
    const id = await donePreview(admin.account.id);
    // A name that does not resolve passes the save-time address check.
    const hook = await call('POST', '/v1/me/webhooks', admin.auth, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://hooks.example.invalid/emend', events: ['task.done'] }),
    });
    // The admin's personal workspace has the account's id (PATCH …/workspaces/{id}/limits names it).
    const idFor = (url: string) =>
      url.includes('/admin/') || url.includes('/workspaces/')
        ? admin.account.id
        : url.includes('/webhooks/')
          ? hook.json().id
          : id;
    for (const route of routes) {
      const path = route.url.replace(/:id/, idFor(route.url)) + requiredQuery(route);
      for (const [label, init] of NO_BODY) {
        const res = await call(route.method, path, admin.auth, init);
        expect(res.status, `${route.method} ${path}, ${label}: ${res.text}`).toBeLessThan(300);
      }
    }
  });

  it('a required field missing from an empty body is named', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', scm: false });
    const res = await call('POST', '/v1/tasks', auth, { headers: { 'content-type': 'application/json' }, body: '' });
    expect(res.status).toBe(400);
    expect(res.json().message).toMatch(/^prompt: /);
  });
});

describe("a library's refusal", () => {
  it('stays a 4xx in our vocabulary: the explorer’s static files refuse a climb out', async () => {
    const client = rawClient(base);
    try {
      for (const path of [
        '/docs/static/%2e%2e/%2e%2e/package.json',
        '/docs/static/%2e%2e%2f%2e%2e%2fpackage.json',
        '/docs/static/..%2f..%2fpackage.json',
      ]) {
        const res = await client.send({ method: 'GET', path });
        expect(res.status, `${path}: ${res.body}`).toBeGreaterThanOrEqual(400);
        expect(res.status, `${path}: ${res.body}`).toBeLessThan(500);
        expect(res.body).not.toContain('"name": "emend"');
        expect(JSON.parse(res.body)).toMatchObject({
          error: expect.stringMatching(/^(forbidden|not_found|bad_request)$/),
          request_id: expect.any(String),
        });
      }
    } finally {
      client.close();
    }
    expect(h.logLines.filter((l) => l.includes('unhandled error'))).toEqual([]);
  });
});
