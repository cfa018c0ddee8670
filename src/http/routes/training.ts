import { Readable } from 'node:stream';
import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import type { Deps } from '../../deps.js';
import { trainingLines, trainingSummary } from '../../feedback/training.js';
import { caller } from '../auth.js';
import { errorResponses } from '../errors.js';
import { described } from '../schema-parts.js';

const count = (description: string) => Type.Integer({ minimum: 0, description });

const EXPORT_DESCRIPTION = [
  'JSON Lines (application/x-ndjson), one line per task of yours that ended `done`, oldest first, streamed.',
  'Each line is an object with: `id`, `created_at`, `task_type`, `repo` (null for scaffold tasks), `prompt`,',
  "`plan` (the planner's plan: summary, steps, likely_files, test_strategy, risks; null if none), `located_files` (paths),",
  "`diff` (the fixer's unified diff, or null), `validator` ({passed, command, new_failures, fixed}, or null),",
  '`pr_url`, `pr_merged`, `pr_merged_at`, `human_edit_after`, and `feedback` (your current feedback:',
  '{rating, correct, reuse, note, updated_at}, or null).',
  "It never holds another account's tasks, tokens or keys.",
].join('\n');

/** What the caller's data could teach a model: counts and a JSON Lines export of their done tasks. */
export const trainingRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/me/training/summary',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'getTrainingSummary',
        summary: 'Counts of your exportable data (done tasks)',
        response: {
          200: described(
            'counts of your exportable data',
            Type.Object({
              done_tasks: count('your tasks that ended done: the lines of the export'),
              with_feedback: count('of those, tasks with feedback'),
              by_rating: Type.Object(
                {
                  '0': count(''),
                  '1': count(''),
                  '2': count(''),
                  '3': count(''),
                  '4': count(''),
                  '5': count(''),
                  unrated: count('no rating, or no feedback'),
                },
                { description: 'done tasks by their current rating; the counts add up to done_tasks' },
              ),
              tokens_total: count('model tokens the done tasks used'),
            }),
          ),
          ...errorResponses(401, 403),
        },
      },
    },
    async (request) => trainingSummary(deps, caller(request).workspace.id),
  );

  app.get(
    '/me/training/export.jsonl',
    {
      config: { access: 'full' },
      schema: {
        tags: ['account'],
        operationId: 'exportTraining',
        summary: 'Your done tasks as JSON Lines, for training or evaluation',
        description: EXPORT_DESCRIPTION,
        response: {
          200: {
            description: 'the export, streamed; Content-Disposition names a file emend-training-<date>.jsonl',
            content: { 'application/x-ndjson': { schema: Type.String({ description: 'one JSON object per line' }) } },
          },
          ...errorResponses(401, 403),
        },
      },
    },
    async (request, reply) => {
      const workspaceId = caller(request).workspace.id;
      const date = deps.clock.now().toISOString().slice(0, 10);
      // Not object mode: a page's text is one chunk, and the next page is read only when the
      // socket has taken it (backpressure), so memory stays at about one page.
      const body = Readable.from(trainingLines(deps, workspaceId), { objectMode: false, highWaterMark: 64 * 1024 });
      body.on('error', (err) => request.log.warn({ err }, 'training export failed mid-stream'));
      return (
        reply
          .header('content-type', 'application/x-ndjson; charset=utf-8')
          .header('content-disposition', `attachment; filename="emend-training-${date}.jsonl"`)
          .header('cache-control', 'no-store')
          // The schema documents the body's text; Fastify pipes the stream without serialising it.
          .send(body as unknown as string)
      );
    },
  );
};
