import { sql } from 'drizzle-orm';
import type { FixerKind } from '../config/config.js';
import type { TokenScope, WorkspaceRole } from './access-vocabulary.js';
import {
  bigint,
  bigserial,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** A person: who signs in and holds tokens. What they work on belongs to workspaces (below). */
export const accounts = pgTable(
  'accounts',
  {
    id: uuid('id').primaryKey(),
    email: text('email').notNull(),
    name: text('name').notNull().default(''),
    isAdmin: boolean('is_admin').notNull().default(false),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('accounts_email_idx').on(t.email)],
);

/**
 * What tasks, settings, keys, connections, memory, webhooks and credits belong to. Every account
 * has a personal one, made with it and with its id (`personal_of`); teams make more.
 */
export const workspaces = pgTable(
  'workspaces',
  {
    id: uuid('id').primaryKey(),
    name: text('name').notNull(),
    /** The account whose personal workspace this is; null for a team's. */
    personalOf: uuid('personal_of').references(() => accounts.id, { onDelete: 'cascade' }),
    plan: text('plan').notNull().default('free'),
    credits: integer('credits').notNull().default(0),
    useByok: boolean('use_byok').notNull().default(false),
    approvalMode: text('approval_mode').notNull().default('auto'),
    /** The fixer of the workspace's tasks that name none (POST /v1/me/settings); null: the operator's default. */
    fixer: text('fixer').$type<FixerKind>(),
    /** Spend limits (docs/teams.md): the most model spend (USD, metered) a UTC calendar month may reach; null: no cap. */
    monthlySpendCapUsd: numeric('monthly_spend_cap_usd', { precision: 12, scale: 2, mode: 'number' }),
    /** The most credits a UTC calendar month's tasks may hold; null: no cap. */
    monthlyCreditCap: integer('monthly_credit_cap'),
    createdAt: ts('created_at').notNull(),
    /** Deleted by its owner: its tasks, members, keys and settings are gone; the row and its credit ledger stay. */
    deletedAt: ts('deleted_at'),
  },
  (t) => [uniqueIndex('workspaces_personal_of_idx').on(t.personalOf)],
);

/** Who belongs to a workspace, and as what (src/workspaces/access.ts). A workspace always has an owner. */
export const workspaceMembers = pgTable(
  'workspace_members',
  {
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    role: text('role').$type<WorkspaceRole>().notNull(),
    /** This member's own monthly caps in the workspace (their tasks' model spend and credits); null: no cap. */
    monthlySpendCapUsd: numeric('monthly_spend_cap_usd', { precision: 12, scale: 2, mode: 'number' }),
    monthlyCreditCap: integer('monthly_credit_cap'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.accountId] }),
    index('workspace_members_account_idx').on(t.accountId),
  ],
);

/** One-time invitations to a workspace: the secret's hash only; accepting needs an account. */
export const workspaceInvitations = pgTable(
  'workspace_invitations',
  {
    id: uuid('id').primaryKey(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    role: text('role').$type<WorkspaceRole>().notNull(),
    /** Whom it is meant for (shown to the inviter); anyone holding the link may accept. */
    email: text('email'),
    tokenHash: text('token_hash').notNull(),
    invitedBy: uuid('invited_by').references(() => accounts.id, { onDelete: 'set null' }),
    expiresAt: ts('expires_at').notNull(),
    acceptedAt: ts('accepted_at'),
    acceptedBy: uuid('accepted_by').references(() => accounts.id, { onDelete: 'set null' }),
    revokedAt: ts('revoked_at'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('workspace_invitations_hash_idx').on(t.tokenHash),
    index('workspace_invitations_workspace_idx').on(t.workspaceId),
  ],
);

/**
 * An account's connection to one code host of the deployment (config.scmHosts; `host` is its id):
 * the login there and the token, encrypted. OAuth tokens that expire carry their refresh token.
 */
export const scmConnections = pgTable(
  'scm_connections',
  {
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    host: text('host').notNull(),
    login: text('login').notNull(),
    tokenEnc: text('token_enc').notNull(),
    refreshEnc: text('refresh_enc'),
    expiresAt: ts('expires_at'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.host] }),
    index('scm_connections_login_idx').on(t.host, sql`lower(${t.login})`),
  ],
);

