import { type TSchema, Type } from '@sinclair/typebox';
import { TASK_STATUSES } from '../tasks/states.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time' });

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'machine-readable code from the spec' }),
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
    status: Type.Union(TASK_STATUSES.map((s) => Type.Literal(s))),
    mode: Type.Union([Type.Literal('preview'), Type.Literal('pr')]),
    task_type: Type.Union([Type.Literal('fix'), Type.Literal('scaffold')]),
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
    status: Type.String(),
    pr_url: Nullable(Type.String()),
    mode: Type.String(),
    task_type: Type.String(),
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
    step: Type.String(),
    status: Type.String(),
    input: Type.Record(Type.String(), Type.Unknown()),
    output: Type.Record(Type.String(), Type.Unknown()),
    tokens: Type.Integer(),
    cost_usd: Type.Number(),
    duration_ms: Type.Integer(),
    created_at: Timestamp,
  },
  { $id: 'Log' },
);

export const ProviderEnum = Type.Union([Type.Literal('openai'), Type.Literal('anthropic'), Type.Literal('google')]);

export const ProviderKey = Type.Object(
  {
    provider: Type.String(),
    last4: Type.String(),
    base_url: Nullable(Type.String()),
    default_model: Nullable(Type.String()),
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
    scm: Nullable(Type.String()),
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
export const sharedSchemas = [ErrorBody, ProviderKey, Task, TaskSummary, Log, TokenRecord, Profile, AdminAccount];

export const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
