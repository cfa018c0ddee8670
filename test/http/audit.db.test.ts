import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAudit } from '../../src/audit/verify.js';
import { auditEvents, tasks, webhookDeliveries, webhookEndpoints } from '../../src/db/schema.js';
import { newId } from '../../src/ids.js';
import type { Tx } from '../../src/db/client.js';
import { tamperWithAudit } from '../support/audit-db.js';
import { cookieFrom } from '../support/cookie-jar.js';
import { type Harness, forceStatus, newAccount, startHarness } from '../support/harness.js';

// The audit log (docs/security.md, "Audit log"): acts recorded in their own transaction with who,
// what, on what and from where; refusals recorded; GET …/audit filtered and paged for the owner
// and maintainers; the JSON-lines export; the hash chain that `emend audit verify` checks.

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.github.createRepo('psf', 'requests');
});
afterAll(async () => {
  await h?.close();
});

type Auth = Record<string, string>;
const UA = 'audit-test/1.0';
const call = (auth: Auth, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  h.app.inject({ method, url, headers: { 'user-agent': UA, ...auth }, ...(payload ? { payload } : {}) });

const rowsOf = (workspaceId: string) =>
  h.deps.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, workspaceId)).orderBy(auditEvents.seq);

async function tokenFor(personal: Auth, workspaceId: string): Promise<Auth> {
  const res = await call(personal, 'POST', '/v1/me/tokens', { workspace_id: workspaceId });
  expect(res.statusCode, res.body).toBe(201);
  return { authorization: `Bearer ${res.json().token}` };
}

async function newTeam() {
  const owner = await newAccount(h, { scm: false });
  const created = await call(owner.auth, 'POST', '/v1/workspaces', { name: 'Audited team' });
  expect(created.statusCode, created.body).toBe(201);
  const ws = created.json() as { id: string };
  return { owner, ws, ownerAuth: await tokenFor(owner.auth, ws.id) };
}

async function join(team: Awaited<ReturnType<typeof newTeam>>, role: 'maintainer' | 'member' | 'viewer') {
  const person = await newAccount(h, { scm: false });
  const inv = await call(team.ownerAuth, 'POST', `/v1/workspaces/${team.ws.id}/invitations`, { role });
  expect(inv.statusCode, inv.body).toBe(201);
  const accepted = await call(person.auth, 'POST', '/v1/invitations/accept', { token: inv.json().token });
  expect(accepted.statusCode, accepted.body).toBe(200);
  return { ...person, teamAuth: await tokenFor(person.auth, team.ws.id) };
}

