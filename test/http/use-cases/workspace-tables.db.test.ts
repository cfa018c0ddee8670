import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type SQL, eq, getTableColumns, is, sql } from 'drizzle-orm';
import { type AnyPgColumn, PgTable, getTableConfig } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantCredits } from '../../../src/billing/credits.js';
import { queryRows } from '../../../src/db/client.js';
import * as schema from '../../../src/db/schema.js';
import { encryptSecret } from '../../../src/secrets/box.js';
import { triggerSecret } from '../../../src/triggers/repo-triggers.js';
import { exportedSections } from '../../../src/http/use-cases/workspace-export.js';
import { EXPORT_SECTIONS, WORKSPACE_TABLES } from '../../../src/http/use-cases/workspace-tables.js';
import { DbBaselineStore } from '../../../src/validator/baseline-store.js';
import { type Harness, forceStatus, newAccount, startHarness } from '../../support/harness.js';

/**
 * Deleting a workspace and exporting it (issue 42, point 6) read one record, WORKSPACE_TABLES.
 * These check that the record names every table with a workspace_id column — in the schema and in
 * the migrated database, so a table added later cannot be forgotten — and that a workspace with
 * rows in every one of them is exported with every exported table and no secret, and deleted
 * keeping exactly what the record keeps.
 */

const BASE_URL = 'https://emend.example';
const ORIGIN = { origin: BASE_URL };
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ EMEND_BASE_URL: BASE_URL });
});
afterAll(() => h.close());

type Auth = Record<string, string>;
const decisions = Object.entries(WORKSPACE_TABLES).map(([key, d]) => ({
  key,
  ...d,
  name: getTableConfig(d.table).name,
  columns: Object.fromEntries(Object.entries(getTableColumns(d.table)).map(([k, c]: [string, AnyPgColumn]) => [k, c])),
}));

describe('the record of workspace tables', () => {
  it('names every table with a workspace_id column, in the schema and in the migrated database', async () => {
    const fromSchema = Object.values<unknown>(schema)
      .flatMap((v) => (is(v, PgTable) ? [getTableConfig(v)] : []))
      .filter((t) => t.columns.some((c) => c.name === 'workspace_id'))
      .map((t) => t.name);
    const fromDatabase = (
      await queryRows<{ table_name: string }>(
        h.deps.db,
        sql`select table_name from information_schema.columns
            where column_name = 'workspace_id' and table_schema = current_schema()`,
      )
    ).map((r) => r.table_name);
    const declared = decisions.map((d) => d.name);
    expect(new Set(declared).size).toBe(declared.length);
    expect([...declared].sort()).toEqual([...new Set(fromSchema)].sort());
    expect([...declared].sort()).toEqual([...fromDatabase].sort());
    expect(declared.length).toBeGreaterThanOrEqual(17);
  });

  it('declares secrets that are columns, unlinks only nullable ones, and every section is some table’s', () => {
    for (const d of decisions) {
      for (const s of d.secret) expect(Object.keys(d.columns), `${d.name}.${String(s)}`).toContain(s);
      if (typeof d.onDelete === 'object' && 'unlink' in d.onDelete)
        expect(d.columns.workspaceId!.notNull, `${d.name} unlinks a NOT NULL workspace_id`).toBe(false);
    }
    expect(exportedSections()).toEqual([...EXPORT_SECTIONS]);
  });
});

const call = (auth: Auth, method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  h.app.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) });

async function ok(auth: Auth, method: Parameters<typeof call>[1], url: string, payload?: object) {
  const res = await call(auth, method, url, payload);
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res;
}

/** The rows of `name` that belong to the workspace, as the database holds them. */
const rowsOf = (name: string, workspaceId: string) =>
  queryRows<Record<string, unknown>>(
    h.deps.db,
    sql`select * from ${sql.identifier(name)} where workspace_id = ${workspaceId}`,
  );

/** A row found again by its primary key. */
function byPrimaryKey(d: (typeof decisions)[number], row: Record<string, unknown>): SQL {
  const config = getTableConfig(d.table);
  const pk = config.primaryKeys[0]?.columns ?? config.columns.filter((c) => c.primary);
  return sql.join(
    pk.map((c) => sql`${sql.identifier(c.name)} = ${row[c.name]}`),
    sql` and `,
  );
}

