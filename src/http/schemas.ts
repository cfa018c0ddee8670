import { type TSchema, Type } from '@sinclair/typebox';
import { LLM_PROVIDERS } from '../config/llm.js';
import { BILLING_PLAN_NAMES } from '../config/billing-plans.js';
import { ERROR_CODES } from '../errors.js';
import { SCM_KINDS } from '../config/scm-hosts.js';
import { STEP_NAMES } from '../step-contract/index.js';
import { LOG_STATUSES } from '../tasks/task-logs.js';
import { TASK_STATUSES } from '../tasks/states.js';
import { WEBHOOK_EVENTS } from '../webhooks/events.js';
import { STATUS_OF } from './errors.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time' });

/**
 * A string from a closed vocabulary, written as one `enum` in the document (not an anyOf of
 * one-value consts, which generated clients type as a plain string). Every closed set of strings
 * in a route schema goes through this helper. Validation is the same: Ajv checks `enum`.
 */
export const StringEnum = <T extends string>(
  values: readonly T[],
  options: { description?: string; default?: NoInfer<T>; examples?: NoInfer<T>[] } = {},
) => Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
const OneOf = StringEnum;

/** A URL field: `format: uri` (RFC 3986, as Ajv checks it on the way in). */
export const Url = (options: { description?: string; examples?: string[]; maxLength?: number } = {}) =>
  Type.String({ format: 'uri', ...options });
/** An id: a UUID (v7, time-sortable). */
export const Uuid = (options: { description?: string } = {}) => Type.String({ format: 'uuid', ...options });
/** A count or size that is never negative. */
export const Count = (options: { description?: string; maximum?: number } = {}) =>
  Type.Integer({ minimum: 0, ...options });
/** An amount in US dollars, never negative. */
export const Usd = (options: { description?: string } = {}) => Type.Number({ minimum: 0, ...options });

export const TaskStatus = OneOf(TASK_STATUSES);
export const TaskMode = OneOf(['preview', 'pr'] as const);
export const TaskType = OneOf(['fix', 'scaffold'] as const);
export const ApprovalMode = OneOf(['auto', 'manual'] as const);

export const ErrorBody = Type.Object(
  {
    error: OneOf(ERROR_CODES, { description: 'machine-readable code from the spec' }),
    message: Type.String({ description: 'a sentence for people; a field error starts with the field name' }),
    request_id: Uuid({ description: "this request's id, also in every log line of the request" }),
  },
  {
    $id: 'Error',
    description: 'every error answer has this body',
    examples: [
      {
        error: 'rate_limited',
        message: 'at most 20 task creations per 60 s; retry in 12 s',
        request_id: '0193a7c2-5b1e-7f3a-9c1d-2e4f6a8b0c1d',
      },
    ],
  },
);

/** What each error status means, in words; the codes it may carry are listed after (STATUS_OF). */
const ERROR_MEANING: Record<number, string> = {
  400: 'the request is malformed; the message names the field',
  401: 'no valid token: missing, malformed, unknown, revoked or expired',
  402: 'the plan, the credits or the demo token does not allow this',
  403: 'this token may not do this (a demo token, or an admin-only route)',
  404: 'no such resource of yours (another account’s looks the same as a missing one)',
  409: 'the resource is not in a state that allows this',
  412: 'connect your code-host account first (POST /v1/me/scm)',
  413: 'the request body is larger than this server accepts',
  415: 'send the body as application/json',
  429: 'too many requests or running tasks; retry after the Retry-After header’s seconds',
  500: 'the server failed; the request id is in its log',
  502: 'the code host could not be reached or refused',
  503: 'the database cannot be reached right now; retry after the Retry-After header’s seconds',
};

/** Declared on every 429 and 503: the client may retry after this many seconds. */
export const RetryAfterHeader = {
  'Retry-After': Type.Integer({ minimum: 0, description: 'seconds to wait before retrying' }),
};

const codesOf = (status: number) =>
  ERROR_CODES.filter((code) => STATUS_OF[code] === status)
    .map((code) => `\`${code}\``)
    .join(', ');

/**
 * The error responses of a route: the one Error schema, a description per status naming the
 * codes it may carry, and the Retry-After header where the service sends one.
 */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [
      s,
      Type.Ref('Error', {
        description: `${ERROR_MEANING[s] ?? 'an error'} (${codesOf(s)})`,
        ...(s === 429 || s === 503 ? { headers: RetryAfterHeader } : {}),
      }),
    ]),
  );

/** A success response's schema with its description in the document. */
export const described = <T extends TSchema>(description: string, schema: T): T => ({
  ...schema,
  description,
});

export const Task = Type.Object(
  {
    id: Uuid(),
    status: TaskStatus,
    mode: TaskMode,
    task_type: TaskType,
    prompt: Type.String(),
    repo_url: Nullable(Url()),
    repo_owner: Nullable(Type.String()),
    repo_name: Nullable(Type.String()),
    base_branch: Type.String(),
    approval_mode: ApprovalMode,
    parent_id: Nullable(Uuid({ description: 'the preview this task continues' })),
    pr_url: Nullable(Url()),
    deployed_url: Nullable(Url({ description: 'scaffold tasks: the live site' })),
    deployed_repo: Nullable(Url({ description: 'set after deploy-git: the new repository' })),
    diff_summary: Nullable(Type.String({ description: 'unified diff, truncated to 4 KB' })),
    cost_usd: Usd({ description: 'managed mode only; 0 under BYOK' }),
    tokens_total: Count(),
    duration_ms: Nullable(Count({ description: 'queue to finish' })),
    retry_count: Count({ maximum: 2, description: 'fixer retries after a failed validation, 0 to 2' }),
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
    id: Uuid(),
    prompt: Type.String(),
    status: TaskStatus,
    pr_url: Nullable(Url()),
    mode: TaskMode,
    task_type: TaskType,
    repo_url: Nullable(Url()),
    deployed_url: Nullable(Url()),
    cost_usd: Usd(),
    created_at: Timestamp,
    finished_at: Nullable(Timestamp),
  },
  { $id: 'TaskSummary' },
);