export const apiTokens = pgTable(
  'api_tokens',
  {
    id: uuid('id').primaryKey(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** The one workspace the token acts in (chosen when it is made). */
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    kind: text('kind').notNull(), // full | demo
    /** What the token may do (src/db/access-vocabulary.ts); null: all its owner's role allows. */
    scopes: text('scopes').array().$type<TokenScope[]>(),
    name: text('name').notNull().default(''),
    tokenHash: text('token_hash').notNull(),
    last4: text('last4').notNull(),
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    lastUsedAt: ts('last_used_at'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [uniqueIndex('api_tokens_hash_idx').on(t.tokenHash), index('api_tokens_account_idx').on(t.accountId)],
);

export const providerKeys = pgTable(
  'provider_keys',
  {
    id: uuid('id').primaryKey(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    keyEnc: text('key_enc').notNull(),
    last4: text('last4').notNull(),
    baseUrl: text('base_url'),
    contextWindow: integer('context_window'),
    defaultModel: text('default_model'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [uniqueIndex('provider_keys_workspace_provider_idx').on(t.workspaceId, t.provider)],
);

export const tasks = pgTable(
  'tasks',
  {
    id: uuid('id').primaryKey(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    /** The account that asked for it (GET /v1/tasks?mine=true); null once that account is deleted. */
    createdBy: uuid('created_by').references(() => accounts.id, { onDelete: 'set null' }),
    tokenId: uuid('token_id'),
    parentId: uuid('parent_id'),
    taskType: text('task_type').notNull(),
    mode: text('mode').notNull(),
    status: text('status').notNull(),
    approvalMode: text('approval_mode').notNull().default('auto'),
    /** The fixer the task runs, decided when it was created (src/workspaces/fixer-choice.ts); scaffold tasks: pipeline. */
    fixer: text('fixer').$type<FixerKind>().notNull().default('pipeline'),
    /**
     * The fixer attempts the task runs (docs/agent.md, "Attempts"), decided when it was created: its
     * own number, else the repository's default, else 1. Not `attempts`, which counts worker claims.
     */
    fixAttempts: integer('fix_attempts').notNull().default(1),
    prompt: text('prompt').notNull(),
    repoUrl: text('repo_url'),
    repoOwner: text('repo_owner'),
    repoName: text('repo_name'),
    baseBranch: text('base_branch').notNull().default('main'),
    prUrl: text('pr_url'),
    deployedUrl: text('deployed_url'),
    deployedRepo: text('deployed_repo'),
    siteSlug: text('site_slug'),
    diffSummary: text('diff_summary'),
    costUsd: numeric('cost_usd', { precision: 12, scale: 6, mode: 'number' }).notNull().default(0),
    tokensTotal: integer('tokens_total').notNull().default(0),
    durationMs: integer('duration_ms'),
    retryCount: integer('retry_count').notNull().default(0),
    prMerged: boolean('pr_merged').notNull().default(false),
    prMergedAt: ts('pr_merged_at'),
    humanEditAfter: boolean('human_edit_after').notNull().default(false),
    byok: boolean('byok').notNull().default(false),
    creditHeld: boolean('credit_held').notNull().default(false),
    error: text('error'),
    /** Outputs of the finished steps, so another worker can resume after the last one. */
    progress: jsonb('progress').notNull().default({}),
    currentStep: text('current_step'),
    /** The worker running the task now; cleared when it lets go (gate, finish). */
    workerId: text('worker_id'),
    heartbeatAt: ts('heartbeat_at'),
    /** Times a worker took the task up; a task whose worker died twice fails. */
    attempts: integer('attempts').notNull().default(0),
    /** When the task started waiting at an approval gate. */
    gateSince: ts('gate_since'),
    /** Where the task was asked for on the code host (src/triggers): null for a task made through the API. */
    trigger: jsonb('trigger').$type<TaskTrigger>(),
    createdAt: ts('created_at').notNull(),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    // Keyset pages of GET /v1/tasks: newest first by (created_at, id) within an account.
    index('tasks_workspace_created_idx').on(t.workspaceId, t.createdAt, t.id),
    index('tasks_workspace_parent_idx').on(t.workspaceId, t.parentId),
    // GET /v1/tasks?repo_url=: the repository compared case-insensitively, pages newest first.
    index('tasks_workspace_repo_idx').on(
      t.workspaceId,
      sql`lower(${t.repoOwner})`,
      sql`lower(${t.repoName})`,
      t.createdAt,
      t.id,
    ),
    index('tasks_workspace_status_idx').on(t.workspaceId, t.status),
    index('tasks_token_idx').on(t.tokenId),
    uniqueIndex('tasks_site_slug_idx').on(t.siteSlug),
  ],
);

export const taskLogs = pgTable(
  'task_logs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    taskId: uuid('task_id')
      .notNull()
      .references(() => tasks.id, { onDelete: 'cascade' }),
    step: text('step').notNull(),
    status: text('status').notNull(),
    // Objects only: the runner writes a step's input and output (or its error) as JSON objects.
    input: jsonb('input').$type<Record<string, unknown>>().notNull().default({}),
    output: jsonb('output').$type<Record<string, unknown>>().notNull().default({}),
    tokens: integer('tokens').notNull().default(0),
    costUsd: numeric('cost_usd', { precision: 12, scale: 6, mode: 'number' }).notNull().default(0),
    durationMs: integer('duration_ms').notNull().default(0),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('task_logs_task_idx').on(t.taskId, t.id)],
);

/** Every movement of credits; an account's balance equals grants - captures - open holds. */
export const creditLedger = pgTable(
  'credit_ledger',
  {
    id: uuid('id').primaryKey(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    taskId: uuid('task_id'),
    /** The account whose task held the credit (its member's monthly cap); null for grants and older rows. */
    accountId: uuid('account_id'),
    kind: text('kind').notNull(), // hold | capture | release | grant
    amount: integer('amount').notNull(),
    note: text('note'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('credit_ledger_workspace_idx').on(t.workspaceId), index('credit_ledger_task_idx').on(t.taskId)],
);

/**
 * Model spend as it is metered, one row per billed model call of a managed (non-BYOK) task: what
 * the monthly spend caps count. Kept when its task is deleted (deleting a task gives no spend back)
 * and with a deleted workspace, like the credit ledger.
 */
export const modelSpend = pgTable(
  'model_spend',
  {
    id: uuid('id').primaryKey(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    /** The task's created_by: whose member cap the spend counts against. */
    accountId: uuid('account_id'),
    taskId: uuid('task_id'),
    usd: numeric('usd', { precision: 12, scale: 6, mode: 'number' }).notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('model_spend_workspace_idx').on(t.workspaceId, t.createdAt)],
);

/**
 * The spend-limit thresholds (80 % and 100 %) a month has crossed, one row each: the
 * `spend.threshold` webhook event is recorded by whoever inserts the row, so it is sent once a
 * month per threshold. `subject` is `workspace` or a member's account id; `cap` is `usd` or `credits`.
 */
export const spendNotices = pgTable(
  'spend_notices',
  {
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    month: text('month').notNull(),
    subject: text('subject').notNull(),
    cap: text('cap').notNull(),
    threshold: integer('threshold').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.month, t.subject, t.cap, t.threshold] })],
);

/** Task-creation attempts, for the per-account sliding-window rate limit. */
export const taskPostAttempts = pgTable(
  'task_post_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    at: ts('at').notNull(),
  },
  (t) => [index('task_post_attempts_workspace_at_idx').on(t.workspaceId, t.at)],
);

/** Demo tokens handed out, for the per-IP issuance limit. */
export const demoIssuance = pgTable(
  'demo_issuance',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    ip: text('ip').notNull(),
    email: text('email').notNull(),
    accountId: uuid('account_id'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('demo_issuance_ip_idx').on(t.ip, t.createdAt)],
);

/**
 * What the service has learnt about a repository for one account (never shared across
 * accounts): lessons from feedback, worked examples, the test command that worked.
 * `repo` is the normalised repository URL, lower-cased (code hosts ignore case).
 */
export const repoMemory = pgTable(
  'repo_memory',
  {
    id: uuid('id').primaryKey(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    repo: text('repo').notNull(),
    kind: text('kind').notNull(), // lesson | example | test_command
    /** The item as the planner and fixer are shown it. */
    content: jsonb('content').notNull(),
    taskId: uuid('task_id'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('repo_memory_workspace_repo_idx').on(t.workspaceId, t.repo, t.createdAt)],
);

/**
 * Per account and repository (keyed as repo_memory is: the normalised URL, lower case): the
 * commands and environment the validator uses. Secrets are apart, in repo_secrets.
 */
export const repoSettings = pgTable(
  'repo_settings',
  {
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    repo: text('repo').notNull(),
    setupCommand: text('setup_command'),
    testCommand: text('test_command'),
    /** Variables for both phases: name → value. */
    env: jsonb('env').notNull().default({}),
    /** The fixer attempts of the repository's fix tasks that name none; null: one (docs/agent.md, "Attempts"). */
    attempts: integer('attempts'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.repo] })],
);

/** Setup-only secrets per account and repository, encrypted (secret-box; the context binds all three keys). */
export const repoSecrets = pgTable(
  'repo_secrets',
  {
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    repo: text('repo').notNull(),
    name: text('name').notNull(),
    valueEnc: text('value_enc').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.repo, t.name] })],
);

/**
 * The validator's kept baselines (docs/validator.md, "Kept baselines"): what the base commit's test
 * run reported — every test by the runner's id and its status, the failures, how the run ended —
 * per workspace, repository, base commit, environment key, test command and the change's test
 * files (all hashed into `key`, src/validator/baseline-key.ts), so every later validation on the
 * same base reuses it. A cache, bounded by EMEND_BASELINE_CACHE_MB: the least recently used rows
 * go first. No foreign key to workspaces: the eval's tasks name a workspace no row holds; a
 * workspace's deletion removes its rows (src/http/use-cases/workspace-tables.ts).
 */
export const baselineResults = pgTable(
  'baseline_results',
  {
    key: text('key').primaryKey(),
    workspaceId: uuid('workspace_id').notNull(),
    repository: text('repository').notNull(),
    baseCommit: text('base_commit').notNull(),
    /** The environment's key (src/environments/env-key.ts) under the service's secret. */
    envKey: text('env_key').notNull(),
    command: text('command').notNull(),
    /** The change's test files that ran on the base commit with it, hashed; null: none. */
    testFilesDigest: text('test_files_digest'),
    /** The run, as src/validator/kept-baseline.ts writes it. */
    result: jsonb('result').notNull(),
    /** The size of `result` as JSON text: what the cap counts. */
    bytes: integer('bytes').notNull(),
    hits: integer('hits').notNull().default(0),
    createdAt: ts('created_at').notNull(),
    usedAt: ts('used_at').notNull(),
  },
  (t) => [
    index('baseline_results_used_idx').on(t.usedAt),
    index('baseline_results_workspace_idx').on(t.workspaceId, t.repository),
  ],
);

/** When a periodic job (merge tracking) last ran, so one worker of many runs it each period. */
export const periodicRuns = pgTable('periodic_runs', {
  name: text('name').primaryKey(),
  lastRunAt: ts('last_run_at').notNull(),
});

/**
 * Raw bytes. bytea rather than base64 text: a site holds images and fonts, and bytea stores
 * them at their size (base64 adds a third) with no decoding in the database. node-postgres
 * returns a Buffer and PGlite a Uint8Array; both come out as a Buffer.
 */
const bytea = customType<{ data: Buffer; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (value) => (Buffer.isBuffer(value) ? value : Buffer.from(value)),
});

/**
 * The files of a scaffold task's generated site, one row per file: what the site server
 * serves and what deploy-git pushes. A task's set is replaced as a whole (src/sites/store.ts).
 */
export const siteFiles = pgTable(
  'site_files',
  {
    id: uuid('id').primaryKey(),
    taskId: uuid('task_id')
      .notNull()
      .references(() => tasks.id, { onDelete: 'cascade' }),
    /** Relative, '/'-separated, e.g. `index.html` or `assets/logo.svg`. */
    path: text('path').notNull(),
    content: bytea('content').notNull(),
    contentType: text('content_type').notNull(),
    size: integer('size').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [uniqueIndex('site_files_task_path_idx').on(t.taskId, t.path)],
);

/** Screenshots of a scaffold task's site taken by the validator (desktop, mobile); not part of the site. */
export const siteScreenshots = pgTable(
  'site_screenshots',
  {
    taskId: uuid('task_id')
      .notNull()
      .references(() => tasks.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    png: bytea('png').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.name] })],
);

