import type { ServerResponse } from 'node:http';
import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { and, asc, eq, gt } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { taskLogs, tasks } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { CHANNELS } from '../../events/bus.js';
import { taskStateJson } from '../../tasks/present.js';
import { type Task, getOwnTask } from '../../tasks/service.js';
import { TERMINAL_STATUSES } from '../../tasks/states.js';
import { caller } from '../auth.js';
import { errorResponses } from '../errors.js';
import { Count, IdParams, Nullable, StringEnum, Timestamp, Url, Usd } from '../schema-parts.js';
import { SSE_HEADERS, SSE_HEARTBEAT, SSE_RECONNECT_MS, drained, sseEvent, sseRetry, writable } from '../sse.js';
import { STEP_NAMES } from '../../step-contract/index.js';
import { LOG_STATUSES } from '../../tasks/task-logs.js';
import { TaskStatus } from './tasks.js';

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
    step: StringEnum(STEP_NAMES),
    status: StringEnum(LOG_STATUSES),
    output: Type.Record(Type.String(), Type.Unknown()),
    created_at: Timestamp,
  },
  { $id: 'TaskLogEvent', description: 'data of a `log` event of the task log stream' },
);

/** This resource's named schemas, for src/http/components.ts. */
export const taskStreamSchemas = [TaskStateEvent, TaskLogEvent];

export interface StreamTimings {
  /** How often a stream re-reads its task when no NOTIFY woke it (the fallback). */
  pollMs: number;
  /** How often an idle stream sends a comment line. */
  heartbeatMs: number;
}

export const DEFAULT_STREAM_TIMINGS: StreamTimings = { pollMs: 1_500, heartbeatMs: 15_000 };

/** Log rows read per query; a longer backlog is sent in several batches. */
const BATCH = 500;

const lastEventId = (description: string) =>
  Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });

const DESCRIPTION = [
  'Server-Sent Events (text/event-stream). Each event has one line of JSON as its data:',
  '',
  '- `connected` {task_id}: first, once.',
  '- `state` {status, pr_url, cost_usd, tokens_total, deployed_url, error} (TaskStateEvent): ' +
    'a snapshot after the log backlog, then whenever one of these changed; ' +
    'it describes the task as of the log events sent before it, so a terminal `state` comes after every log.',
  '- `log` {step, status, output, created_at} (TaskLogEvent): ' +
    'a step log record, in order; its `id:` is the log row id.',
  '- `end` {status}: the task is done, failed or cancelled and every log was sent; the server then closes the stream.',
  '',
  'Only `log` events carry an `id:`. Reconnect with the `Last-Event-ID` header (EventSource does this by itself) or `?last_event_id=` to get exactly the logs after that id.',
  'A node that is stopping ends its open streams with a `retry: 1000` field and no `end`: reconnect with Last-Event-ID ' +
    '(EventSource does so by itself), and another node carries on.',
  'New events are pushed as they happen (Postgres NOTIFY) and looked for every 1.5 s as a fallback; a `: ping` comment is sent every 15 s.',
  'Order: `connected`, the log backlog, `state`, then live `log` and `state` events, and `end` last. ' +
    "A finished task's stream replays its logs, then sends its `state` and `end`, and closes at once.",
].join('\n');

/** A finished task's stream as the wire carries it, for the document (built with the writer it shows). */
const STREAM_EXAMPLE = [
  sseEvent('connected', { task_id: '0193a7c2-5b1e-7f3a-9c1d-2e4f6a8b0c1d' }),
  sseEvent('log', { step: 'planner', status: 'running', output: {}, created_at: '2026-01-05T10:00:00.120Z' }, 1041),
  sseEvent(
    'log',
    {
      step: 'planner',
      status: 'done',
      output: { summary: 'Guard the proxy URL before parsing it' },
      created_at: '2026-01-05T10:00:04.870Z',
    },
    1042,
  ),
  sseEvent('state', {
    status: 'done',
    pr_url: 'https://github.com/psf/requests/pull/7',
    cost_usd: 0.0132,
    tokens_total: 5120,
    deployed_url: null,
    error: null,
  }),
  sseEvent('end', { status: 'done' }),
].join('');

/** A `state` event's data (TaskStateEvent): a view of the task object, from its one presenter. */
type Snapshot = ReturnType<typeof taskStateJson>;

const isTerminal = (status: string) => (TERMINAL_STATUSES as readonly string[]).includes(status);

/**
 * The task and its logs after `afterId`, read in one statement so both come from one
 * snapshot: every log the task wrote before reaching its state is among the rows.
 */
function readTask(deps: Pick<Deps, 'db'>, taskId: string, afterId: number) {
  return deps.db
    .select({
      status: tasks.status,
      prUrl: tasks.prUrl,
      costUsd: tasks.costUsd,
      tokensTotal: tasks.tokensTotal,
      deployedUrl: tasks.deployedUrl,
      error: tasks.error,
      logId: taskLogs.id,
      step: taskLogs.step,
      logStatus: taskLogs.status,
      output: taskLogs.output,
      createdAt: taskLogs.createdAt,
    })
    .from(tasks)
    .leftJoin(taskLogs, and(eq(taskLogs.taskId, tasks.id), gt(taskLogs.id, afterId)))
    .where(eq(tasks.id, taskId))
    .orderBy(asc(taskLogs.id))
    .limit(BATCH);
}

interface LiveStream {
  /** Ends the stream (server shutting down) with a `retry:` hint, so the client reconnects elsewhere. */
  shutdown(): Promise<void>;
}

interface StreamOptions {
  deps: Pick<Deps, 'db' | 'events'>;
  log: FastifyBaseLogger;
  res: ServerResponse;
  task: Task;
  afterId: number;
  timings: StreamTimings;
  /** The open streams of this app; a stream is in it from its start until it closes. */
  registry: Set<LiveStream>;
}