export const Log = Type.Object(
  {
    id: Type.Integer({ minimum: 1, description: 'the log row id; also the `id:` of its stream event' }),
    step: OneOf(STEP_NAMES),
    status: OneOf(LOG_STATUSES),
    input: Type.Record(Type.String(), Type.Unknown()),
    output: Type.Record(Type.String(), Type.Unknown()),
    tokens: Count(),
    cost_usd: Usd(),
    duration_ms: Count(),
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
    pr_url: Nullable(Url()),
    cost_usd: Usd(),
    tokens_total: Count(),
    deployed_url: Nullable(Url()),
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

export const ProviderEnum = StringEnum(LLM_PROVIDERS);

export const ProviderKey = Type.Object(
  {
    provider: OneOf(LLM_PROVIDERS),
    last4: Type.String(),
    base_url: Nullable(Url()),
    default_model: Nullable(Type.String()),
    context_window: Nullable(Type.Integer({ minimum: 1 })),
    created_at: Timestamp,
  },
  { $id: 'ProviderKey' },
);

export const TokenRecord = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    kind: OneOf(['full', 'demo'] as const),
    last4: Type.String(),
    created_at: Timestamp,
    last_used_at: Nullable(Timestamp),
    expires_at: Nullable(Timestamp),
    revoked_at: Nullable(Timestamp),
  },
  { $id: 'TokenRecord' },
);

/** A code host of this server by its id (config.scmHosts; GET /v1/me `scm_hosts`). */
export const ScmHostId = (
  description = 'the id of one of the server’s code hosts (GET /v1/me lists them); default: the first',
) => Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,39}$', description });

export const Profile = Type.Object(
  {
    id: Uuid(),
    email: Type.String({ format: 'email' }),
    name: Type.String(),
    plan: OneOf(BILLING_PLAN_NAMES),
    credits: Type.Integer(),
    use_byok: Type.Boolean(),
    approval_mode: ApprovalMode,
    scm: Nullable(Type.String({ description: 'login on the default (first) code host; null when not connected' })),
    ...Object.fromEntries(
      SCM_KINDS.map((brand) => [
        brand,
        Type.Optional(
          Nullable(
            Type.String({
              description: `the same login under the default host's brand name, present when that host is ${brand}; always equal to scm`,
            }),
          ),
        ),
      ]),
    ),
    scm_hosts: Type.Array(
      Type.Object({
        host: Type.String({ description: 'the host’s id: POST /v1/me/scm `host`' }),
        kind: OneOf(SCM_KINDS),
        web_url: Type.String({ format: 'uri' }),
        login: Nullable(Type.String({ description: 'your login there; null when not connected' })),
        oauth: Type.Boolean({ description: 'the host can be connected (and signed in with) through OAuth' }),
      }),
      { description: 'every code host of this server, the default first' },
    ),
    api_keys: Type.Array(Type.Ref('ProviderKey')),
    is_admin: Type.Boolean(),
    created_at: Timestamp,
  },
  { $id: 'Profile' },
);

export const AdminAccount = Type.Object(
  {
    id: Uuid(),
    email: Type.String({ format: 'email' }),
    name: Type.String(),
    plan: OneOf(BILLING_PLAN_NAMES),
    credits: Type.Integer(),
    use_byok: Type.Boolean(),
    is_admin: Type.Boolean(),
    created_at: Timestamp,
  },
  { $id: 'AdminAccount' },
);

/** Shared schemas registered once with app.addSchema and referenced by $id. */
export const WebhookEvent = StringEnum(WEBHOOK_EVENTS);

export const WebhookEndpoint = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    url: Type.String({ format: 'uri' }),
    events: Type.Array(WebhookEvent),
    description: Type.String(),
    enabled: Type.Boolean(),
    disabled_reason: Type.Union([Type.String(), Type.Null()], {
      description: 'why the service disabled the endpoint (failing for days); null otherwise',
    }),
    failing_since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'WebhookEndpoint' },
);

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'the webhook-id header of every attempt' }),
    event_id: Type.String({ format: 'uuid' }),
    event: Type.String({ description: 'the event type, or ping' }),
    status: StringEnum(['pending', 'succeeded', 'failed'] as const),
    attempts: Type.Integer({ minimum: 0 }),
    next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_response_code: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    duration_ms: Type.Union([Type.Integer(), Type.Null()], { description: 'of the last attempt' }),
    payload_kept: Type.Boolean({ description: 'payloads are kept 7 days; only those can be redelivered' }),
    created_at: Type.String({ format: 'date-time' }),
    finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'WebhookDelivery' },
);

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
  WebhookEndpoint,
  WebhookDelivery,
];

export const IdParams = Type.Object({ id: Uuid() });
