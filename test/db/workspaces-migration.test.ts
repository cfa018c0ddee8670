import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { eq, getTableName, is } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateToken } from '../../src/accounts/authenticate.js';
import { ledgerBalance } from '../../src/billing/credits.js';
import { keyContext, listProviderKeys } from '../../src/workspaces/provider-keys.js';
import { scmTokenOn } from '../../src/workspaces/scm-connection.js';
import { authenticateSession } from '../../src/accounts/sessions.js';
import { issueToken } from '../../src/accounts/token-secrets.js';
import { manualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/config.js';
import type { Db } from '../../src/db/client.js';
import * as schema from '../../src/db/schema.js';
import { repoSettingsFor } from '../../src/repos/repo-settings.js';
import { decryptSecret, encryptSecret } from '../../src/secrets/box.js';
import { defaultHost } from '../../src/scm/hosts.js';
import { taskJson } from '../../src/tasks/present.js';
import { signingSecretOf } from '../../src/webhooks/endpoints.js';
import { membershipsOf } from '../../src/workspaces/workspaces.js';
import { databaseBefore, type OlderDatabase } from '../support/database-at.js';

/**
 * Issue 33: every account of a deployment upgraded across migration 0018 becomes the owner of a
 * personal workspace with the account's id, holding everything it had. The database is built at
 * 0017 with rows in every table (the test fails if a table is left empty), then migrated: no row
 * and no value is lost, every old token and panel session still signs in (as the owner of the
 * personal workspace), and what the service answered before (a task, a balance, a stored secret)
 * it still answers.
 */

const T0 = Date.parse('2026-03-02T09:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);
/** When the migrated deployment is used: a month after the rows were written. */
const NOW = new Date('2026-04-01T12:00:00.000Z');
const later = (ms: number) => new Date(NOW.getTime() + ms);
const DAY = 86_400_000;

const secretKey = randomBytes(32);
const REPO = 'https://github.com/acme/widgets';

const ada = randomUUID(); // pro, credits, BYOK, manual approval, the agent fixer
const bo = randomUUID(); // free, an admin, no name, no default fixer
const visitor = randomUUID(); // a demo account

const tok = {
  adaMain: { id: randomUUID(), account: ada, kind: 'full' as const, ...issueToken('full') },
  adaCi: { id: randomUUID(), account: ada, kind: 'full' as const, ...issueToken('full') },
  adaRevoked: { id: randomUUID(), account: ada, kind: 'full' as const, ...issueToken('full') },
  boMain: { id: randomUUID(), account: bo, kind: 'full' as const, ...issueToken('full') },
  boExpired: { id: randomUUID(), account: bo, kind: 'full' as const, ...issueToken('full') },
  demo: { id: randomUUID(), account: visitor, kind: 'demo' as const, ...issueToken('demo') },
};
const sessionSecret = randomBytes(32).toString('base64url');

const task = { adaDone: randomUUID(), adaFollowUp: randomUUID(), boSite: randomUUID(), demoFix: randomUUID() };
const triggerId = randomUUID();
const endpointId = randomUUID();

const secrets = {
  scmAda: `ghp_${randomBytes(18).toString('hex')}`,
  scmBo: `gho_${randomBytes(18).toString('hex')}`,
  npm: `npm_${randomBytes(18).toString('hex')}`,
  provider: `sk-ant-${randomBytes(18).toString('hex')}`,
  webhook: `whsec_${randomBytes(18).toString('hex')}`,
};

/** The 0017 rows, table by table (columns from migrations/meta/0017_snapshot.json). */
function rowsAt0017(): Record<string, Record<string, unknown>[]> {
  const token = (t: (typeof tok)[keyof typeof tok], extra: Record<string, unknown>) => ({
    id: t.id,
    account_id: t.account,
    kind: t.kind,
    token_hash: t.hash,
    last4: t.last4,
    created_at: at(1),
    ...extra,
  });
  const trigger = {
    host: 'github',
    kind: 'comment',
    thread: 'issue',
    number: 6,
    commentUrl: `${REPO}/issues/6#issuecomment-1`,
    actor: 'octo',
    triggerId,
    answerId: '99',
    answered: 'done',
  };
  return {
    accounts: [
      {
        id: ada,
        email: 'ada@example.com',
        name: 'Ada',
        plan: 'pro',
        credits: 38,
        use_byok: true,
        is_admin: false,
        approval_mode: 'manual',
        fixer: 'agent',
        created_at: at(0),
      },
      {
        id: bo,
        email: 'bo@example.com',
        name: '',
        plan: 'free',
        credits: 5,
        use_byok: false,
        is_admin: true,
        approval_mode: 'auto',
        fixer: null,
        created_at: at(1),
      },
      { id: visitor, email: 'visitor@example.com', plan: 'demo', created_at: at(2) },
    ],
    api_tokens: [
      token(tok.adaMain, { name: 'initial', last_used_at: at(10) }),
      token(tok.adaCi, { name: 'ci', expires_at: later(30 * DAY) }),
      token(tok.adaRevoked, { name: 'old laptop', revoked_at: at(5) }),
      token(tok.boMain, { name: 'initial' }),
      token(tok.boExpired, { name: 'trial', expires_at: at(100) }),
      token(tok.demo, { name: 'demo', expires_at: later(7 * DAY) }),
    ],
    tasks: [
      {
        id: task.adaDone,
        account_id: ada,
        token_id: tok.adaMain.id,
        task_type: 'fix',
        mode: 'pr',
        status: 'done',
        approval_mode: 'manual',
        fixer: 'agent',
        prompt: 'Fix the crash on empty input',
        repo_url: REPO,
        repo_owner: 'acme',
        repo_name: 'widgets',
        base_branch: 'trunk',
        pr_url: `${REPO}/pull/7`,
        diff_summary: '1 file changed, 3 insertions(+)',
        cost_usd: '0.123456',
        tokens_total: 5120,
        duration_ms: 64_000,
        retry_count: 1,
        pr_merged: true,
        pr_merged_at: at(40),
        byok: true,
        progress: { plan: 'done', edit: 'done' },
        attempts: 1,
        trigger,
        created_at: at(10),
        started_at: at(11),
        finished_at: at(12),
      },
      {
        id: task.adaFollowUp,
        account_id: ada,
        token_id: tok.adaCi.id,
        parent_id: task.adaDone,
        task_type: 'fix',
        mode: 'pr',
        status: 'running',
        approval_mode: 'manual',
        fixer: 'agent',
        prompt: 'Also handle None',
        repo_url: REPO,
        repo_owner: 'acme',
        repo_name: 'widgets',
        credit_held: true,
        current_step: 'edit',
        worker_id: 'worker-1',
        heartbeat_at: at(21),
        attempts: 1,
        created_at: at(20),
        started_at: at(20),
      },
      {
        id: task.boSite,
        account_id: bo,
        token_id: tok.boMain.id,
        task_type: 'scaffold',
        mode: 'preview',
        status: 'failed',
        prompt: 'A bakery site',
        deployed_url: 'https://bo-bakery.sites.example.com',
        deployed_repo: 'bo/bakery',
        site_slug: 'bo-bakery',
        cost_usd: '0.5',
        tokens_total: 900,
        duration_ms: 3_000,
        human_edit_after: true,
        error: 'the build failed',
        gate_since: at(16),
        created_at: at(15),
        started_at: at(15),
        finished_at: at(17),
      },
      {
        id: task.demoFix,
        account_id: visitor,
        token_id: tok.demo.id,
        task_type: 'fix',
        mode: 'preview',
        status: 'pending',
        prompt: 'Fix the typo',
        repo_url: 'https://github.com/psf/requests',
        repo_owner: 'psf',
        repo_name: 'requests',
        created_at: at(30),
      },
    ],
    task_logs: [
      {
        task_id: task.adaDone,
        step: 'plan',
        status: 'ok',
        input: { a: 1 },
        output: { plan: ['x'] },
        tokens: 100,
        cost_usd: '0.01',
        duration_ms: 10,
        created_at: at(11),
      },
      {
        task_id: task.adaDone,
        step: 'edit',
        status: 'ok',
        tokens: 5020,
        cost_usd: '0.113456',
        duration_ms: 63_990,
        created_at: at(12),
      },
      {
        task_id: task.boSite,
        step: 'build',
        status: 'failed',
        output: { error: 'the build failed' },
        created_at: at(17),
      },
    ],
    credit_ledger: [
      { id: randomUUID(), account_id: ada, kind: 'grant', amount: 40, note: 'plan pro', created_at: at(3) },
      { id: randomUUID(), account_id: ada, task_id: task.adaDone, kind: 'hold', amount: 1, created_at: at(10) },
      { id: randomUUID(), account_id: ada, task_id: task.adaDone, kind: 'capture', amount: 1, created_at: at(12) },
      { id: randomUUID(), account_id: ada, task_id: task.adaFollowUp, kind: 'hold', amount: 1, created_at: at(20) },
      { id: randomUUID(), account_id: bo, kind: 'grant', amount: 5, created_at: at(3) },
      { id: randomUUID(), account_id: bo, task_id: task.boSite, kind: 'hold', amount: 1, created_at: at(15) },
      { id: randomUUID(), account_id: bo, task_id: task.boSite, kind: 'release', amount: 1, created_at: at(17) },
    ],
    demo_issuance: [{ ip: '203.0.113.9', email: 'visitor@example.com', account_id: visitor, created_at: at(2) }],
    idempotency_keys: [
      {
        account_id: ada,
        route: 'POST /v1/tasks',
        key: 'retry-safe-1',
        fingerprint: 'f1',
        claim_id: randomUUID(),
        claimed_at: at(10),
        response_status: 201,
        response_body: { id: task.adaDone, status: 'pending' },
        task_id: task.adaDone,
        expires_at: later(DAY),
      },
    ],
    periodic_runs: [{ name: 'drop-old-payloads', last_run_at: at(50) }],
    provider_keys: [
      {
        id: randomUUID(),
        account_id: ada,
        provider: 'anthropic',
        key_enc: encryptSecret(secretKey, secrets.provider, `provider-key:${ada}:anthropic`),
        last4: secrets.provider.slice(-4),
        context_window: 200_000,
        default_model: 'claude-sonnet',
        created_at: at(4),
      },
    ],
    repo_memory: [
      {
        id: randomUUID(),
        account_id: ada,
        repo: REPO,
        kind: 'lesson',
        content: { text: 'Run the linter before the tests' },
        task_id: task.adaDone,
        created_at: at(41),
      },
    ],
    repo_secrets: [
      {
        account_id: ada,
        repo: REPO,
        name: 'NPM_TOKEN',
        value_enc: encryptSecret(secretKey, secrets.npm, `repo-secret:${ada}:${REPO}:NPM_TOKEN`),
        created_at: at(5),
        updated_at: at(6),
      },
    ],
    repo_settings: [
      {
        account_id: ada,
        repo: REPO,
        setup_command: 'npm ci',
        test_command: 'npm test',
        env: { CI: '1' },
        created_at: at(5),
        updated_at: at(6),
      },
    ],
    repo_triggers: [
      {
        id: triggerId,
        account_id: ada,
        host: 'github',
        repo: REPO,
        repo_owner: 'acme',
        repo_name: 'widgets',
        hook_id: '4242',
        secret_enc: encryptSecret(secretKey, 'hook secret', `trigger-secret:${triggerId}`),
        mention: '@emend',
        label: 'emend',
        events: ['issue_comment', 'issues'],
        created_at: at(7),
        updated_at: at(7),
      },
    ],
    scm_connections: [
      {
        account_id: ada,
        host: 'github',
        login: 'ada-gh',
        token_enc: encryptSecret(secretKey, secrets.scmAda, `scm-token:${ada}`),
        created_at: at(3),
      },
      {
        account_id: bo,
        host: 'github',
        login: 'bo-gh',
        token_enc: encryptSecret(secretKey, secrets.scmBo, `scm-token:${bo}`),
        refresh_enc: encryptSecret(secretKey, 'ghr_refresh', `scm-refresh:${bo}:github`),
        expires_at: later(30 * DAY),
        created_at: at(3),
      },
    ],
    scm_oauth_flows: [
      { id: 'flow-1', account_id: bo, host: 'github', created_at: at(2), expires_at: at(12), attempts: 1 },
    ],
    site_files: [
      {
        id: randomUUID(),
        task_id: task.boSite,
        path: 'index.html',
        content: new TextEncoder().encode('<h1>Bakery</h1>'),
        content_type: 'text/html',
        size: 15,
        created_at: at(16),
      },
    ],
    site_screenshots: [
      { task_id: task.boSite, name: 'desktop', png: new Uint8Array([137, 80, 78, 71]), created_at: at(16) },
    ],
    task_feedback: [
      {
        id: randomUUID(),
        task_id: task.adaDone,
        account_id: ada,
        rating: 5,
        correct: 'yes',
        reuse: 'yes',
        note: 'merged as is',
        created_at: at(41),
      },
    ],
    task_post_attempts: [
      { account_id: ada, at: at(10) },
      { account_id: ada, at: at(20) },
      { account_id: bo, at: at(15) },
    ],
    trigger_deliveries: [
      {
        id: randomUUID(),
        trigger_id: triggerId,
        delivery_id: 'gh-delivery-1',
        event: 'issue_comment',
        event_key: 'comment-1',
        status: 'done',
        task_id: task.adaDone,
        payload: { action: 'created' },
        received_at: at(9),
        done_at: at(10),
      },
    ],
    web_sessions: [
      {
        id_hash: createHash('sha256').update(sessionSecret).digest('hex'),
        account_id: ada,
        token_id: tok.adaMain.id,
        created_at: later(-DAY),
        expires_at: later(3_600_000),
      },
    ],
    webhook_endpoints: [
      {
        id: endpointId,
        account_id: ada,
        url: 'https://hooks.example.com/emend',
        events: ['task.done', 'task.failed'],
        description: 'chat',
        secret_enc: encryptSecret(secretKey, secrets.webhook, `webhook:${ada}:${endpointId}`),
        created_at: at(8),
      },
    ],
    webhook_deliveries: [
      {
        id: randomUUID(),
        endpoint_id: endpointId,
        account_id: ada,
        event_id: randomUUID(),
        event_type: 'task.done',
        payload: '{"type":"task.done"}',
        status: 'delivered',
        attempts: 1,
        last_status_code: 200,
        last_duration_ms: 80,
        created_at: at(12),
        finished_at: at(12),
      },
    ],
  };
}

/** The account_id columns 0018 renames workspace_id (the values stay: a personal workspace has its account's id). */
const RENAMED = [
  'credit_ledger',
  'provider_keys',
  'repo_memory',
  'repo_secrets',
  'repo_settings',
  'repo_triggers',
  'scm_connections',
  'scm_oauth_flows',
  'task_feedback',
  'task_post_attempts',
  'tasks',
  'webhook_deliveries',
  'webhook_endpoints',
];
/** What moves from accounts to workspaces. */
const MOVED_TO_WORKSPACE = ['plan', 'credits', 'use_byok', 'approval_mode', 'fixer'];
/**
 * The columns 0018 adds to old tables (their values are checked on their own), and those of later
 * migrations (0021 a session's public id, its browser and address; 0022 the issuer of a single sign-on;
 * 0023 the account that held a credit).
 */
const ADDED: Record<string, string[]> = {
  api_tokens: ['workspace_id', 'scopes'],
  credit_ledger: ['account_id'],
  repo_settings: ['attempts'],
  repo_triggers: ['ci_rounds', 'hook_events'],
  tasks: ['created_by', 'fix_attempts'],
  web_sessions: ['workspace_id', 'id', 'user_agent', 'client_address', 'sso_issuer'],
};
/**
 * The tables 0018 makes, and those of later migrations (0019 the GitHub App's installations, 0020 group
 * bots, 0022 single sign-on, 0023 spend limits' metered spend and threshold notices, 0024 the audit log,
 * then the validator's kept baselines and a pull request's CI rounds).
 */
const NEW_TABLES = [
  'workspace_invitations',
  'workspace_members',
  'workspaces',
  'scm_installations',
  'scm_group_bots',
  'workspace_sso',
  'sso_domains',
  'oidc_identities',
  'model_spend',
  'spend_notices',
  'audit_events',
  'baseline_results',
  'ci_rounds',
];

type Row = Record<string, unknown>;

async function tablesOf(client: PGlite): Promise<string[]> {
  const r = await client.query<{ t: string }>(
    "SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
  );
  return r.rows.map((x) => x.t);
}

/** Every row of the table as PostgreSQL itself renders it (to_jsonb), in a fixed order. */
async function dump(client: PGlite, table: string): Promise<Row[]> {
  const r = await client.query<{ row: Row }>(`SELECT to_jsonb(t) AS row FROM "${table}" t`);
  return sorted(r.rows.map((x) => x.row));
}
const sorted = (rows: Row[]) =>
  rows
    .map((r) => [JSON.stringify(r, Object.keys(r).sort()), r] as const)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, r]) => r);

