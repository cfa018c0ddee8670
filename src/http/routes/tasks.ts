import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { agentLimits, billingPlan, billingPlanNameOf } from '../../billing/billing-plan.js';
import { MAX_ATTEMPTS } from '../../billing/attempt-limit.js';
import { chooseFixer } from '../../workspaces/fixer-choice.js';
import { BILLING_PLAN_NAMES } from '../../config/billing-plans.js';
import { FIXER_KINDS } from '../../config/config.js';
import type { Deps } from '../../deps.js';
import { countTaskPost } from '../../tasks/rate-limit.js';
import { deleteTask } from '../../tasks/delete.js';
import { PROMPT_LIMITS, PROMPT_RULE, createTask, getOwnTask, taskLogsOf, usedThisMonth } from '../../tasks/service.js';
import type { Task as TaskRow } from '../../tasks/service.js';
import { audited, auditWithin } from '../audit.js';
import { TASK_PAGE_MAX, listTaskPage } from '../../tasks/task-list.js';
import { caller } from '../auth.js';
import { IdempotencyHeaders, idempotent, releaseUnlessStored, storeCreated } from '../idempotency.js';
import { STEP_NAMES } from '../../step-contract/index.js';
import { taskJson, taskSummaryJson } from '../../tasks/present.js';
import { TASK_STATUSES } from '../../tasks/states.js';
import type { TaskLog } from '../../tasks/task.js';
import { LOG_STATUSES } from '../../tasks/task-logs.js';
import { errorResponses } from '../errors.js';
import { Count, IdParams, Nullable, StringEnum, Timestamp, Url, Usd, Uuid, described } from '../schema-parts.js';

// The task resource's wire shape: the Task, TaskSummary and Log components, beside the routes
// that return them. The task object's one presenter is src/tasks/present.ts, below this layer
// because webhook events carry the same object; the log's is here.

export const TaskStatus = StringEnum(TASK_STATUSES);
const TaskMode = StringEnum(['preview', 'pr'] as const);
const TaskType = StringEnum(['fix', 'scaffold'] as const);
export const ApprovalMode = StringEnum(['auto', 'manual'] as const);
export const Fixer = (description: string) => StringEnum(FIXER_KINDS, { description });

const TaskTrigger = Type.Object(
  {
    host: Type.String({ description: 'the code host (its id on this server)' }),
    kind: StringEnum(['comment', 'label', 'line_comment', 'review', 'ci'] as const, {
      description:
        'what asked: a comment mentioning emend, the label, a line comment or a review on its pull request, or its ' +
        'failing checks (ci: a CI follow-up)',
    }),
    thread: StringEnum(['issue', 'pull'] as const),
    number: Type.Integer({ minimum: 1, description: 'the issue or pull request (merge request) number' }),
    comment_url: Url({ description: 'the comment or review that asked; the issue for a label' }),
    actor: Type.String({
      description: 'who asked, by their login on the host (a CI follow-up: who the delivery names)',
    }),
    ci: Type.Optional(
      Type.Object(
        {
          sha: Type.String({ description: "the pull request's head commit whose checks failed" }),
          jobs: Type.Array(
            Type.Object({
              name: Type.String(),
              step: Type.Optional(Type.String({ description: 'the step that failed, where the host or the log says' })),
            }),
            { description: 'the failing jobs the follow-up was started for' },
          ),
          tests: Type.Array(Type.String(), { description: 'the failing tests their logs name' }),
          round: Nullable(
            Type.Integer({ minimum: 1, description: 'the automatic round (1, 2…); null when a person asked for it' }),
          ),
        },
        { description: 'a CI follow-up only (kind ci): the failure it was started for' },
      ),
    ),
  },
  { description: 'a task started on the code host (docs/triggers.md); null when it was made through the API' },
);

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
    fixer: Fixer(
      'the fixer the task runs, decided when it was created: its own choice, else the account’s default, else the ' +
        'server’s (docs/agent.md); scaffold tasks: pipeline',
    ),
    attempts: Type.Integer({
      minimum: 1,
      maximum: MAX_ATTEMPTS,
      description:
        'fixer attempts, the validator choosing (docs/agent.md, "Attempts"): the task’s own number, else the ' +
        'repository’s default, else 1; the fixer step’s log shows every attempt and why one was chosen',
    }),
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
    trigger: Nullable(TaskTrigger),
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
    step: StringEnum(STEP_NAMES),
    status: StringEnum(LOG_STATUSES),
    input: Type.Record(Type.String(), Type.Unknown()),
    output: Type.Record(Type.String(), Type.Unknown()),
    tokens: Count(),
    cost_usd: Usd(),
    duration_ms: Count(),
    created_at: Timestamp,
  },
  { $id: 'Log' },
);