describe('a workspace with rows in every table', () => {
  it('is exported with every exported table and no secret, and deleted keeping exactly what is declared', async () => {
    // The team, made through the API: its owner's token for it, a member, a pending invitation.
    const owner = await newAccount(h, { scm: false });
    const ws = (await ok(owner.auth, 'POST', '/v1/workspaces', { name: 'Everything' })).json().id as string;
    const ownerToken = (await ok(owner.auth, 'POST', '/v1/me/tokens', { workspace_id: ws })).json().token as string;
    const auth = { authorization: `Bearer ${ownerToken}` };
    const member = await newAccount(h, { scm: false });
    const invitation = (await ok(auth, 'POST', `/v1/workspaces/${ws}/invitations`, { role: 'member' })).json();
    await ok(member.auth, 'POST', '/v1/invitations/accept', { token: invitation.token });
    const memberToken = (await ok(member.auth, 'POST', '/v1/me/tokens', { workspace_id: ws })).json().token as string;
    const pending = (await ok(auth, 'POST', `/v1/workspaces/${ws}/invitations`, { role: 'viewer' })).json();

    // Credits (no route grants a team any), the code host, a repository it administers.
    await h.deps.db.update(schema.workspaces).set({ plan: 'pro' }).where(eq(schema.workspaces.id, ws));
    await grantCredits(h.deps.db, ws, 3, h.clock.now(), 'test grant');
    const scmUser = h.github.addUser(`every-${randomBytes(4).toString('hex')}`);
    await ok(auth, 'POST', '/v1/me/scm', { token: scmUser.token });
    h.github.createRepo(scmUser.login, 'widgets');
    const repo = `https://github.com/${scmUser.login}/widgets`;
    const q = `?repo=${encodeURIComponent(repo)}`;

    // Settings, a secret, a provider key, a webhook with its ping's delivery, triggers.
    const REPO_SECRET = `npm_${randomBytes(16).toString('hex')}`;
    const PROVIDER_KEY = `sk-${randomBytes(24).toString('hex')}`;
    await ok(auth, 'PATCH', `/v1/me/repos/settings${q}`, { setup_command: 'make deps', test_command: 'make test' });
    await ok(auth, 'POST', `/v1/me/repos/secrets${q}`, { name: 'NPM_TOKEN', value: REPO_SECRET });
    await ok(auth, 'POST', '/v1/me/keys', { provider: 'openai', api_key: PROVIDER_KEY });
    const hook = (
      await ok(auth, 'POST', '/v1/me/webhooks', { url: 'https://hooks.example.invalid/emend', events: ['task.done'] })
    ).json();
    await ok(auth, 'POST', `/v1/me/webhooks/${hook.id}/test`);
    await ok(auth, 'PUT', `/v1/me/repos/triggers${q}`, {});

    // A task (its credit hold, its rate-limit attempt), finished, with feedback that teaches a lesson.
    const task = (
      await ok(auth, 'POST', '/v1/tasks', { prompt: 'Fix the crash in Session.send', repo_url: repo })
    ).json();
    await forceStatus(h, eq(schema.tasks.id, task.id), 'done');
    await ok(auth, 'POST', `/v1/tasks/${task.id}/feedback`, { correct: 'no', note: 'the lesson of Everything' });

    // A panel session of the owner's personal token, switched to the team.
    const signedIn = await h.app.inject({
      method: 'POST',
      url: '/v1/auth/session',
      headers: ORIGIN,
      payload: { token: owner.token },
    });
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const setCookie = [signedIn.headers['set-cookie']].flat().find((c) => c?.startsWith('emend_session='));
    const sessionSecret = setCookie!.split(';')[0]!.slice('emend_session='.length);
    await ok({ ...ORIGIN, cookie: `emend_session=${sessionSecret}` }, 'POST', '/v1/auth/session/workspace', {
      workspace_id: ws,
    });

    // An OAuth connection under way (it takes a host with OAuth configured: the row directly).
    const OAUTH_CODE = `code-${randomBytes(12).toString('hex')}`;
    await h.deps.db.insert(schema.scmOauthFlows).values({
      id: randomBytes(16).toString('hex'),
      workspaceId: ws,
      host: 'github',
      createdAt: h.clock.now(),
      expiresAt: new Date(h.clock.now().getTime() + 600_000),
      usedAt: h.clock.now(),
      codeEnc: encryptSecret(h.deps.secretKey, OAUTH_CODE, 'test-oauth-code'),
      confirmHash: createHash('sha256').update('123456').digest('hex'),
    });

    // A GitHub App installation the workspace claimed (it takes a host with an app: the row directly).
    await h.deps.db.insert(schema.scmInstallations).values({
      host: 'github',
      installationId: '4242',
      account: 'acme',
      accountType: 'Organization',
      workspaceId: ws,
      claimedAs: 'alice',
      claimedAt: h.clock.now(),
      createdAt: h.clock.now(),
      updatedAt: h.clock.now(),
    });

    // A group's bot (it takes a GitLab or Gitea host: the row directly; its hook's removal fails and is logged).
    const BOT_TOKEN = `glpat-${randomBytes(10).toString('hex')}`;
    const botId = randomUUID();
    await h.deps.db.insert(schema.scmGroupBots).values({
      id: botId,
      workspaceId: ws,
      host: 'github',
      groupPath: 'acme',
      groupId: '501',
      botLogin: 'group_501_bot_0',
      botName: 'acme bot',
      botEmail: 'group_501_bot_0@noreply.example',
      tokenEnc: encryptSecret(h.deps.secretKey, BOT_TOKEN, `group-bot-token:${botId}`),
      hookId: '7',
      secretEnc: encryptSecret(h.deps.secretKey, 'group-hook-secret', `group-bot-secret:${botId}`),
      createdAt: h.clock.now(),
      updatedAt: h.clock.now(),
    });

    // Single sign-on through the workspace's own provider, with an email domain it takes in (the rows
    // directly: PUT /v1/workspaces/{id}/sso reaches the provider's address through the outbound policy).
    await h.deps.db.insert(schema.workspaceSso).values({
      workspaceId: ws,
      issuer: 'https://login.acme.example',
      clientId: 'emend',
      clientSecretSealed: encryptSecret(h.deps.secretKey, 'idp-client-secret', `workspace_sso:${ws}`),
      updatedAt: h.clock.now(),
    });
    await h.deps.db.insert(schema.ssoDomains).values({ domain: 'acme.example', workspaceId: ws });

    // A billed model call of the task and a spend-limit threshold told (no worker runs here: the rows directly).
    await h.deps.db.insert(schema.modelSpend).values({
      id: randomUUID(),
      workspaceId: ws,
      accountId: null,
      taskId: task.id,
      usd: 0.25,
      createdAt: h.clock.now(),
    });
    await h.deps.db.insert(schema.spendNotices).values({
      workspaceId: ws,
      month: h.clock.now().toISOString().slice(0, 7),
      subject: 'workspace',
      cap: 'usd',
      threshold: 80,
      createdAt: h.clock.now(),
    });

    // A step's log of the task (no worker runs here): it hangs off the task, not the workspace.
    await h.deps.db
      .insert(schema.taskLogs)
      .values({ taskId: task.id, step: 'planner', status: 'done', createdAt: h.clock.now() });

    // A baseline its validation kept (no worker runs here: through the store the validator uses).
    await new DbBaselineStore({
      db: h.deps.db,
      secretKey: h.deps.secretKey,
      workspace: ws,
      repository: repo,
      maxBytes: 1024 * 1024,
      now: () => h.clock.now(),
    }).save(
      {
        key: `kept-${ws}`,
        workspace: ws,
        repository: repo,
        commit: 'c'.repeat(40),
        envKey: 'e'.repeat(40),
        command: 'make test',
      },
      {
        summary: {
          commit: 'c'.repeat(40),
          command: 'make test',
          failures: [],
          tests: 1,
          exit_code: 0,
          timed_out: false,
          duration_ms: 40,
          setup: 'ok',
        },
        tests: [['widgets work', 'passed']],
        complete: true,
      },
    );

    // Every table the record names holds rows of the workspace: a table added later needs a row here.
    const before = new Map<string, Record<string, unknown>[]>();
    for (const d of decisions) {
      const rows = await rowsOf(d.name, ws);
      expect(rows.length, `no row of ${d.name}: give the workspace one above`).toBeGreaterThan(0);
      before.set(d.name, rows);
    }

    // The export: the workspace and a non-empty section for every exported table, nothing else.
    const res = await call(auth, 'GET', `/v1/workspaces/${ws}/export`);
    expect(res.statusCode).toBe(200);
    const out = res.json();
    const sections = new Set(decisions.flatMap((d) => (typeof d.exportAs === 'string' ? [d.exportAs] : [])));
    expect(Object.keys(out).sort()).toEqual(['workspace', ...sections].sort());
    for (const s of sections) expect(out[s].length, `section ${s}`).toBeGreaterThan(0);
    expect(out.invitations.map((i: { id: string }) => i.id)).toContain(pending.id);
    expect(out.provider_keys).toEqual([expect.objectContaining({ provider: 'openai', last4: PROVIDER_KEY.slice(-4) })]);
    expect(out.scm_connections).toEqual([expect.objectContaining({ host: 'github', login: scmUser.login })]);
    expect(out.task_feedback).toEqual([expect.objectContaining({ task_id: task.id, correct: 'no' })]);
    expect(out.webhook_deliveries).toEqual([expect.objectContaining({ endpoint_id: hook.id, event: 'ping' })]);

    // No secret: neither a declared secret column's stored value nor a secret as it was given.
    const stored = decisions.flatMap((d) =>
      d.secret.flatMap((key) => {
        const column = d.columns[String(key)]!.name;
        return before
          .get(d.name)!
          .map((r) => r[column])
          .filter((v) => v !== null);
      }),
    );
    for (const d of decisions.filter((x) => x.secret.length > 0))
      expect(
        before.get(d.name)!.some((r) => d.secret.some((k) => r[d.columns[String(k)]!.name] !== null)),
        `no secret of ${d.name}`,
      ).toBe(true);
    const [trigger] = await h.deps.db.select().from(schema.repoTriggers).where(eq(schema.repoTriggers.workspaceId, ws));
    const given = [
      REPO_SECRET,
      PROVIDER_KEY,
      scmUser.token,
      invitation.token,
      pending.token,
      ownerToken,
      memberToken,
      hook.secret,
      triggerSecret(h.deps, trigger!),
      sessionSecret,
      OAUTH_CODE,
      BOT_TOKEN,
    ];
    for (const secret of [...stored, ...given]) {
      expect(typeof secret).toBe('string');
      expect(res.body).not.toContain(secret);
    }

    // The deletion: each table's rows go, stay as they were, or stay unlinked, as declared.
    expect((await call(auth, 'DELETE', `/v1/workspaces/${ws}`)).statusCode).toBe(204);
    for (const d of decisions) {
      const after = await rowsOf(d.name, ws);
      if (d.onDelete === 'delete') expect(after, `${d.name}: its rows go`).toEqual([]);
      else if (d.name === 'audit_events') {
        // The audit log keeps its rows as they were and appends the deletion itself.
        const bySeq = (rows: Record<string, unknown>[]) => [...rows].sort((x, y) => Number(x.seq) - Number(y.seq));
        const kept = bySeq(before.get(d.name)!);
        const now = bySeq(after);
        expect(now.slice(0, kept.length), `${d.name}: its rows stay`).toEqual(kept);
        expect(now.at(-1), `${d.name}: records the deletion`).toMatchObject({ action: 'workspace.deleted' });
      } else if ('keep' in d.onDelete) expect(after, `${d.name}: its rows stay`).toEqual(before.get(d.name));
      else {
        expect(after, `${d.name}: no row names the workspace`).toEqual([]);
        for (const row of before.get(d.name)!) {
          const again = await queryRows<Record<string, unknown>>(
            h.deps.db,
            sql`select * from ${sql.identifier(d.name)} where ${byPrimaryKey(d, row)}`,
          );
          expect(again, `${d.name}: its rows stay, unlinked`).toEqual([{ ...row, workspace_id: null }]);
        }
      }
    }
    // What hangs off the tasks goes with them; the workspace row stays, marked deleted.
    expect(await h.deps.db.select().from(schema.taskLogs).where(eq(schema.taskLogs.taskId, task.id))).toEqual([]);
    const [row] = await h.deps.db.select().from(schema.workspaces).where(eq(schema.workspaces.id, ws));
    expect(row!.deletedAt).toEqual(h.clock.now());
  });
});
