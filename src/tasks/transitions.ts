import { and, eq, inArray, type SQL } from 'drizzle-orm';
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core';
import type { Db } from '../db/client.js';
import { tasks } from '../db/schema.js';
import { type TaskStatus, sourcesOf } from './states.js';
import type { Task } from './task.js';

/** Columns to set on a task: values, or SQL expressions such as `attempts + 1`. */
export type TaskSet = PgUpdateSetSource<typeof tasks>;

/**
 * Moves a task to `to` if it is in a state that may lead there (and matches `where`);
 * `stay` also accepts a task already in `to` (a worker taking over a running task).
 * Returns the updated row, or undefined when the guard did not match: a lost race is a
 * no-op, never an illegal state.
 */
export async function moveTask(
  tx: Db,
  taskId: string,
  to: TaskStatus,
  set: TaskSet = {},
  where?: SQL,
  stay = false,
): Promise<Task | undefined> {
  const from = stay ? [...sourcesOf(to), to] : sourcesOf(to);
  const rows = await tx
    .update(tasks)
    .set({ ...set, status: to })
    .where(and(eq(tasks.id, taskId), inArray(tasks.status, from), where))
    .returning();
  return rows[0];
}