/** A step log record (Log). */
export function logJson(l: TaskLog) {
  return {
    id: l.id,
    step: l.step,
    status: l.status,
    input: l.input,
    output: l.output,
    tokens: l.tokens,
    cost_usd: Number(l.costUsd),
    duration_ms: l.durationMs,
    created_at: l.createdAt.toISOString(),
  };
}

/** This resource's named schemas, for src/http/components.ts. */
export const taskSchemas = [Task, TaskSummary, Log];

const CreateTaskBody = Type.Object(
  {
    prompt: Type.String({
      minLength: PROMPT_LIMITS.min,
      maxLength: PROMPT_LIMITS.max,
      pattern: PROMPT_LIMITS.pattern,
      description: PROMPT_RULE,
    }),
    repo_url: Type.Optional(
      Url({ description: 'a repository on the code host; required when task_type is fix, omitted for scaffold' }),
    ),
    base_branch: Type.Optional(Type.String({ minLength: 1, maxLength: 200, default: 'main' })),
    task_type: Type.Optional(StringEnum(['fix', 'scaffold'] as const, { default: 'fix' })),
    approval_mode: Type.Optional(
      StringEnum(['auto', 'manual'] as const, {
        description: 'manual enables the plan and diff gates; default: the account setting',
      }),
    ),
    fixer: Type.Optional(
      Fixer(
        'fix tasks: pipeline (one answer per round) or agent (a tool-using loop in the sandbox); default: the ' +
          'account’s setting, else the server’s. One the plan does not offer is a 400; scaffold tasks take none',
      ),
    ),
    attempts: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_ATTEMPTS,
        description:
          'fix tasks: how many fixer attempts to run, each validated, the best kept (docs/agent.md, "Attempts"); ' +
          'default: the repository’s setting, else 1. More than the plan allows (free 1, pro 3, scale 5) is a ' +
          '400 naming the limit; scaffold tasks take none',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        prompt: 'Fix the crash in Session.send when the proxy URL has no scheme',
        repo_url: 'https://github.com/psf/requests',
      },
      {
        prompt: 'Session.send ignores a timeout given as a tuple; find out why and fix it',
        repo_url: 'https://github.com/psf/requests',
        fixer: 'agent',
      },
      {
        prompt: 'Session.send drops the proxy’s port when the URL has no scheme; fix it and add a test',
        repo_url: 'https://github.com/psf/requests',
        attempts: 3,
      },
      { prompt: 'A landing page for a bakery in Lyon, with opening hours and a map', task_type: 'scaffold' },
    ],
  },
);

const ListQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: TASK_PAGE_MAX, default: TASK_PAGE_MAX, description: 'tasks per page' }),
  ),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'where the page starts: from the Link header' }),
  ),
  status: Type.Optional(TaskStatus),
  task_type: Type.Optional(TaskType),
  repo_url: Type.Optional(Url({ maxLength: 500, description: 'tasks on this repository (.git and case ignored)' })),
  parent_id: Type.Optional(Uuid({ description: 'tasks continued from this one' })),
  created_by: Type.Optional(
    Uuid({
      description: 'tasks this account asked for (your own: your id from GET /v1/me); the workspace’s otherwise',
    }),
  ),
  origin: Type.Optional(
    StringEnum(['api', 'code_host'] as const, {
      description: 'tasks made through the API, or started on the code host (a mention, the label, a review)',
    }),
  ),
  created_after: Type.Optional(Type.String({ format: 'date-time', description: 'created at or after' })),
  created_before: Type.Optional(Type.String({ format: 'date-time', description: 'created before' })),
});

/** The next page's address, relative to the request's own path so the /v1 alias and proxies keep working. */
function nextLink(url: string, query: Record<string, unknown>, cursor: string): string {
  const path = url.split('?')[0];
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && k !== 'cursor') params.set(k, String(v));
  params.set('cursor', cursor);
  return `<${path}?${params}>; rel="next"`;
}

const Limits = Type.Object({
  limits: Type.Object({
    monthly: Count(),
    concurrent: Count(),
    maxFiles: Count(),
    maxRetries: Count(),
    mode: TaskMode,
    fixers: Type.Array(Fixer('a fixer a task may choose'), { description: 'the fixers this plan offers' }),
    agentTurns: Count({ description: 'the agent fixer’s model turns at most (the plan’s, capped by the server’s)' }),
    agentWallMs: Count({
      description: 'the agent fixer’s wall time at most, in ms (the plan’s, capped by the server’s)',
    }),
    maxAttempts: Type.Integer({ minimum: 1, description: 'the fixer attempts a fix task may ask for' }),
  }),
  used_this_month: Count(),
  plan: StringEnum(BILLING_PLAN_NAMES),
  use_byok: Type.Boolean(),
  fixer: Fixer('the fixer a new fix task that names none runs: your default, else the server’s, if the plan offers it'),
});

