export const TASK_STATUSES = [
  'pending',
  'running',
  'awaiting_plan',
  'awaiting_diff',
  'done',
  'failed',
  'cancelled',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Tasks that count against the concurrency cap. */
export const ACTIVE_STATUSES: readonly TaskStatus[] = ['pending', 'running', 'awaiting_plan', 'awaiting_diff'];
export const TERMINAL_STATUSES: readonly TaskStatus[] = ['done', 'failed', 'cancelled'];
export const GATE_STATUSES: readonly TaskStatus[] = ['awaiting_plan', 'awaiting_diff'];

/**
 * The one transition table. The database enforces the same edges with a trigger
 * (migrations/0002_task_transitions.sql), and every update also names the states it may
 * leave in its WHERE clause, so a lost race changes no row instead of raising.
 */
export const TRANSITIONS: Record<TaskStatus, readonly TaskStatus[]> = {
  pending: ['running', 'failed', 'cancelled'],
  running: ['awaiting_plan', 'awaiting_diff', 'done', 'failed', 'cancelled'],
  awaiting_plan: ['running', 'cancelled'],
  awaiting_diff: ['running', 'cancelled'],
  done: [],
  failed: [],
  cancelled: [],
};

/** The states from which `to` may be reached. */
export function sourcesOf(to: TaskStatus): TaskStatus[] {
  return TASK_STATUSES.filter((from) => TRANSITIONS[from].includes(to));
}
