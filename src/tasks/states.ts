export const TASK_STATUSES = ['pending', 'running', 'awaiting_plan', 'awaiting_diff', 'done', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Tasks that count against the concurrency cap. */
export const ACTIVE_STATUSES: readonly TaskStatus[] = ['pending', 'running', 'awaiting_plan', 'awaiting_diff'];
export const TERMINAL_STATUSES: readonly TaskStatus[] = ['done', 'failed', 'cancelled'];