/**
 * Feedback on a finished task. Every POST adds a row (the history is kept); the newest row is
 * the task's current feedback.
 */
export const taskFeedback = pgTable(
  'task_feedback',
  {
    id: uuid('id').primaryKey(),
    taskId: uuid('task_id')
      .notNull()
      .references(() => tasks.id, { onDelete: 'cascade' }),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    rating: integer('rating'),
    correct: text('correct'), // yes | partial | no
    reuse: text('reuse'), // yes | no
    note: text('note'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    index('task_feedback_task_idx').on(t.taskId, t.createdAt),
    index('task_feedback_workspace_idx').on(t.workspaceId),
  ],
);

/**
 * Control-panel sessions: the cookie holds a random secret, stored here as SHA-256 only. A
 * session lives no longer than the token it was opened with (revoking the token ends it).
 */
/**
 * Code-host connections started through OAuth (src/workspaces/scm-oauth-connect.ts): one row per
 * GET /v1/auth/scm/start, so a state is used once. A callback reached in a browser that does not
 * hold the flow's cookie keeps the code sealed here, untraded, until the account that started it
 * confirms with the code shown in that browser.
 */
export const scmOauthFlows = pgTable(
  'scm_oauth_flows',
  {
    id: text('id').primaryKey(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    host: text('host').notNull(),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    /** When the callback took the state: a second callback with it is refused. */
    usedAt: ts('used_at'),
    /** The host's code, sealed, while the flow waits for confirmation. */
    codeEnc: text('code_enc'),
    /** SHA-256 of the confirmation code the callback page showed. */
    confirmHash: text('confirm_hash'),
    /** Wrong confirmation codes tried by the account while this flow waited. */
    attempts: integer('attempts').notNull().default(0),
  },
  (t) => [index('scm_oauth_flows_workspace_idx').on(t.workspaceId)],
);

export const webSessions = pgTable(
  'web_sessions',
  {
    idHash: text('id_hash').primaryKey(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    tokenId: uuid('token_id')
      .notNull()
      .references(() => apiTokens.id, { onDelete: 'cascade' }),
    /** The workspace the panel switched to (a workspace the account belongs to); null: the token's. */
    workspaceId: uuid('workspace_id').references(() => workspaces.id, { onDelete: 'set null' }),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    /**
     * The session's public id (GET /v1/me/sessions, ending one): never the secret's hash, which is
     * the key the cookie is looked up by. Sessions from before it got one at the migration.
     */
    id: uuid('id').notNull().defaultRandom(),
    /** The browser's User-Agent at sign-in, clipped: for a person to tell their sessions apart. */
    userAgent: text('user_agent'),
    /** The client's address at sign-in, as the trusted-proxy rules read it. */
    clientAddress: text('client_address'),
    /**
     * The OpenID issuer the person signed in through (src/accounts/oidc-sign-in.ts); null for a
     * token or code-host sign-in. A workspace that requires single sign-on admits only sessions
     * from its issuer.
     */
    ssoIssuer: text('sso_issuer'),
  },
  (t) => [index('web_sessions_account_idx').on(t.accountId), uniqueIndex('web_sessions_id_idx').on(t.id)],
);

/**
 * A workspace's single sign-on through an OpenID Connect provider (docs/teams.md): the client
 * emend is at the provider (its secret sealed with the server's key), the role a person gets on
 * first sign-in through an email domain it takes in, and whether its members' panel sessions must
 * come from it.
 */
export const workspaceSso = pgTable('workspace_sso', {
  workspaceId: uuid('workspace_id')
    .primaryKey()
    .references(() => workspaces.id, { onDelete: 'cascade' }),
  issuer: text('issuer').notNull(),
  clientId: text('client_id').notNull(),
  clientSecretSealed: text('client_secret_sealed').notNull(),
  defaultRole: text('default_role').$type<WorkspaceRole>().notNull().default('member'),
  required: boolean('required').notNull().default(false),
  updatedAt: ts('updated_at').notNull(),
});

/** An email domain a workspace's single sign-on takes in: one workspace per domain, server-wide. */
export const ssoDomains = pgTable(
  'sso_domains',
  {
    domain: text('domain').primaryKey(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
  },
  (t) => [index('sso_domains_workspace_idx').on(t.workspaceId)],
);

/** Who a person is at an OpenID provider (issuer and subject), and their emend account. */
export const oidcIdentities = pgTable(
  'oidc_identities',
  {
    issuer: text('issuer').notNull(),
    subject: text('subject').notNull(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.issuer, t.subject] }), index('oidc_identities_account_idx').on(t.accountId)],
);

/**
 * Idempotency keys of task creation and continue, per account and route: the first request
 * with a key claims the row (the primary key makes a second claim impossible, on every API
 * node); the transaction that creates the task stores the response in it, so a task and its
 * stored answer exist together or not at all. A claim without a response is a request in
 * flight (or one that died: claimed_at tells how long ago).
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** The operation, not the URL: /v1/tasks and its unprefixed alias share keys. */
    route: text('route').notNull(),
    key: text('key').notNull(),
    /** sha256 of the canonical JSON of the request (body and path parameters). */
    fingerprint: text('fingerprint').notNull(),
    /** Changes with every claim, so only the request holding the claim can complete it. */
    claimId: uuid('claim_id').notNull(),
    claimedAt: ts('claimed_at').notNull(),
    responseStatus: integer('response_status'),
    responseBody: jsonb('response_body'),
    taskId: uuid('task_id').references(() => tasks.id, { onDelete: 'cascade' }),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.route, t.key] }),
    index('idempotency_keys_expires_idx').on(t.expiresAt),
  ],
);

