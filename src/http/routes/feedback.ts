import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { TSchema } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import { NOTE_MAX, feedbackJson, getFeedback, postFeedback } from '../../feedback/feedback.js';
import { deleteMemoryItem, listMemory, memoryText } from '../../memory/repo-memory.js';
import { parseRepoUrl } from '../../scm/urls.js';
import { audited } from '../audit.js';
import { caller } from '../auth.js';
import { errorResponses } from '../errors.js';
import { IdParams, described, StringEnum } from '../schema-parts.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Correct = StringEnum(['yes', 'partial', 'no'] as const);
const Reuse = StringEnum(['yes', 'no'] as const);

const FeedbackBody = Type.Object(
  {
    rating: Type.Optional(Type.Integer({ minimum: 0, maximum: 5 })),
    correct: Type.Optional(Correct),
    reuse: Type.Optional(
      StringEnum(['yes', 'no'] as const, {
        description: 'yes keeps this task’s plan and diff as a worked example for later tasks on the repository',
      }),
    ),
    note: Type.Optional(
      Type.String({
        maxLength: NOTE_MAX,
        description:
          'in your words; with correct no or partial it becomes a lesson for later tasks on the repository; an empty note clears it',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        rating: 4,
        correct: 'partial',
        reuse: 'no',
        note: 'the fix was right but the test belongs in tests/test_sessions.py',
      },
    ],
    description:
      'every field optional; fields left out keep their earlier value, so {} (or no body) changes nothing and answers the current feedback',
  },
);

const Feedback = Type.Object(
  {
    task_id: Type.String({ format: 'uuid' }),
    rating: Nullable(Type.Integer()),
    correct: Nullable(Correct),
    reuse: Nullable(Reuse),
    note: Nullable(Type.String()),
    updated_at: Type.String({ format: 'date-time' }),
    history_count: Type.Integer({ description: 'how many posts made this feedback; each is kept' }),
  },
  { description: 'the current feedback: every post merged over the ones before it' },
);

const MemoryItem = Type.Object({
  id: Type.String({ format: 'uuid' }),
  kind: StringEnum(['lesson', 'example', 'test_command'] as const),
  text: Type.String({ description: 'the item as the planner and fixer are shown it' }),
  content: Type.Record(Type.String(), Type.Unknown()),
  task_id: Nullable(Type.String({ format: 'uuid' })),
  created_at: Type.String({ format: 'date-time' }),
});

/** Feedback on tasks, and the repo memory it feeds. */
export const feedbackRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  // Demo tokens may give feedback on their own tasks: it is part of trying a task out, and
  // what it teaches stays in the demo account's own memory.
  app.post(
    '/tasks/:id/feedback',
    {
      schema: {
        tags: ['tasks'],
        operationId: 'giveFeedback',
        summary: 'Give (or update) feedback on a finished task; it tunes later tasks on the same repository',
        params: IdParams,
        body: FeedbackBody,
        response: { 200: described('the feedback as stored', Feedback), ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request) =>
      feedbackJson(
        await audited(
          deps,
          request,
          (d) => postFeedback(d, caller(request).workspace.id, request.params.id, request.body),
          { action: 'feedback.given', targets: { task_id: request.params.id } },
        ),
      ),
  );

  app.get(
    '/tasks/:id/feedback',
    {
      schema: {
        tags: ['tasks'],
        operationId: 'getFeedback',
        summary: "A task's current feedback",
        params: IdParams,
        response: { 200: described("the task's current feedback", Feedback), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => feedbackJson(await getFeedback(deps, caller(request).workspace.id, request.params.id)),
  );

  app.get(
    '/me/memory',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'listMemory',
        summary: 'Your repo memory for a repository: lessons, worked examples and the test command that worked',
        querystring: Type.Object(
          {
            repo: Type.String({
              minLength: 1,
              maxLength: 500,
              description: 'the repository URL, as in POST /v1/tasks',
            }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: described(
            'the repo memory items for that repository',
            Type.Object({
              repo: Type.String({ description: 'the repository, normalised' }),
              items: Type.Array(MemoryItem, { description: 'newest first' }),
            }),
          ),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const repo = parseRepoUrl(request.query.repo, deps.config).url;
      const items = await listMemory(deps, caller(request).workspace.id, repo);
      return {
        repo,
        items: items.map((m) => ({
          id: m.id,
          kind: m.kind,
          text: memoryText(m),
          content: m.content as unknown as Record<string, unknown>,
          task_id: m.taskId,
          created_at: m.createdAt.toISOString(),
        })),
      };
    },
  );

  app.delete(
    '/me/memory/:id',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'deleteMemoryItem',
        summary: 'Forget one repo memory item',
        params: IdParams,
        response: {
          200: described('the item is forgotten', Type.Object({ deleted: Type.Boolean() })),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const removed = await audited(
        deps,
        request,
        (d) => deleteMemoryItem(d, caller(request).workspace.id, request.params.id),
        (gone) => (gone ? { action: 'memory.removed', targets: { memory_id: request.params.id } } : null),
      );
      if (!removed) throw new AppError('not_found', `no memory item ${request.params.id}`);
      return { deleted: true };
    },
  );
};