describe('what the log records', () => {
  it('records tokens, keys, secrets (names only) and settings with the actor, request and client, chained', async () => {
    const ada = await newAccount(h, { scm: false });
    const minted = await call(ada.auth, 'POST', '/v1/me/tokens', { name: 'ci', scopes: ['tasks:read'] });
    expect(minted.statusCode).toBe(201);
    const revoked = await call(ada.auth, 'DELETE', `/v1/me/tokens/${minted.json().id}`);
    expect(revoked.statusCode).toBe(200);
    const key = await call(ada.auth, 'POST', '/v1/me/keys', {
      provider: 'openai',
      api_key: 'sk-audit-secret-0123456789',
    });
    expect(key.statusCode, key.body).toBe(201);
    expect((await call(ada.auth, 'DELETE', '/v1/me/keys/openai')).statusCode).toBe(200);
    const repo = 'https://github.com/psf/requests';
    const secret = await call(ada.auth, 'POST', `/v1/me/repos/secrets?repo=${encodeURIComponent(repo)}`, {
      name: 'NPM_TOKEN',
      value: 'npm_supersecretvalue42',
    });
    expect(secret.statusCode, secret.body).toBe(201);

    const rows = await rowsOf(ada.workspace.id);
    expect(rows.map((r) => r.action)).toEqual([
      'token.minted',
      'token.revoked',
      'key.added',
      'key.removed',
      'secret.set',
    ]);
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(rows[0]).toMatchObject({
      decision: 'allowed',
      actorAccountId: ada.account.id,
      actorRole: 'owner',
      actorSessionId: null,
      targets: { token_id: minted.json().id },
      detail: { name: 'ci', scopes: ['tasks:read'] },
      clientAddress: '127.0.0.1',
      userAgent: UA,
    });
    expect(rows[0]!.actorTokenId).toBeTruthy();
    expect(rows[0]!.requestId).toBeTruthy();
    expect(rows[4]).toMatchObject({ targets: { secret: 'NPM_TOKEN' } });
    const all = JSON.stringify(rows);
    for (const value of ['npm_supersecretvalue42', 'sk-audit-secret-0123456789', minted.json().token])
      expect(all).not.toContain(value);
    expect(await verifyAudit(h.deps.db, ada.workspace.id)).toMatchObject({ rows: 5, broken: [] });
  });

  it('records settings, BYOK, webhooks and the code-host connection, never a signing secret or host token', async () => {
    const eve = await newAccount(h, { scm: false });
    expect((await call(eve.auth, 'POST', '/v1/me/settings', { approval_mode: 'manual' })).statusCode).toBe(200);
    expect((await call(eve.auth, 'POST', '/v1/me/byok', { enabled: true })).statusCode).toBe(200);
    const hook = await call(eve.auth, 'POST', '/v1/me/webhooks', {
      url: 'https://hooks.example.com/x',
      events: ['audit.*'],
    });
    expect(hook.statusCode, hook.body).toBe(201);
    expect((await call(eve.auth, 'DELETE', `/v1/me/webhooks/${hook.json().id}`)).statusCode).toBe(204);
    const user = h.github.addUser(`audit-${newId().slice(0, 8)}`);
    expect((await call(eve.auth, 'POST', '/v1/me/scm', { token: user.token })).statusCode).toBe(200);
    expect((await call(eve.auth, 'DELETE', '/v1/me/scm')).statusCode).toBe(200);
    const rows = await rowsOf(eve.workspace.id);
    expect(rows.map((r) => [r.action, r.detail])).toEqual([
      ['settings.changed', { approval_mode: 'manual' }],
      ['settings.changed', { use_byok: true }],
      ['webhook.created', { url: 'https://hooks.example.com/x', events: ['audit.*'] }],
      ['webhook.removed', {}],
      ['scm.connected', { login: user.login }],
      ['scm.disconnected', {}],
    ]);
    const all = JSON.stringify(rows);
    expect(all).not.toContain(hook.json().secret);
    expect(all).not.toContain(user.token);
  });

  it('records a task created, killed and deleted, in the transaction that makes it', async () => {
    const fay = await newAccount(h, { plan: 'pro', credits: 5 });
    const made = await call(fay.auth, 'POST', '/v1/tasks', {
      prompt: 'Fix the crash in Session.send',
      repo_url: 'https://github.com/psf/requests',
    });
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().id as string;
    expect((await call(fay.auth, 'POST', `/v1/tasks/${id}/kill`)).statusCode).toBe(200);
    expect((await call(fay.auth, 'POST', `/v1/tasks/${id}/kill`)).statusCode).toBe(409);
    expect((await call(fay.auth, 'DELETE', `/v1/tasks/${id}`)).statusCode).toBe(204);
    const rows = (await rowsOf(fay.workspace.id)).filter((r) => r.action.startsWith('task.'));
    expect(rows.map((r) => [r.action, r.targets])).toEqual([
      ['task.created', { task_id: id }],
      ['task.killed', { task_id: id }],
      ['task.deleted', { task_id: id }],
    ]);
    expect(rows[0]!.detail).toMatchObject({ task_type: 'fix', repo: 'https://github.com/psf/requests' });
  });

  it('records a finished preview continued, naming the child', async () => {
    const ida = await newAccount(h, { plan: 'free', credits: 1 });
    const made = await call(ida.auth, 'POST', '/v1/tasks', {
      prompt: 'Fix the crash in Session.send',
      repo_url: 'https://github.com/psf/requests',
    });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json().mode).toBe('preview');
    const id = made.json().id as string;
    await forceStatus(h, eq(tasks.id, id), 'done');
    const continued = await call(ida.auth, 'POST', `/v1/tasks/${id}/continue`);
    expect(continued.statusCode, continued.body).toBe(201);
    const rows = (await rowsOf(ida.workspace.id)).filter((r) => r.action === 'task.continued');
    expect(rows.map((r) => r.targets)).toEqual([{ task_id: id, child_id: continued.json().id }]);
  });

  it('records a task approved at its plan gate', async () => {
    const gil = await newAccount(h, { plan: 'pro', credits: 5 });
    const made = await call(gil.auth, 'POST', '/v1/tasks', {
      prompt: 'Fix the crash in Session.send',
      repo_url: 'https://github.com/psf/requests',
      approval_mode: 'manual',
    });
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().id as string;
    await forceStatus(h, eq(tasks.id, id), 'awaiting_plan');
    const approved = await call(gil.auth, 'POST', `/v1/tasks/${id}/approve`, { stage: 'plan' });
    expect(approved.statusCode, approved.body).toBeLessThan(300);
    const rows = (await rowsOf(gil.workspace.id)).filter((r) => r.action === 'task.approved');
    expect(rows.map((r) => [r.action, r.targets.task_id, r.detail])).toEqual([
      ['task.approved', id, expect.anything()],
    ]);
  });

  it('records a panel switching workspace in the workspace it switched to, and the operator’s changes in the changed one', async () => {
    const team = await newTeam();
    const signedIn = await h.app.inject({
      method: 'POST',
      url: '/v1/auth/session',
      headers: { 'user-agent': UA },
      payload: { token: team.owner.token },
    });
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const cookie = cookieFrom(signedIn, 'emend_session');
    const switched = await call({ ...cookie, origin: h.deps.config.baseUrl }, 'POST', '/v1/auth/session/workspace', {
      workspace_id: team.ws.id,
    });
    expect(switched.statusCode, switched.body).toBe(200);
    const switchRow = (await rowsOf(team.ws.id)).find((r) => r.action === 'session.switched');
    expect(switchRow?.targets).toEqual({ from_workspace_id: team.owner.workspace.id });
    expect(switchRow?.actorAccountId).toBe(team.owner.account.id);

    const admin = await newAccount(h, { admin: true, scm: false });
    expect(
      (await call(admin.auth, 'PATCH', `/v1/admin/accounts/${team.owner.account.id}`, { credits: 3 })).statusCode,
    ).toBe(200);
    expect((await call(admin.auth, 'PATCH', `/v1/admin/workspaces/${team.ws.id}`, { plan: 'pro' })).statusCode).toBe(
      200,
    );
    const byAdmin = (await rowsOf(team.ws.id)).find((r) => r.action === 'admin.workspace_changed');
    expect(byAdmin).toMatchObject({ actorAccountId: admin.account.id, detail: { plan: 'pro' } });
    const onAccount = (await rowsOf(team.owner.account.id)).find((r) => r.action === 'admin.account_changed');
    expect(onAccount).toMatchObject({
      actorAccountId: admin.account.id,
      targets: { account_id: team.owner.account.id },
    });

    // An unknown memory item removes nothing and records nothing.
    expect((await call(team.ownerAuth, 'DELETE', `/v1/me/memory/${newId()}`)).statusCode).toBe(404);
    expect((await rowsOf(team.ws.id)).some((r) => r.action === 'memory.removed')).toBe(false);
  });

  it('records a workspace exported, by its owner', async () => {
    const team = await newTeam();
    const exported = await call(team.ownerAuth, 'GET', `/v1/workspaces/${team.ws.id}/export`);
    expect(exported.statusCode, exported.body).toBe(200);
    expect(exported.json().workspace).toMatchObject({ id: team.ws.id });
    const rows = await rowsOf(team.ws.id);
    expect(rows.at(-1)).toMatchObject({
      action: 'workspace.exported',
      actorAccountId: team.owner.account.id,
      actorRole: 'owner',
    });
  });

  it('writes nothing for an act that fails', async () => {
    const bo = await newAccount(h, { scm: false });
    expect((await call(bo.auth, 'DELETE', '/v1/me/keys/openai')).statusCode).toBe(404);
    expect((await call(bo.auth, 'POST', '/v1/invitations/accept', { token: 'inv_nope' })).statusCode).toBe(404);
    expect(await rowsOf(bo.workspace.id)).toEqual([]);
  });

  it('records the team’s acts in the team’s log, and a refused act as denied with the role it had', async () => {
    const team = await newTeam();
    const viewer = await join(team, 'viewer');
    const changed = await call(team.ownerAuth, 'PATCH', `/v1/workspaces/${team.ws.id}/members/${viewer.account.id}`, {
      role: 'member',
    });
    expect(changed.statusCode, changed.body).toBe(200);
    await call(team.ownerAuth, 'PATCH', `/v1/workspaces/${team.ws.id}/members/${viewer.account.id}`, {
      role: 'viewer',
    });
    const refused = await call(viewer.teamAuth, 'POST', '/v1/me/byok', { enabled: true });
    expect(refused.statusCode).toBe(403);
    expect((await call(viewer.teamAuth, 'GET', `/v1/workspaces/${team.ws.id}/audit`)).statusCode).toBe(403);

    const rows = await rowsOf(team.ws.id);
    expect(rows.map((r) => [r.action, r.decision])).toEqual([
      ['workspace.created', 'allowed'],
      ['token.minted', 'allowed'],
      ['member.invited', 'allowed'],
      ['member.joined', 'allowed'],
      ['token.minted', 'allowed'],
      ['member.role_changed', 'allowed'],
      ['member.role_changed', 'allowed'],
      ['settings', 'denied'],
      ['audit', 'denied'],
    ]);
    expect(rows[5]).toMatchObject({
      targets: { account_id: viewer.account.id },
      detail: { from: 'viewer', to: 'member' },
    });
    expect(rows[7]).toMatchObject({
      actorAccountId: viewer.account.id,
      actorRole: 'viewer',
      detail: { route: 'POST /v1/me/byok' },
    });
    expect(JSON.stringify(rows)).not.toMatch(/inv_[A-Za-z0-9]/);
  });

  it('keeps one chain when acts of a workspace run at once', async () => {
    const cy = await newAccount(h, { scm: false });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => call(cy.auth, 'POST', '/v1/me/tokens', { name: `t${i}` })),
    );
    for (const r of results) expect(r.statusCode).toBe(201);
    const rows = await rowsOf(cy.workspace.id);
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(await verifyAudit(h.deps.db, cy.workspace.id)).toMatchObject({ broken: [] });
  });

  it('sends audit.* events to the endpoints that subscribe to them, and only those', async () => {
    const di = await newAccount(h, { scm: false });
    const endpoint = (events: string[]) => ({
      id: newId(),
      workspaceId: di.workspace.id,
      url: 'https://hooks.example.com/in',
      events,
      secretEnc: 'x',
      createdAt: h.clock.now(),
    });
    const audit = endpoint(['audit.*']);
    const tasks = endpoint(['task.done']);
    await h.deps.db.insert(webhookEndpoints).values([audit, tasks]);
    const minted = await call(di.auth, 'POST', '/v1/me/tokens', { name: 'hooked' });
    expect(minted.statusCode).toBe(201);
    const sent = await h.deps.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.workspaceId, di.workspace.id));
    expect(sent.map((d) => [d.endpointId, d.eventType])).toEqual([[audit.id, 'audit.token.minted']]);
    const body = JSON.parse(sent[0]!.payload!);
    expect(body).toMatchObject({ type: 'audit.token.minted', data: { action: 'token.minted', seq: 1 } });
    expect(sent[0]!.payload).not.toContain(minted.json().token);
  });
});

