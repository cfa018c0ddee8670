import { and, count, desc, eq } from 'drizzle-orm';
import { taskFeedback, tasks } from '../db/schema.js';
import type { Tx } from '../db/client.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { TERMINAL_STATUSES } from '../tasks/states.js';
import type { Correct, CurrentFeedback, FeedbackInput, Reuse } from './feedback-types.js';
import { memoryFromFeedback } from './memory-from-feedback.js';

export type { Correct, CurrentFeedback, FeedbackInput, Reuse } from './feedback-types.js';

export const NOTE_MAX = 4000;
const FIELDS = ['rating', 'correct', 'reuse', 'note'] as const;

type Row = typeof taskFeedback.$inferSelect;

const current = (row: Row, historyCount: number): CurrentFeedback => ({
  taskId: row.taskId,
  rating: row.rating,
  correct: row.correct as Correct | null,
  reuse: row.reuse as Reuse | null,
  note: row.note,
  updatedAt: row.createdAt,
  historyCount,
});

const empty = (taskId: string, at: Date): CurrentFeedback => ({
  taskId,
  rating: null,
  correct: null,
  reuse: null,
  note: null,
  updatedAt: at,
  historyCount: 0,
});

/** The route's schema checks the same; domain code does not trust its callers. */
function checkInput(input: FeedbackInput) {
  if (input.rating !== undefined && !(Number.isInteger(input.rating) && input.rating >= 0 && input.rating <= 5)) {
    throw new AppError('bad_request', 'rating: must be an integer from 0 to 5');
  }
  if (input.note !== undefined && input.note.length > NOTE_MAX)
    throw new AppError('bad_request', `note: must be at most ${NOTE_MAX} characters`);
}

async function latest(db: Deps['db'] | Tx, workspaceId: string, taskId: string): Promise<CurrentFeedback | undefined> {
  const [row] = await db
    .select()
    .from(taskFeedback)
    .where(and(eq(taskFeedback.taskId, taskId), eq(taskFeedback.workspaceId, workspaceId)))
    .orderBy(desc(taskFeedback.createdAt), desc(taskFeedback.id))
    .limit(1);
  if (!row) return undefined;
  const [n] = await db
    .select({ n: count() })
    .from(taskFeedback)
    .where(and(eq(taskFeedback.taskId, taskId), eq(taskFeedback.workspaceId, workspaceId)));
  return current(row, n!.n);
}

/**
 * Records feedback on one of the account's finished tasks. Each post is a new row holding
 * the merged state (fields left out keep their earlier value), so the newest row is the
 * current feedback and the older ones are its history. The task row is locked for the
 * transaction: two posts at once merge one after the other instead of losing a field.
 * The task's repo memory (lesson, example) is rebuilt from the merged feedback in the same
 * transaction.
 */
export async function postFeedback(
  deps: Pick<Deps, 'db' | 'clock'>,
  workspaceId: string,
  taskId: string,
  input: FeedbackInput,
): Promise<CurrentFeedback> {
  checkInput(input);
  return deps.db.transaction(async (tx) => {
    const [task] = await tx
      .select()
      .from(tasks)
      .where(and(eq(tasks.id, taskId), eq(tasks.workspaceId, workspaceId)))
      .for('update');
    if (!task) throw new AppError('not_found', `no task ${taskId}`);
    if (!(TERMINAL_STATUSES as readonly string[]).includes(task.status)) {
      throw new AppError(
        'conflict',
        `the task is ${task.status}; feedback is taken once it has finished (done, failed or cancelled)`,
      );
    }
    const before = await latest(tx, workspaceId, taskId);
    // Nothing to change: the feedback as it stands (empty when none was given), no history row.
    if (!FIELDS.some((f) => input[f] !== undefined)) return before ?? empty(taskId, task.finishedAt ?? task.createdAt);
    const note = input.note === undefined ? (before?.note ?? null) : input.note.trim() ? input.note : null;
    const row: Row = {
      id: newId(),
      taskId,
      workspaceId,
      rating: input.rating ?? before?.rating ?? null,
      correct: input.correct ?? before?.correct ?? null,
      reuse: input.reuse ?? before?.reuse ?? null,
      note,
      createdAt: deps.clock.now(),
    };
    await tx.insert(taskFeedback).values(row);
    const merged = current(row, (before?.historyCount ?? 0) + 1);
    await memoryFromFeedback(tx, deps.clock.now(), task, merged);
    return merged;
  });
}

/** The current feedback on one of the account's tasks; 404 when the task is not theirs or has none. */
export async function getFeedback(
  deps: Pick<Deps, 'db'>,
  workspaceId: string,
  taskId: string,
): Promise<CurrentFeedback> {
  const found = await latest(deps.db, workspaceId, taskId);
  if (!found) throw new AppError('not_found', `task ${taskId} has no feedback (or is not yours)`);
  return found;
}

export function feedbackJson(f: CurrentFeedback) {
  return {
    task_id: f.taskId,
    rating: f.rating,
    correct: f.correct,
    reuse: f.reuse,
    note: f.note,
    updated_at: f.updatedAt.toISOString(),
    history_count: f.historyCount,
  };
}
