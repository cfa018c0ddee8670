import { and, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, repoTriggers, scmConnections, tasks, workspaceMembers, workspaces } from '../../src/db/schema.js';
import { updateOutdatedHooks } from '../../src/triggers/hook-events.js';
import { failAuditOf } from '../support/audit-db.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

// An act and its audit row commit together (docs/security.md, "The audit log"), also where the act
// reaches a code host or a run's processes: with the database refusing the row of one action, the
// act answers 500 and its change is not there (nor any hook it made on the host); without, both are.

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ EMEND_BASE_URL: 'https://emend.example' });
  h.github.createRepo('psf', 'requests');
});
afterAll(async () => {
  await h?.close();
});

/** Drops the test's refusal even when an expectation failed before the test dropped it. */
let allow: (() => Promise<void>) | undefined;
afterEach(async () => {
  await allow?.();
  allow = undefined;
});
async function refuse(action: string) {
  allow = await failAuditOf(h.deps.db, action);
}
async function permit() {
  await allow?.();
  allow = undefined;
}

type Auth = Record<string, string>;
const call = (auth: Auth, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  h.app.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) });

const actionsOf = async (workspaceId: string) =>
  (await h.deps.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, workspaceId))).map((r) => r.action);

async function newTeam() {
  const owner = await newAccount(h, { scm: false });
  const created = await call(owner.auth, 'POST', '/v1/workspaces', { name: 'Atomic team' });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().id as string;
  const token = await call(owner.auth, 'POST', '/v1/me/tokens', { workspace_id: id });
  expect(token.statusCode, token.body).toBe(201);
  return { owner, id, auth: { authorization: `Bearer ${token.json().token}` } };
}

/** An account connected to the fake GitHub, admin of a repository there (triggers may hook it). */
async function repoOwner(name: string) {
  const a = await newAccount(h, { plan: 'pro', credits: 5 });
  h.github.createRepo(a.scm!.login, name);
  return { ...a, login: a.scm!.login, repo: `https://github.com/${a.scm!.login}/${name}` };
}