/** An account's webhook endpoint: where events are POSTed, signed with its secret (Standard Webhooks). */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: uuid('id').primaryKey(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    events: jsonb('events').$type<string[]>().notNull(),
    description: text('description').notNull().default(''),
    /** The signing secret (`whsec_…`), encrypted like provider keys; shown once, at creation. */
    secretEnc: text('secret_enc').notNull(),
    enabled: boolean('enabled').notNull().default(true),
    /** Why the service disabled it (failing for days), shown to the account; null when enabled or disabled by hand. */
    disabledReason: text('disabled_reason'),
    /** Since when every attempt has failed; cleared by a success. */
    failingSince: ts('failing_since'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('webhook_endpoints_workspace_idx').on(t.workspaceId)],
);

/** One event for one endpoint: at least once, retried with back-off, its attempts recorded. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    /** Also the message id (`webhook-id`): the same on every attempt, so receivers can drop duplicates. */
    id: uuid('id').primaryKey(),
    endpointId: uuid('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    eventId: uuid('event_id').notNull(),
    eventType: text('event_type').notNull(),
    /** The exact body sent (kept 7 days, then null: the row stays for the history). */
    payload: text('payload'),
    status: text('status').notNull(), // pending | succeeded | failed
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at'),
    /** An attempt in flight holds the delivery until then; a worker that died lets it go when it passes. */
    lockedUntil: ts('locked_until'),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    lastDurationMs: integer('last_duration_ms'),
    createdAt: ts('created_at').notNull(),
    finishedAt: ts('finished_at'),
  },
  (t) => [
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.createdAt),
    index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt),
  ],
);

