import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { Deps } from '../../deps.js';
import { approveTask, continueTask, killTask } from '../../tasks/actions.js';
import { caller } from '../auth.js';
import { IdempotencyHeaders, idempotent, releaseUnlessStored, storeCreated } from '../idempotency.js';
import { taskJson } from '../../tasks/present.js';
import { errorResponses } from '../errors.js';
import { auditWithin } from '../audit.js';
import type { Task } from '../../tasks/service.js';
import { IdParams, StringEnum, described } from '../schema-parts.js';

export const taskActionRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.post(
    '/tasks/:id/kill',
    {
      schema: {
        tags: ['tasks'],
        operationId: 'killTask',
        summary: 'Force-stop a pending, running or waiting task; its processes are dead when this answers',
        params: IdParams,
        response: {
          200: described(
            'the task, cancelled; its processes are dead',
            Type.Object({ ok: Type.Boolean(), task: Type.Ref('Task') }),
          ),
          ...errorResponses(400, 401, 404, 409),
        },
      },
    },
    async (request) => {
      // Recorded in the transaction that cancels it; its processes are signalled after that commits.
      const audit = auditWithin(deps, request, (t: Task) => ({ action: 'task.killed', targets: { task_id: t.id } }));
      const killed = await killTask(deps, caller(request).workspace.id, request.params.id, audit.within);
      await audit.announce();
      return { ok: true, task: taskJson(killed) };
    },
  );

  app.post(
    '/tasks/:id/approve',
    {
      schema: {
        tags: ['tasks'],
        operationId: 'approveTask',
        summary: 'Approve a task waiting at its plan or diff gate; the plan may be edited',
        params: IdParams,
        body: Type.Object(
          {
            stage: StringEnum(['plan', 'diff'] as const),
            plan: Type.Optional(
              Type.Object(
                {
                  summary: Type.Optional(Type.String({ maxLength: 4000 })),
                  steps: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 50 })),
                  likely_files: Type.Optional(Type.Array(Type.String({ maxLength: 500 }), { maxItems: 100 })),
                  test_strategy: Type.Optional(Type.String({ maxLength: 4000 })),
                  risks: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 50 })),
                },
                { additionalProperties: false, description: 'an edited plan; replaces the fields it names' },
              ),
            ),
          },
          {
            additionalProperties: false,
            examples: [
              { stage: 'plan' },
              { stage: 'plan', plan: { likely_files: ['requests/sessions.py'] } },
              { stage: 'diff' },
            ],
          },
        ),
        response: {
          200: described(
            'the task, resumed past the gate',
            Type.Object({ ok: Type.Boolean(), task: Type.Ref('Task') }),
          ),
          ...errorResponses(400, 401, 404, 409),
        },
      },
    },
    async (request) => {
      const { stage, plan } = request.body;
      // Recorded in the transaction that resumes it; the run is queued after that commits.
      const audit = auditWithin(deps, request, (t: Task) => ({
        action: 'task.approved',
        targets: { task_id: t.id },
        detail: { stage, plan_edited: plan !== undefined },
      }));
      const approved = await approveTask(
        deps,
        caller(request).workspace.id,
        request.params.id,
        stage,
        plan,
        audit.within,
      );
      await audit.announce();
      return { ok: true, task: taskJson(approved) };
    },
  );

  app.post(
    '/tasks/:id/continue',
    {
      schema: {
        tags: ['tasks'],
        operationId: 'continueTask',
        summary: 'Promote a finished preview to a full pull-request run; returns the child task',
        headers: IdempotencyHeaders,
        params: IdParams,
        response: {
          201: described('the child task: a pull-request run starting from the preview', Type.Ref('Task')),
          ...errorResponses(400, 401, 402, 404, 409, 412, 429),
        },
      },
      preValidation: idempotent(deps, 'tasks.continue'),
      onSend: releaseUnlessStored(deps),
    },
    async (request, reply) => {
      const audit = auditWithin(
        deps,
        request,
        (child: Task) => ({ action: 'task.continued', targets: { task_id: request.params.id, child_id: child.id } }),
        storeCreated(request),
      );
      const child = await continueTask(deps, caller(request), request.params.id, { within: audit.within });
      await audit.announce();
      return reply.status(201).send(taskJson(child));
    },
  );
};