describe('an act and its audit row commit together', () => {
  it('kill: a refused row leaves the task running and its credit held; then both stay', async () => {
    const fay = await newAccount(h, { plan: 'pro', credits: 5 });
    const made = await call(fay.auth, 'POST', '/v1/tasks', {
      prompt: 'Fix the crash in Session.send',
      repo_url: 'https://github.com/psf/requests',
    });
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().id as string;
    const task = async () => (await h.deps.db.select().from(tasks).where(eq(tasks.id, id)))[0]!;
    const before = await task();
    expect(before.creditHeld).toBe(true);

    await refuse('task.killed');
    expect((await call(fay.auth, 'POST', `/v1/tasks/${id}/kill`)).statusCode).toBe(500);
    expect(await task()).toMatchObject({ status: before.status, creditHeld: true, finishedAt: null });
    expect(await actionsOf(fay.workspace.id)).not.toContain('task.killed');

    await permit();
    const killed = await call(fay.auth, 'POST', `/v1/tasks/${id}/kill`);
    expect(killed.statusCode, killed.body).toBe(200);
    expect(await task()).toMatchObject({ status: 'cancelled', creditHeld: false });
    expect(await actionsOf(fay.workspace.id)).toContain('task.killed');
  });

  it('triggers: a refused row leaves no trigger and no hook on the host, a change unchanged, a removal undone', async () => {
    const o = await repoOwner('atomic-triggers');
    const url = `/v1/me/repos/triggers?repo=${encodeURIComponent(o.repo)}`;
    const triggers = () => h.deps.db.select().from(repoTriggers).where(eq(repoTriggers.workspaceId, o.workspace.id));

    await refuse('triggers.changed');
    expect((await call(o.auth, 'PUT', url, { mention: '@fixbot' })).statusCode).toBe(500);
    expect(await triggers()).toEqual([]);
    // The hook registered before the row was stored is removed again.
    expect(h.github.hooks(o.login, 'atomic-triggers')).toEqual([]);
    expect(await actionsOf(o.workspace.id)).not.toContain('triggers.changed');

    await permit();
    const on = await call(o.auth, 'PUT', url, { mention: '@fixbot' });
    expect(on.statusCode, on.body).toBe(201);
    expect(await triggers()).toHaveLength(1);
    expect(h.github.hooks(o.login, 'atomic-triggers')).toHaveLength(1);

    await refuse('triggers.changed');
    expect((await call(o.auth, 'PUT', url, { label: 'autofix' })).statusCode).toBe(500);
    expect((await triggers())[0]).toMatchObject({ mention: '@fixbot', label: 'emend' });
    await permit();

    await refuse('triggers.removed');
    expect((await call(o.auth, 'DELETE', url)).statusCode).toBe(500);
    // The row stays, and so does its hook: the host is called only once the removal has committed.
    expect(await triggers()).toHaveLength(1);
    expect(h.github.hooks(o.login, 'atomic-triggers')).toHaveLength(1);
    await permit();
    expect((await call(o.auth, 'DELETE', url)).json()).toEqual({ deleted: true });
    expect(await triggers()).toEqual([]);
    expect(h.github.hooks(o.login, 'atomic-triggers')).toEqual([]);
    expect(await actionsOf(o.workspace.id)).toEqual(['triggers.changed', 'triggers.removed']);
  });

  it("an old hook's events (the workers' sweep): a refused row leaves them unrecorded, so the next pass asks again; then both stay", async () => {
    const o = await repoOwner('atomic-old-hook');
    const url = `/v1/me/repos/triggers?repo=${encodeURIComponent(o.repo)}`;
    expect((await call(o.auth, 'PUT', url)).statusCode).toBe(201);
    const [made] = await h.deps.db.select().from(repoTriggers).where(eq(repoTriggers.workspaceId, o.workspace.id));
    // As a hook made before CI follow-ups: none of the checks' events, none recorded.
    const [hook] = h.github.hooks(o.login, 'atomic-old-hook');
    h.github.setHookEvents(o.login, 'atomic-old-hook', hook!.id, ['issue_comment', 'issues']);
    await h.deps.db.update(repoTriggers).set({ hookEvents: null }).where(eq(repoTriggers.id, made!.id));
    const recorded = async () =>
      (await h.deps.db.select().from(repoTriggers).where(eq(repoTriggers.id, made!.id)))[0]!.hookEvents;
    const changes = async () => (await actionsOf(o.workspace.id)).filter((a) => a === 'triggers.changed').length;

    await refuse('triggers.changed');
    expect(await updateOutdatedHooks(h.deps)).toEqual({ updated: 0, failed: 1 });
    expect(await recorded()).toBeNull();
    expect(await changes()).toBe(1);

    await permit();
    expect(await updateOutdatedHooks(h.deps)).toEqual({ updated: 1, failed: 0 });
    expect(await recorded()).toContain('ci');
    expect(h.github.hooks(o.login, 'atomic-old-hook')[0]!.events).toContain('check_suite');
    expect(await changes()).toBe(2);
  });

  it('code-host connection: a refused row stores no connection; then both stay', async () => {
    const eve = await newAccount(h, { scm: false });
    const user = h.github.addUser(`atomic-${eve.account.id.slice(0, 8)}`);
    const connections = () =>
      h.deps.db.select().from(scmConnections).where(eq(scmConnections.workspaceId, eve.workspace.id));

    await refuse('scm.connected');
    expect((await call(eve.auth, 'POST', '/v1/me/scm', { token: user.token })).statusCode).toBe(500);
    expect(await connections()).toEqual([]);
    expect(await actionsOf(eve.workspace.id)).toEqual([]);

    await permit();
    const connected = await call(eve.auth, 'POST', '/v1/me/scm', { token: user.token });
    expect(connected.json()).toEqual({ scm: user.login, host: 'github' });
    expect(await connections()).toHaveLength(1);

    await refuse('scm.disconnected');
    expect((await call(eve.auth, 'DELETE', '/v1/me/scm')).statusCode).toBe(500);
    expect(await connections()).toHaveLength(1);
    await permit();
    expect((await call(eve.auth, 'DELETE', '/v1/me/scm')).json()).toMatchObject({ disconnected: true });
    expect(await connections()).toEqual([]);
    expect(await actionsOf(eve.workspace.id)).toEqual(['scm.connected', 'scm.disconnected']);
  });

  it('workspace deletion: a refused row leaves the workspace, its members, triggers and hooks; then all go', async () => {
    const team = await newTeam();
    // The team's own connection and a trigger on a repository its user administers.
    const user = h.github.addUser(`team-${team.id.slice(0, 8)}`);
    h.github.createRepo(user.login, 'team-repo');
    expect((await call(team.auth, 'POST', '/v1/me/scm', { token: user.token })).statusCode).toBe(200);
    const repo = encodeURIComponent(`https://github.com/${user.login}/team-repo`);
    expect((await call(team.auth, 'PUT', `/v1/me/repos/triggers?repo=${repo}`, {})).statusCode).toBe(201);
    const workspace = async () => (await h.deps.db.select().from(workspaces).where(eq(workspaces.id, team.id)))[0]!;
    const members = () => h.deps.db.select().from(workspaceMembers).where(eq(workspaceMembers.workspaceId, team.id));

    await refuse('workspace.deleted');
    expect((await call(team.auth, 'DELETE', `/v1/workspaces/${team.id}`)).statusCode).toBe(500);
    expect((await workspace()).deletedAt).toBeNull();
    expect(await members()).toHaveLength(1);
    expect(await h.deps.db.select().from(repoTriggers).where(eq(repoTriggers.workspaceId, team.id))).toHaveLength(1);
    expect(h.github.hooks(user.login, 'team-repo')).toHaveLength(1);
    expect(await actionsOf(team.id)).not.toContain('workspace.deleted');

    await permit();
    expect((await call(team.auth, 'DELETE', `/v1/workspaces/${team.id}`)).statusCode).toBe(204);
    expect((await workspace()).deletedAt).not.toBeNull();
    expect(await members()).toEqual([]);
    expect(h.github.hooks(user.login, 'team-repo')).toEqual([]);
    expect(await actionsOf(team.id)).toContain('workspace.deleted');
  });

  it('workspace export: a refused row means no export is answered', async () => {
    const team = await newTeam();
    await refuse('workspace.exported');
    const refused = await call(team.auth, 'GET', `/v1/workspaces/${team.id}/export`);
    expect(refused.statusCode).toBe(500);
    expect(refused.body).not.toContain('"members"');
    await permit();
    const exported = await call(team.auth, 'GET', `/v1/workspaces/${team.id}/export`);
    expect(exported.statusCode, exported.body).toBe(200);
    expect(exported.json().members).toHaveLength(1);
    expect((await actionsOf(team.id)).filter((a) => a === 'workspace.exported')).toHaveLength(1);
  });

  it('the operator’s changes: a refused row leaves the plan and credits as they were; then both stay', async () => {
    const admin = await newAccount(h, { admin: true, scm: false });
    const team = await newTeam();
    const plan = async () => (await h.deps.db.select().from(workspaces).where(eq(workspaces.id, team.id)))[0]!.plan;
    const before = await plan();

    await refuse('admin.workspace_changed');
    expect((await call(admin.auth, 'PATCH', `/v1/admin/workspaces/${team.id}`, { plan: 'scale' })).statusCode).toBe(
      500,
    );
    expect(await plan()).toBe(before);
    await permit();
    const changed = await call(admin.auth, 'PATCH', `/v1/admin/workspaces/${team.id}`, { plan: 'scale' });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(await plan()).toBe('scale');
    expect(await actionsOf(team.id)).toContain('admin.workspace_changed');

    const personal = team.owner.workspace.id;
    const credits = async () =>
      (
        await h.deps.db
          .select()
          .from(workspaces)
          .where(and(eq(workspaces.id, personal)))
      )[0]!.credits;
    const had = await credits();
    await refuse('admin.account_changed');
    const path = `/v1/admin/accounts/${team.owner.account.id}`;
    expect((await call(admin.auth, 'PATCH', path, { credits: had + 7 })).statusCode).toBe(500);
    expect(await credits()).toBe(had);
    expect(await actionsOf(personal)).not.toContain('admin.account_changed');
    await permit();
    expect((await call(admin.auth, 'PATCH', path, { credits: had + 7 })).statusCode).toBe(200);
    expect(await credits()).toBe(had + 7);
    expect(await actionsOf(personal)).toContain('admin.account_changed');
  });
});