export const schema = {
  accounts,
  workspaces,
  workspaceMembers,
  workspaceInvitations,
  apiTokens,
  providerKeys,
  tasks,
  taskLogs,
  creditLedger,
  modelSpend,
  spendNotices,
  taskPostAttempts,
  demoIssuance,
  repoMemory,
  repoSettings,
  repoSecrets,
  periodicRuns,
  siteScreenshots,
  taskFeedback,
  webSessions,
  siteFiles,
  idempotencyKeys,
  webhookEndpoints,
  webhookDeliveries,
};

/**
 * A task's origin on the code host: the public part (host, kind, thread, comment, who asked) and
 * what the answers need (the enabling trigger, emend's answer comment once posted).
 */
export interface TaskTrigger {
  host: string;
  /**
   * What asked: a mention in a comment, the label, a line comment or a review on emend's pull
   * request, or its failing checks (`ci`: a CI follow-up, automatic or asked for with a mention).
   */
  kind: 'comment' | 'label' | 'line_comment' | 'review' | 'ci';
  thread: 'issue' | 'pull';
  number: number;
  /** The comment (or review) that asked; the thread's page for a label. */
  commentUrl: string;
  /** The person on the host who asked. */
  actor: string;
  /** repo_triggers.id */
  triggerId: string;
  /** emend's comment in the thread, edited in place as the task goes. */
  answerId?: string;
  /** The status the answer comment last said. */
  answered?: string;
  /** A CI follow-up's failure: what its prompt carried, and what its answer says about it. */
  ci?: TaskTriggerCi;
}