export const taskRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/tasks',
    {
      schema: {
        tags: ['tasks'],
        operationId: 'createTask',
        summary: 'Create a task',
        headers: IdempotencyHeaders,
        body: CreateTaskBody,
        response: {
          201: described('the created task (status pending)', Type.Ref('Task')),
          ...errorResponses(400, 401, 402, 409, 412, 429, 502),
        },
      },
      preValidation: [
        // A replay of an Idempotency-Key answers here: it counts nothing and creates nothing.
        idempotent(deps, 'tasks.create'),
        // Counted before validation: every POST counts against the window except those it refuses.
        async (request) => countTaskPost(deps, caller(request).workspace.id),
      ],
      onSend: releaseUnlessStored(deps),
    },
    async (request, reply) => {
      const audit = auditWithin(
        deps,
        request,
        (t: TaskRow) => ({
          action: 'task.created',
          targets: { task_id: t.id },
          detail: { task_type: t.taskType, mode: t.mode, repo: t.repoUrl },
        }),
        storeCreated(request),
      );
      const task = await createTask(deps, caller(request), request.body, { within: audit.within });
      await audit.announce();
      deps.metrics.tasksCreated.inc({ task_type: task.taskType, mode: task.mode });
      await deps.queue.enqueue(task.id);
      return reply.status(201).send(taskJson(task));
    },
  );

  app.get(
    '/tasks',
    {
      schema: {
        tags: ['tasks'],
        operationId: 'listTasks',
        summary: 'List the workspace’s tasks, newest first: the last 100, or a page of them, filtered',
        description:
          'Without parameters: the last 100 tasks, newest first. `limit` sets the page size; when more tasks ' +
          'follow, the `Link` header carries the next page (`rel="next"`, the same filters and a `cursor`), so the ' +
          'body stays an array. Filters combine with AND.',
        querystring: ListQuery,
        response: {
          200: described(
            'your tasks, newest first; a `Link` header (rel="next") when more follow',
            Type.Array(Type.Ref('TaskSummary')),
          ),
          ...errorResponses(400, 401),
        },
      },
    },
    async (request, reply) => {
      const page = await listTaskPage(deps, caller(request).workspace.id, request.query);
      if (page.next) reply.header('link', nextLink(request.url, request.query, page.next));
      return page.tasks.map(taskSummaryJson);
    },
  );

  app.get(
    '/tasks/limits',
    {
      schema: {
        tags: ['tasks'],
        operationId: 'getTaskLimits',
        summary: "Your plan's limits and this month's use",
        response: { 200: described("your plan's limits and this month's use", Limits), ...errorResponses(401) },
      },
    },
    async (request) => {
      const auth = caller(request);
      // A stored plan is always a plan name (accounts.ts checks it); an unknown one reads as free, as billingPlan does.
      const plan = billingPlanNameOf(auth.tokenKind === 'demo' ? 'demo' : auth.workspace.plan);
      const limits = billingPlan(plan);
      const { monthly, concurrent, maxFiles, maxRetries, mode, fixers, maxAttempts } = limits;
      const agent = agentLimits(limits, deps.config.fixer);
      return {
        limits: {
          monthly,
          concurrent,
          maxFiles,
          maxRetries,
          mode,
          fixers: [...fixers],
          agentTurns: agent.turns,
          agentWallMs: agent.wallMs,
          maxAttempts,
        },
        used_this_month: await usedThisMonth(deps, auth),
        plan,
        use_byok: auth.workspace.useByok,
        fixer: chooseFixer({
          workspaceDefault: auth.workspace.fixer,
          operatorDefault: deps.config.fixer.kind,
          billingPlan: limits,
          billingPlanName: plan,
        }),
      };
    },
  );

  app.get(
    '/tasks/:id',
    {
      schema: {
        tags: ['tasks'],
        operationId: 'getTask',
        summary: 'A task with its step logs',
        params: IdParams,
        response: {
          200: described(
            'the task and its step logs, oldest first',
            Type.Object({ task: Type.Ref('Task'), logs: Type.Array(Type.Ref('Log')) }),
          ),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
      const task = await getOwnTask(deps, caller(request).workspace.id, request.params.id);
      return { task: taskJson(task), logs: (await taskLogsOf(deps, task.id)).map(logJson) };
    },
  );

  app.delete(
    '/tasks/:id',
    {
      schema: {
        tags: ['tasks'],
        operationId: 'deleteTask',
        summary: 'Delete a finished task',
        description:
          'The task, its logs, site files, screenshots and feedback are removed; it answers 404 everywhere ' +
          'afterwards. Credit-ledger entries are kept. A task that is not finished is a 409: kill it first.',
        params: IdParams,
        response: { 204: Type.Null({ description: 'the task is deleted' }), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      await audited(deps, request, (d) => deleteTask(d, caller(request).workspace.id, request.params.id), {
        action: 'task.deleted',
        targets: { task_id: request.params.id },
      });
      return reply.status(204).send(null);
    },
  );
};
