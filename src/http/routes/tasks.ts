import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { planLimits } from '../../accounts/plans.js';
import type { Deps } from '../../deps.js';
import { countTaskPost } from '../../tasks/rate-limit.js';
import { createTask, getOwnTask, listTasks, taskLogsOf, usedThisMonth } from '../../tasks/service.js';
import { caller } from '../auth.js';
import { IdempotencyHeaders, idempotent, releaseUnlessStored, storeCreated } from '../idempotency.js';
import { logJson, taskJson, taskSummaryJson } from '../present.js';
import { IdParams, errorResponses } from '../schemas.js';

const CreateTaskBody = Type.Object(
  {
    prompt: Type.String({ minLength: 3, maxLength: 2000, description: '3 to 2000 characters' }),
    repo_url: Type.Optional(Type.String({ description: 'required when task_type is fix; omit for scaffold' })),
    base_branch: Type.Optional(Type.String({ minLength: 1, maxLength: 200, default: 'main' })),
    task_type: Type.Optional(Type.Union([Type.Literal('fix'), Type.Literal('scaffold')], { default: 'fix' })),
    approval_mode: Type.Optional(
      Type.Union([Type.Literal('auto'), Type.Literal('manual')], {
        description: 'manual enables the plan and diff gates; default: the account setting',
      }),
    ),
  },
  { additionalProperties: false },
);

const Limits = Type.Object({
  limits: Type.Object({
    monthly: Type.Integer(),
    concurrent: Type.Integer(),
    maxFiles: Type.Integer(),
    maxRetries: Type.Integer(),
    mode: Type.String(),
  }),
  used_this_month: Type.Integer(),
  plan: Type.String(),
  use_byok: Type.Boolean(),
});

export const taskRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/tasks',
    {
      schema: {
        tags: ['tasks'],
        summary: 'Create a task',
        headers: IdempotencyHeaders,
        body: CreateTaskBody,
        response: { 201: Type.Ref('Task'), ...errorResponses(400, 401, 402, 409, 412, 429, 502) },
      },
      preValidation: [
        // A replay of an Idempotency-Key answers here: it counts nothing and creates nothing.
        idempotent(deps, 'tasks.create'),
        // Counted before validation: every POST counts against the window except those it refuses.
        async (request) => countTaskPost(deps, caller(request).account.id),
      ],
      onSend: releaseUnlessStored(deps),
    },
    async (request, reply) => {
      const task = await createTask(deps, caller(request), request.body, { within: storeCreated(request) });
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
        summary: 'List your last 100 tasks, newest first',
        response: { 200: Type.Array(Type.Ref('TaskSummary')), ...errorResponses(401) },
      },
    },
    async (request) => (await listTasks(deps, caller(request).account.id)).map(taskSummaryJson),
  );

  app.get(
    '/tasks/limits',
    {
      schema: {
        tags: ['tasks'],
        summary: "Your plan's limits and this month's use",
        response: { 200: Limits, ...errorResponses(401) },
      },
    },
    async (request) => {
      const auth = caller(request);
      const plan = auth.tokenKind === 'demo' ? 'demo' : auth.account.plan;
      const { monthly, concurrent, maxFiles, maxRetries, mode } = planLimits(plan);
      return {
        limits: { monthly, concurrent, maxFiles, maxRetries, mode },
        used_this_month: await usedThisMonth(deps, auth),
        plan,
        use_byok: auth.account.useByok,
      };
    },
  );

  app.get(
    '/tasks/:id',
    {
      schema: {
        tags: ['tasks'],
        summary: 'A task with its step logs',
        params: IdParams,
        response: {
          200: Type.Object({ task: Type.Ref('Task'), logs: Type.Array(Type.Ref('Log')) }),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request) => {
      const task = await getOwnTask(deps, caller(request).account.id, request.params.id);
      return { task: taskJson(task), logs: (await taskLogsOf(deps, task.id)).map(logJson) };
    },
  );
};