async function seed(client: PGlite, rows: Record<string, Row[]>) {
  for (const [table, list] of Object.entries(rows)) {
    for (const row of list) {
      const cols = Object.keys(row);
      await client.query(
        `INSERT INTO "${table}" (${cols.map((c) => `"${c}"`).join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
        cols.map((c) => row[c]),
      );
    }
  }
}

let old: OlderDatabase;
let db: Db;
let tablesBefore: string[];
let tablesAfter: string[];
const before: Record<string, Row[]> = {};
const after: Record<string, Row[]> = {};
const seeded = rowsAt0017();

beforeAll(async () => {
  old = await databaseBefore('0018');
  await seed(old.client, seeded);
  tablesBefore = await tablesOf(old.client);
  for (const t of tablesBefore) before[t] = await dump(old.client, t);
  db = await old.migrateToLatest();
  tablesAfter = await tablesOf(old.client);
  for (const t of tablesAfter) after[t] = await dump(old.client, t);
});

afterAll(async () => {
  await old?.close();
});

describe('migration 0018 (workspaces) on a database with rows in every table', () => {
  it('starts from rows in every table of the 0017 schema', () => {
    expect(tablesBefore).toEqual(Object.keys(seeded).sort());
    for (const t of tablesBefore) expect(before[t]!.length, t).toBe(seeded[t]!.length);
  });

  it('loses no row and no value: each old row is there, under its new column names', () => {
    expect(tablesAfter).toEqual([...tablesBefore, ...NEW_TABLES].sort());
    for (const t of tablesBefore) {
      const rename = (c: string) => (c === 'account_id' && RENAMED.includes(t) ? 'workspace_id' : c);
      const dropped = t === 'accounts' ? MOVED_TO_WORKSPACE : [];
      const kept = Object.keys(before[t]![0]!).filter((c) => !dropped.includes(c));
      expect(Object.keys(after[t]![0]!).sort(), `${t}'s columns`).toEqual(
        [...kept.map(rename), ...(ADDED[t] ?? [])].sort(),
      );
      const expected = before[t]!.map((r) => Object.fromEntries(kept.map((c) => [rename(c), r[c]])));
      const actual = after[t]!.map((r) => Object.fromEntries(kept.map((c) => [rename(c), r[rename(c)]])));
      expect(sorted(actual), t).toEqual(sorted(expected));
    }
  });

  it('gives every account a personal workspace with its own id, its plan, credits and settings, and makes it the owner', () => {
    expect(after.workspaces).toEqual(
      sorted(
        before.accounts!.map((a) => ({
          id: a.id,
          name: a.name || a.email,
          personal_of: a.id,
          plan: a.plan,
          credits: a.credits,
          use_byok: a.use_byok,
          approval_mode: a.approval_mode,
          fixer: a.fixer,
          monthly_spend_cap_usd: null,
          monthly_credit_cap: null,
          created_at: a.created_at,
          deleted_at: null,
        })),
      ),
    );
    // The values themselves, not only "as they were": Ada's paid plan and settings, Bo's email for a name.
    const ws = (id: string) => after.workspaces!.find((w) => w.id === id);
    expect(ws(ada)).toMatchObject({
      name: 'Ada',
      plan: 'pro',
      credits: 38,
      use_byok: true,
      approval_mode: 'manual',
      fixer: 'agent',
    });
    expect(ws(bo)).toMatchObject({ name: 'bo@example.com', plan: 'free', credits: 5, use_byok: false, fixer: null });
    expect(ws(visitor)).toMatchObject({ name: 'visitor@example.com', plan: 'demo', approval_mode: 'auto' });
    expect(after.workspace_members).toEqual(
      sorted(
        before.accounts!.map((a) => ({
          workspace_id: a.id,
          account_id: a.id,
          role: 'owner',
          monthly_spend_cap_usd: null,
          monthly_credit_cap: null,
          created_at: a.created_at,
        })),
      ),
    );
    expect(after.workspace_invitations).toEqual([]);
  });

  it('puts each token in its account’s workspace with no scopes, each task’s creator as its account, and no session switched', () => {
    for (const t of after.api_tokens!) expect([t.workspace_id, t.scopes]).toEqual([t.account_id, null]);
    expect(after.api_tokens).toHaveLength(6);
    for (const t of after.tasks!) expect(t.created_by).toBe(t.workspace_id);
    expect(Object.fromEntries(after.tasks!.map((t) => [t.id, t.workspace_id]))).toEqual({
      [task.adaDone]: ada,
      [task.adaFollowUp]: ada,
      [task.boSite]: bo,
      [task.demoFix]: visitor,
    });
    expect(after.web_sessions!.map((s) => s.workspace_id)).toEqual([null]);
  });

  it('reads every migrated table through the drizzle schema', async () => {
    const tables = (Object.values(schema) as unknown[]).filter((v): v is PgTable => is(v, PgTable));
    expect(tables.map((t) => getTableName(t)).sort()).toEqual(tablesAfter);
    for (const t of tables) {
      const rows = await db.select().from(t);
      expect(rows.length, getTableName(t)).toBe(after[getTableName(t)]!.length);
    }
    const [ws] = await db.select().from(schema.workspaces).where(eq(schema.workspaces.id, ada));
    expect(ws).toEqual({
      id: ada,
      name: 'Ada',
      personalOf: ada,
      plan: 'pro',
      credits: 38,
      useByok: true,
      approvalMode: 'manual',
      fixer: 'agent',
      monthlySpendCapUsd: null,
      monthlyCreditCap: null,
      createdAt: at(0),
      deletedAt: null,
    });
    const [token] = await db.select().from(schema.apiTokens).where(eq(schema.apiTokens.id, tok.adaCi.id));
    expect(token).toMatchObject({ accountId: ada, workspaceId: ada, scopes: null, name: 'ci' });
    const [t] = await db.select().from(schema.tasks).where(eq(schema.tasks.id, task.adaFollowUp));
    expect(t).toMatchObject({ workspaceId: ada, createdBy: ada, parentId: task.adaDone, creditHeld: true });
  });

  it('answers every old task, balance and stored secret as before', async () => {
    const rows = await db.select().from(schema.tasks);
    const json = (id: string) => taskJson(rows.find((r) => r.id === id)!);
    expect(json(task.adaDone)).toEqual({
      id: task.adaDone,
      status: 'done',
      mode: 'pr',
      task_type: 'fix',
      prompt: 'Fix the crash on empty input',
      repo_url: REPO,
      repo_owner: 'acme',
      repo_name: 'widgets',
      base_branch: 'trunk',
      approval_mode: 'manual',
      fixer: 'agent',
      attempts: 1,
      parent_id: null,
      pr_url: `${REPO}/pull/7`,
      deployed_url: null,
      deployed_repo: null,
      diff_summary: '1 file changed, 3 insertions(+)',
      cost_usd: 0.123456,
      tokens_total: 5120,
      duration_ms: 64_000,
      retry_count: 1,
      pr_merged: true,
      pr_merged_at: at(40).toISOString(),
      human_edit_after: false,
      byok: true,
      error: null,
      trigger: {
        host: 'github',
        kind: 'comment',
        thread: 'issue',
        number: 6,
        comment_url: `${REPO}/issues/6#issuecomment-1`,
        actor: 'octo',
      },
      created_at: at(10).toISOString(),
      started_at: at(11).toISOString(),
      finished_at: at(12).toISOString(),
    });
    expect(json(task.boSite)).toEqual({
      id: task.boSite,
      status: 'failed',
      mode: 'preview',
      task_type: 'scaffold',
      prompt: 'A bakery site',
      repo_url: null,
      repo_owner: null,
      repo_name: null,
      base_branch: 'main',
      approval_mode: 'auto',
      fixer: 'pipeline',
      attempts: 1,
      parent_id: null,
      pr_url: null,
      deployed_url: 'https://bo-bakery.sites.example.com',
      deployed_repo: 'bo/bakery',
      diff_summary: null,
      cost_usd: 0.5,
      tokens_total: 900,
      duration_ms: 3_000,
      retry_count: 0,
      pr_merged: false,
      pr_merged_at: null,
      human_edit_after: true,
      byok: false,
      error: 'the build failed',
      trigger: null,
      created_at: at(15).toISOString(),
      started_at: at(15).toISOString(),
      finished_at: at(17).toISOString(),
    });
    expect(json(task.adaFollowUp)).toMatchObject({ status: 'running', parent_id: task.adaDone, cost_usd: 0 });
    expect(json(task.demoFix)).toMatchObject({ status: 'pending', mode: 'preview', repo_name: 'requests' });

    // The balance: the ledger (grants - captures - open holds) and the workspace's counter agree, at the old value.
    for (const [id, credits] of [
      [ada, 38],
      [bo, 5],
      [visitor, 0],
    ] as const) {
      const [ws] = await db.select().from(schema.workspaces).where(eq(schema.workspaces.id, id));
      expect([ws!.credits, await ledgerBalance(db, id)], id).toEqual([credits, credits]);
    }

    // Secrets sealed under the account's id open under its workspace's (the same id).
    const config = loadConfig({});
    const deps = { db, config, fetch: globalThis.fetch, secretKey, clock: manualClock(NOW) };
    const github = defaultHost(config);
    expect(github.id).toBe('github');
    expect(await scmTokenOn(deps, ada, github)).toBe(secrets.scmAda);
    expect(await scmTokenOn(deps, bo, github)).toBe(secrets.scmBo);
    expect(await scmTokenOn(deps, visitor, github)).toBeUndefined();
    expect(await repoSettingsFor(deps, ada, REPO)).toEqual({
      setupCommand: 'npm ci',
      testCommand: 'npm test',
      env: { CI: '1' },
      setupSecrets: { NPM_TOKEN: secrets.npm },
    });
    const [key] = await listProviderKeys(deps, ada);
    expect(decryptSecret(secretKey, key!.keyEnc, keyContext(ada, key!.provider))).toBe(secrets.provider);
    const [endpoint] = await db.select().from(schema.webhookEndpoints);
    expect(signingSecretOf(deps, endpoint!)).toBe(secrets.webhook);
  });

  it('gives every old panel session a public id of its own (0021), and no browser or address it never recorded', () => {
    const sessions = after.web_sessions!;
    expect(sessions.length).toBeGreaterThan(0);
    for (const s of sessions) {
      expect(s.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect([s.user_agent, s.client_address]).toEqual([null, null]);
    }
    expect(new Set(sessions.map((s) => s.id)).size).toBe(sessions.length);
  });

  it('signs every old live token and panel session in, as the owner of its account’s personal workspace', async () => {
    const deps = { db, clock: manualClock(NOW) };
    for (const t of [tok.adaMain, tok.adaCi, tok.boMain, tok.demo]) {
      const { auth } = await authenticateToken(deps, t.secret);
      expect(
        {
          account: auth.account.id,
          workspace: auth.workspace.id,
          personalOf: auth.workspace.personalOf,
          role: auth.role,
          scopes: auth.scopes,
          tokenId: auth.tokenId,
          tokenKind: auth.tokenKind,
        },
        t.id,
      ).toEqual({
        account: t.account,
        workspace: t.account,
        personalOf: t.account,
        role: 'owner',
        scopes: null,
        tokenId: t.id,
        tokenKind: t.kind,
      });
    }
    const { auth } = await authenticateToken(deps, tok.adaCi.secret);
    expect(auth.workspace).toMatchObject({ plan: 'pro', credits: 38, useByok: true, approvalMode: 'manual' });
    // A revoked or expired token stays refused.
    for (const t of [tok.adaRevoked, tok.boExpired])
      await expect(authenticateToken(deps, t.secret), t.id).rejects.toMatchObject({ code: 'invalid_token' });

    const session = await authenticateSession(deps, sessionSecret);
    expect([session.account.id, session.workspace.id, session.role, session.tokenId]).toEqual([
      ada,
      ada,
      'owner',
      tok.adaMain.id,
    ]);
    expect((await membershipsOf(deps, ada)).map((m) => [m.workspace.id, m.role])).toEqual([[ada, 'owner']]);
  });
});
