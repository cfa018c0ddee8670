import type { taskLogs, tasks } from '../db/schema.js';

/** A task row and a log row, as the database returns them. */
export type Task = typeof tasks.$inferSelect;
export type TaskLog = typeof taskLogs.$inferSelect;
