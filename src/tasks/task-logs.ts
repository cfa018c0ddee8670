import { taskLogs } from '../db/schema.js';
import { storableJson } from '../db/storable.js';
import type { Deps } from '../deps.js';
import { CHANNELS } from '../events/bus.js';

/** A step log record's states (the spec's "log step states"). */
export const LOG_STATUSES = ['running', 'done', 'failed', 'skipped'] as const;
export type LogStatus = (typeof LOG_STATUSES)[number];

export interface LogRow {
  step: string;
  status: LogStatus;
  input?: Record<string, unknown>;
  output?: Record<string, unknown>;
  tokens?: number;
  costUsd?: number;
  durationMs?: number;
}

/** Appends a log row and wakes the task's live streams. */
export async function appendLog(deps: Pick<Deps, 'db' | 'clock' | 'events'>, taskId: string, row: LogRow) {
  const [inserted] = await deps.db
    .insert(taskLogs)
    .values({
      taskId,
      step: row.step,
      status: row.status,
      // A step's output may quote a model or a repository: a NUL there must not lose the row.
      input: storableJson(row.input ?? {}),
      output: storableJson(row.output ?? {}),
      tokens: row.tokens ?? 0,
      costUsd: row.costUsd ?? 0,
      durationMs: row.durationMs ?? 0,
      createdAt: deps.clock.now(),
    })
    .returning({ id: taskLogs.id });
  await notifyTask(deps, taskId);
  return inserted!.id;
}

export async function notifyTask(deps: Pick<Deps, 'events'>, taskId: string) {
  await deps.events.publish(CHANNELS.taskEvents, taskId).catch(() => {});
}