/**
 * Runs one stream: sends connected, then on every wake-up (NOTIFY for this task, the poll, or
 * the first read) sends the logs after the last one sent, then the state if it changed (the
 * first read always sends it, after the whole backlog), then `end` once the task has finished.
 * Logs, state and end of one read come from one snapshot, in that order. Reads never overlap, so no row is
 * sent twice; a slow client holds the reads back rather than growing a buffer.
 */
function startStream({ deps, log, res, task, afterId, timings, registry }: StreamOptions): void {
  const taskId = task.id;
  let lastId = afterId;
  let lastState = '';
  let closed = false;
  let again = false;
  let failing = false;
  let reading: Promise<void> | undefined;
  const self: LiveStream = {
    async shutdown() {
      // Chunks are written whole, and a read in flight writes nothing once the stream is
      // stopped: the hint comes after complete events. The client reconnects (to another node)
      // with the Last-Event-ID of the last log it got.
      stop();
      write(sseRetry(SSE_RECONNECT_MS));
      end();
      await reading;
    },
  };

  const write = (chunk: string) => {
    if (chunk && writable(res)) res.write(chunk);
  };
  const stateEvent = (s: Snapshot) => {
    const json = JSON.stringify(s);
    if (json === lastState) return '';
    lastState = json;
    return sseEvent('state', s);
  };

  const stop = () => {
    if (closed) return;
    closed = true;
    clearInterval(poll);
    clearInterval(heartbeat);
    unsubscribe();
    registry.delete(self);
  };
  const end = () => {
    stop();
    if (writable(res)) res.end();
  };

  const pump = async () => {
    const rows = await readTask(deps, taskId, lastId);
    if (closed) return;
    // The task is gone (deleted with its logs): nothing more will come.
    if (rows.length === 0) return end();
    let chunk = '';
    for (const r of rows) {
      if (r.logId === null) continue;
      chunk += sseEvent(
        'log',
        { step: r.step, status: r.logStatus, output: r.output, created_at: r.createdAt!.toISOString() },
        r.logId,
      );
      lastId = r.logId;
    }
    const more = rows.length === BATCH;
    const first = rows[0]!;
    if (more) again = true;
    else {
      chunk += stateEvent(taskStateJson(first));
      if (isTerminal(first.status)) chunk += sseEvent('end', { status: first.status });
    }
    write(chunk);
    if (!more && isTerminal(first.status)) return end();
    await drained(res);
  };

  const wake = () => {
    if (closed) return;
    again = true;
    reading ??= (async () => {
      try {
        while (again && !closed) {
          again = false;
          await pump();
          failing = false;
        }
      } catch (err) {
        // Logged once per outage, not on every poll of every stream; the next wake-up retries.
        if (!closed && !failing) log.warn({ err, task: taskId }, 'task log stream: reading the task failed; retrying');
        failing = true;
      } finally {
        reading = undefined;
      }
    })();
  };

  registry.add(self);
  res.writeHead(200, SSE_HEADERS);
  // No state yet: the first one follows the log backlog (see pump), so a client that stops at a
  // terminal state has seen every log.
  write(sseEvent('connected', { task_id: taskId }));
  const unsubscribe = deps.events.subscribe(CHANNELS.taskEvents, (id) => {
    if (id === taskId) wake();
  });
  const poll = setInterval(wake, timings.pollMs);
  const heartbeat = setInterval(() => {
    if (!res.writableNeedDrain) write(SSE_HEARTBEAT);
  }, timings.heartbeatMs);
  res.on('close', stop);
  // The client may have gone while the task was being read, before 'close' had a listener.
  if (res.socket === null || res.socket.destroyed) stop();
  else wake();
}

/** GET /tasks/:id/logs/stream: a task's logs and state, live, as Server-Sent Events. */
export const taskStreamRoutes: FastifyPluginAsyncTypebox<{ deps: Deps; timings?: Partial<StreamTimings> }> = async (
  app,
  { deps, timings },
) => {
  const resolved: StreamTimings = { ...DEFAULT_STREAM_TIMINGS, ...timings };
  const open = new Set<LiveStream>();
  // Hijacked responses are not idle connections: end them, or closing the server waits forever.
  app.addHook('preClose', async () => {
    await Promise.all([...open].map((s) => s.shutdown()));
  });

  app.get(
    '/tasks/:id/logs/stream',
    {
      schema: {
        tags: ['tasks'],
        operationId: 'streamTaskLogs',
        summary: "A task's logs and state, live (Server-Sent Events)",
        description: DESCRIPTION,
        params: IdParams,
        querystring: Type.Object({
          last_event_id: Type.Optional(
            lastEventId('for clients that cannot set headers; Last-Event-ID wins when both are sent'),
          ),
        }),
        headers: Type.Object({
          'last-event-id': Type.Optional(lastEventId('resume after this log id')),
        }),
        response: {
          200: {
            description: 'the event stream: connected, the log backlog, state, live log and state events, end',
            content: {
              'text/event-stream': {
                schema: Type.String({
                  description:
                    'Server-Sent Events; data is one line of JSON: connected {task_id}, log (TaskLogEvent), ' +
                    'state (TaskStateEvent), end {status}',
                }),
                example: STREAM_EXAMPLE,
              },
            },
          },
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request, reply) => {
      // Ownership is checked before the stream starts, so a stranger's task is an ordinary JSON 404.
      const task = await getOwnTask(deps, caller(request).workspace.id, request.params.id);
      const afterId = request.headers['last-event-id'] ?? request.query.last_event_id ?? 0;
      reply.hijack();
      startStream({ deps, log: request.log, res: reply.raw, task, afterId, timings: resolved, registry: open });
    },
  );
};
