import { type TSchema, Type } from '@sinclair/typebox';
import { LLM_PROVIDERS } from '../config.js';
import { ERROR_CODES } from '../errors.js';
import { SCM_BRAND } from '../scm/github.js';
import { STEP_NAMES } from '../step-contract/index.js';
import { LOG_STATUSES } from '../tasks/task-logs.js';
import { TASK_STATUSES } from '../tasks/states.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time' });

/**
 * A string from a closed vocabulary, written as `enum` in the document so generated clients
 * (the panel's types) name every value. Only the document gets stricter: a plain string
 * schema serializes the same bytes, so responses are unchanged.
 */
const OneOf = <T extends string>(values: readonly T[], options: { description?: string } = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });

export const TaskStatus = OneOf(TASK_STATUSES);
export const TaskMode = OneOf(['preview', 'pr'] as const);
export const TaskType = OneOf(['fix', 'scaffold'] as const);

export const ErrorBody = Type.Object(
  {
    error: OneOf(ERROR_CODES, { description: 'machine-readable code from the spec' }),
    message: Type.String(),
    request_id: Type.String(),
  },
  { $id: 'Error' },
);

export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, Type.Ref('Error')]));

export const Task = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    status: TaskStatus,
    mode: TaskMode,
    task_type: TaskType,
    prompt: Type.String(),
    repo_url: Nullable(Type.String()),
    repo_owner: Nullable(Type.String()),
    repo_name: Nullable(Type.String()),
    base_branch: Type.String(),
    approval_mode: Type.String(),
    parent_id: Nullable(Type.String()),
    pr_url: Nullable(Type.String()),
    deployed_url: Nullable(Type.String()),
    deployed_repo: Nullable(Type.String()),
    diff_summary: Nullable(Type.String()),
    cost_usd: Type.Number(),
    tokens_total: Type.Integer(),
    duration_ms: Nullable(Type.Integer()),
    retry_count: Type.Integer(),
    pr_merged: Type.Boolean(),
    pr_merged_at: Nullable(Timestamp),
    human_edit_after: Type.Boolean(),
    byok: Type.Boolean(),
    error: Nullable(Type.String()),
    created_at: Timestamp,
    started_at: Nullable(Timestamp),
    finished_at: Nullable(Timestamp),
  },
  { $id: 'Task' },
);

export const TaskSummary = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    prompt: Type.String(),
    status: TaskStatus,
    pr_url: Nullable(Type.String()),
    mode: TaskMode,
    task_type: TaskType,
    repo_url: Nullable(Type.String()),
    deployed_url: Nullable(Type.String()),
    cost_usd: Type.Number(),
    created_at: Timestamp,
    finished_at: Nullable(Timestamp),
  },
  { $id: 'TaskSummary' },
);

export const Log = Type.Object(
  {
    id: Type.Integer(),
    step: OneOf(STEP_NAMES),
    status: OneOf(LOG_STATUSES),
    input: Type.Record(Type.String(), Type.Unknown()),
    output: Type.Record(Type.String(), Type.Unknown()),
    tokens: Type.Integer(),
    cost_usd: Type.Number(),
    duration_ms: Type.Integer(),
    created_at: Timestamp,
  },
  { $id: 'Log' },
);

/**
 * The data of a `state` event on GET /v1/tasks/{id}/logs/stream: what of the task a run changes,
 * so a client follows the task from the stream alone, without re-reading it.
 */
export const TaskStateEvent = Type.Object(
  {
    status: TaskStatus,
    pr_url: Nullable(Type.String()),
    cost_usd: Type.Number(),
    tokens_total: Type.Integer(),
    deployed_url: Nullable(Type.String()),
    error: Nullable(Type.String()),
  },
  { $id: 'TaskStateEvent', description: 'data of a `state` event of the task log stream' },
);

/** The data of a `log` event on the task log stream (its `id:` line is the log row id). */
export const TaskLogEvent = Type.Object(
  {
    step: OneOf(STEP_NAMES),
    status: OneOf(LOG_STATUSES),
    output: Type.Record(Type.String(), Type.Unknown()),
    created_at: Timestamp,
  },
  { $id: 'TaskLogEvent', description: 'data of a `log` event of the task log stream' },
);

export const ProviderEnum = Type.Union([Type.Literal('openai'), Type.Literal('anthropic'), Type.Literal('google')]);

export const ProviderKey = Type.Object(
  {
    provider: OneOf(LLM_PROVIDERS),
    last4: Type.String(),
    base_url: Nullable(Type.String()),
    default_model: Nullable(Type.String()),
    context_window: Nullable(Type.Integer()),
    created_at: Timestamp,
  },
  { $id: 'ProviderKey' },
);

export const TokenRecord = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    kind: Type.String(),
    last4: Type.String(),
    created_at: Timestamp,
    last_used_at: Nullable(Timestamp),
    expires_at: Nullable(Timestamp),
    revoked_at: Nullable(Timestamp),
  },
  { $id: 'TokenRecord' },
);

export const Profile = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    name: Type.String(),
    plan: Type.String(),
    credits: Type.Integer(),
    use_byok: Type.Boolean(),
    approval_mode: Type.String(),
    scm: Nullable(Type.String({ description: 'login on the code host; null when not connected' })),
    [SCM_BRAND]: Nullable(
      Type.String({
        description: `the same login under the code host's brand name (${SCM_BRAND}); always equal to scm`,
      }),
    ),
    api_keys: Type.Array(Type.Ref('ProviderKey')),
    is_admin: Type.Boolean(),
    created_at: Timestamp,
  },
  { $id: 'Profile' },
);

export const AdminAccount = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    name: Type.String(),
    plan: Type.String(),
    credits: Type.Integer(),
    use_byok: Type.Boolean(),
    is_admin: Type.Boolean(),
    created_at: Timestamp,
  },
  { $id: 'AdminAccount' },
);

/** Shared schemas registered once with app.addSchema and referenced by $id. */
export const sharedSchemas = [
  ErrorBody,
  ProviderKey,
  Task,
  TaskSummary,
  Log,
  TaskStateEvent,
  TaskLogEvent,
  TokenRecord,
  Profile,
  AdminAccount,
];

export const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