describe('GET /v1/workspaces/{id}/audit', () => {
  it('answers the owner and maintainers, filtered and paged; not members', async () => {
    const team = await newTeam();
    const maintainer = await join(team, 'maintainer');
    const member = await join(team, 'member');
    const url = `/v1/workspaces/${team.ws.id}/audit`;
    expect((await call(member.teamAuth, 'GET', url)).statusCode).toBe(403);
    const all = await call(maintainer.teamAuth, 'GET', url);
    expect(all.statusCode, all.body).toBe(200);
    const rows = all.json() as { seq: number; action: string; actor: { account_id: string } }[];
    expect(rows[0]!.seq).toBeGreaterThan(rows.at(-1)!.seq);
    expect(rows.map((r) => r.action)).toContain('member.joined');

    const joined = (await call(team.ownerAuth, 'GET', `${url}?action=member.joined`)).json() as { actor: object }[];
    expect(joined).toHaveLength(2);
    const family = (await call(team.ownerAuth, 'GET', `${url}?action=member.`)).json() as { action: string }[];
    expect(new Set(family.map((r) => r.action))).toEqual(new Set(['member.invited', 'member.joined']));
    const byActor = (await call(team.ownerAuth, 'GET', `${url}?actor=${member.account.id}`)).json() as {
      action: string;
    }[];
    expect(byActor.map((r) => r.action)).toEqual(['audit', 'token.minted', 'member.joined']);
    const byTarget = (await call(team.ownerAuth, 'GET', `${url}?target=${member.account.id}`)).json() as {
      action: string;
    }[];
    expect(byTarget.map((r) => r.action)).toEqual(['member.joined']);

    const page1 = await call(team.ownerAuth, 'GET', `${url}?limit=2&decision=allowed`);
    expect(page1.json()).toHaveLength(2);
    const next = /<([^>]+)>; rel="next"/.exec(String(page1.headers.link))![1]!;
    const page2 = await call(team.ownerAuth, 'GET', next);
    expect(page2.statusCode).toBe(200);
    expect((page2.json() as { seq: number }[])[0]!.seq).toBeLessThan((page1.json() as { seq: number }[])[1]!.seq);

    const now = h.clock.now().getTime();
    const since = new Date(now + 1000).toISOString();
    expect((await call(team.ownerAuth, 'GET', `${url}?since=${since}`)).json()).toEqual([]);
    const until = new Date(now + 1000).toISOString();
    expect(((await call(team.ownerAuth, 'GET', `${url}?until=${until}`)).json() as unknown[]).length).toBeGreaterThan(
      0,
    );
  });

  it('refuses bad filters with 400 naming the field, and another workspace with 404', async () => {
    const team = await newTeam();
    const url = `/v1/workspaces/${team.ws.id}/audit`;
    for (const [query, field] of [
      ['since=yesterday', 'since'],
      ['until=2026-13-01T00:00:00Z', 'until'],
      ['since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', 'since'],
      ['cursor=abc', 'cursor'],
      ['actor=not-a-uuid', 'actor'],
      ['limit=0', 'limit'],
      ['decision=maybe', 'decision'],
    ] as const) {
      const res = await call(team.ownerAuth, 'GET', `${url}?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toMatchObject({ error: 'bad_request' });
      expect(res.json().message, query).toContain(field);
      expect(res.json().request_id).toBeTruthy();
    }
    const other = await newTeam();
    expect((await call(team.ownerAuth, 'GET', `/v1/workspaces/${other.ws.id}/audit`)).statusCode).toBe(404);
  });

  it('exports JSON lines, oldest first, and records the export', async () => {
    const team = await newTeam();
    const res = await call(team.ownerAuth, 'GET', `/v1/workspaces/${team.ws.id}/audit.jsonl`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/x-ndjson/);
    const lines = res.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { seq: number; action: string });
    expect(lines.map((l) => l.action)).toEqual(['workspace.created', 'token.minted', 'audit.exported']);
    expect(lines.map((l) => l.seq)).toEqual([1, 2, 3]);
  });
});

describe('the hash chain', () => {
  it('finds a row edited in the database and one removed', async () => {
    const ed = await newAccount(h, { scm: false });
    for (const name of ['a', 'b', 'c', 'd']) await call(ed.auth, 'POST', '/v1/me/tokens', { name });
    expect((await verifyAudit(h.deps.db, ed.workspace.id)).broken).toEqual([]);
    const at = (seq: number) => and(eq(auditEvents.workspaceId, ed.workspace.id), eq(auditEvents.seq, seq));
    // The table refuses the edit (test/audit/append-only.db.test.ts); someone who may alter it can
    // switch that off, and the chain is what finds it then.
    const tamper = (edit: (tx: Tx) => Promise<unknown>) => tamperWithAudit(h.deps.db, edit);
    await tamper((tx) => tx.update(auditEvents).set({ detail: sql`jsonb_set(detail, '{name}', '"z"')` }).where(at(2)));
    expect((await verifyAudit(h.deps.db, ed.workspace.id)).broken).toEqual([
      { workspaceId: ed.workspace.id, seq: 2, reason: expect.stringMatching(/edited/) },
    ]);
    await tamper((tx) => tx.update(auditEvents).set({ detail: sql`jsonb_set(detail, '{name}', '"b"')` }).where(at(2)));
    expect((await verifyAudit(h.deps.db, ed.workspace.id)).broken).toEqual([]);
    await tamper((tx) => tx.delete(auditEvents).where(at(3)));
    expect((await verifyAudit(h.deps.db, ed.workspace.id)).broken).toEqual([
      { workspaceId: ed.workspace.id, seq: 4, reason: expect.stringMatching(/row 3 is missing/) },
    ]);
    await tamper((tx) => tx.delete(auditEvents).where(at(1)));
    expect((await verifyAudit(h.deps.db, ed.workspace.id)).broken[0]).toMatchObject({ seq: 2 });
  });
});