/** The failing checks a CI follow-up was started for (docs/triggers.md, "CI follow-ups"). */
export interface TaskTriggerCi {
  /** The pull request's head commit the checks failed on. */
  sha: string;
  /** The failing jobs, by name, with the step that failed where the host says. */
  jobs: { name: string; step?: string }[];
  /** The failing tests the logs name (the sandbox's reproduction is judged by them). */
  tests: string[];
  /** The automatic round it is (1, 2…), or null when a person asked for it (`@emend fix the CI`). */
  round: number | null;
}

/**
 * A repository an account turned triggers on for (issue 31): the webhook emend registered on it,
 * its secret (encrypted, context `trigger-secret:<id>`), and what starts a task. One per
 * repository on this server: two accounts answering the same mention would both run and both pay.
 */
/**
 * GitHub App installations on a host (docs/code-host.md, "As a GitHub App"): recorded when the
 * host says one was made, claimed by one workspace by a person who administers the account it is
 * on. The repositories it covers are asked of the host, never copied here.
 */
export const scmInstallations = pgTable(
  'scm_installations',
  {
    host: text('host').notNull(),
    /** The host's id of the installation (a number, as text). */
    installationId: text('installation_id').notNull(),
    /** The user or organisation it is installed on. */
    account: text('account').notNull(),
    accountType: text('account_type').notNull(),
    workspaceId: uuid('workspace_id').references(() => workspaces.id, { onDelete: 'set null' }),
    /** The emend account that claimed it for the workspace, and the host login they proved. */
    claimedBy: uuid('claimed_by'),
    claimedAs: text('claimed_as'),
    claimedAt: ts('claimed_at'),
    suspendedAt: ts('suspended_at'),
    /** Uninstalled on the host: kept so its tasks and deliveries say why they stopped. */
    removedAt: ts('removed_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.host, t.installationId] }),
    index('scm_installations_account_idx').on(t.host, sql`lower(${t.account})`),
    index('scm_installations_workspace_idx').on(t.workspaceId),
  ],
);

/**
 * A GitLab group's or a Gitea organisation's bot, registered by a workspace (docs/code-host.md):
 * its token acts on every repository of the group (GitLab: and its subgroups), one group webhook
 * delivers their events. One bot per group on the server.
 */
export const scmGroupBots = pgTable(
  'scm_group_bots',
  {
    id: uuid('id').primaryKey(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    host: text('host').notNull(),
    /** The group's full path (GitLab `group/sub`) or the organisation's name, as the host spells it. */
    groupPath: text('group_path').notNull(),
    /** The host's id of the group or organisation. */
    groupId: text('group_id').notNull(),
    /** The bot user the token acts as, with the name and email its commits carry. */
    botLogin: text('bot_login').notNull(),
    botName: text('bot_name').notNull(),
    botEmail: text('bot_email').notNull(),
    tokenEnc: text('token_enc').notNull(),
    hookId: text('hook_id').notNull(),
    secretEnc: text('secret_enc').notNull(),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('scm_group_bots_group_idx').on(t.host, sql`lower(${t.groupPath})`),
    index('scm_group_bots_workspace_idx').on(t.workspaceId),
  ],
);

export const repoTriggers = pgTable(
  'repo_triggers',
  {
    id: uuid('id').primaryKey(),
    workspaceId: uuid('workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    host: text('host').notNull(),
    /** The settings' key of the repository (repoKey of its URL). */
    repo: text('repo').notNull(),
    repoOwner: text('repo_owner').notNull(),
    repoName: text('repo_name').notNull(),
    /** The webhook registered on the repository; null when the host's GitHub App delivers its events. */
    hookId: text('hook_id'),
    /**
     * The events emend last asked that webhook for (emend's words: src/scm HookEvent). Null on a hook made
     * before they were recorded, which asks for no CI events: the workers' sweep brings it up to date
     * (docs/triggers.md, "Hooks made before CI follow-ups").
     */
    hookEvents: jsonb('hook_events').$type<string[]>(),
    secretEnc: text('secret_enc').notNull(),
    mention: text('mention').notNull(),
    label: text('label').notNull(),
    /** emend's trigger events: comments, labels, reviews. */
    events: jsonb('events').$type<string[]>().notNull(),
    /** Automatic CI follow-ups per pull request emend opened (0: none; docs/triggers.md, "CI follow-ups"). */
    ciRounds: integer('ci_rounds').notNull().default(2),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('repo_triggers_repo_idx').on(t.repo), index('repo_triggers_workspace_idx').on(t.workspaceId)],
);

/** What came of a pull request's failing checks: a follow-up started, refused (said in the thread), or the rounds ended. */
export const CI_ROUND_OUTCOMES = ['started', 'refused', 'ended'] as const;
export type CiRoundOutcome = (typeof CI_ROUND_OUTCOMES)[number];

/**
 * The CI follow-ups of a pull request emend opened (docs/triggers.md, "CI follow-ups"): one row per
 * failing commit emend acted on, automatically (`auto`: a failing check's delivery) or because a
 * person asked (`manual`: `@emend fix the CI`). The automatic ones are counted against the
 * trigger's `ci_rounds`, and one commit is acted on once (the unique index, which also makes two
 * deliveries about one failure take turns); `ended` says the automatic rounds are over.
 */
export const ciRounds = pgTable(
  'ci_rounds',
  {
    id: uuid('id').primaryKey(),
    triggerId: uuid('trigger_id')
      .notNull()
      .references(() => repoTriggers.id, { onDelete: 'cascade' }),
    pullNumber: integer('pull_number').notNull(),
    /** The pull request's head commit whose checks failed. */
    sha: text('sha').notNull(),
    kind: text('kind').$type<'auto' | 'manual'>().notNull(),
    outcome: text('outcome').$type<CiRoundOutcome>().notNull(),
    /** The failing jobs' names. */
    jobs: jsonb('jobs').$type<string[]>().notNull(),
    taskId: uuid('task_id'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('ci_rounds_auto_idx').on(t.triggerId, t.pullNumber, t.sha).where(sql`${t.kind} = 'auto'`),
    index('ci_rounds_pull_idx').on(t.triggerId, t.pullNumber),
  ],
);

/**
 * Where a delivery is: received (queued), acting (a job took it), ignored, started (a task),
 * answered (a reply instead of a task), failed.
 */
export const TRIGGER_DELIVERY_STATUSES = ['received', 'acting', 'ignored', 'started', 'answered', 'failed'] as const;
export type TriggerDeliveryStatus = (typeof TRIGGER_DELIVERY_STATUSES)[number];

/**
 * A delivery a trigger received: recorded before it is answered, acted on by a job. The delivery
 * id makes a redelivery recognisable; `event_key` (the comment and action, the label, the review)
 * catches a host that redelivers under a new id (Gitea).
 */
export const triggerDeliveries = pgTable(
  'trigger_deliveries',
  {
    id: uuid('id').primaryKey(),
    triggerId: uuid('trigger_id')
      .notNull()
      .references(() => repoTriggers.id, { onDelete: 'cascade' }),
    deliveryId: text('delivery_id').notNull(),
    event: text('event').notNull(),
    eventKey: text('event_key'),
    status: text('status').$type<TriggerDeliveryStatus>().notNull(),
    reason: text('reason'),
    taskId: uuid('task_id'),
    /** The payload until it is acted on; cleared after. */
    payload: jsonb('payload'),
    receivedAt: ts('received_at').notNull(),
    doneAt: ts('done_at'),
  },
  (t) => [
    uniqueIndex('trigger_deliveries_delivery_idx').on(t.triggerId, t.deliveryId),
    uniqueIndex('trigger_deliveries_event_idx').on(t.triggerId, t.eventKey),
  ],
);

/**
 * The audit log (docs/security.md, "Audit log"): one row per act the gate decided and per
 * security-relevant event, written in the act's transaction. Append-only: no route updates or
 * deletes a row; each carries the hash of the previous row of its workspace (`prev_hash`) and its
 * own (`hash`, sha256 of `prev_hash` and the row's canonical JSON: src/audit/chain.ts), so that
 * `emend audit verify` finds a row edited or removed. `seq` numbers a workspace's rows from 1. No
 * foreign key: the log outlives what it names (a deleted workspace, account or token). A
 * `summary` row stands for the rows retention folded (src/audit/retention.ts).
 */
export const auditEvents = pgTable(
  'audit_events',
  {
    workspaceId: uuid('workspace_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    at: ts('at').notNull(),
    /** `event` (an act or a security event) or `summary` (rows folded by retention). */
    kind: text('kind').notNull(),
    /** What happened: `token.minted`, `member.role_changed`, … or, for a refused act, the gate's act. */
    action: text('action').notNull(),
    /** `allowed` (done) or `denied` (the gate refused it: 403). */
    decision: text('decision').notNull(),
    actorAccountId: uuid('actor_account_id'),
    actorTokenId: uuid('actor_token_id'),
    /** The control-panel session (its public id) the request came with; null for a Bearer token. */
    actorSessionId: uuid('actor_session_id'),
    /** The actor's role in the workspace at the time. */
    actorRole: text('actor_role'),
    /** The ids acted on: `{task_id}`, `{account_id}`, `{token_id}`, `{provider}`… */
    targets: jsonb('targets').$type<Record<string, string>>().notNull(),
    requestId: text('request_id'),
    /** As the trusted-proxy rules read it (Fastify's request.ip). */
    clientAddress: text('client_address'),
    userAgent: text('user_agent'),
    /** Names and states, never a secret value (a secret's name, a role, a list of scopes). */
    detail: jsonb('detail').$type<Record<string, unknown>>().notNull(),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.seq] }),
    index('audit_events_workspace_at_idx').on(t.workspaceId, t.at),
  ],
);
