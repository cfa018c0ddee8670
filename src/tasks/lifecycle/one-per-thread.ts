import { and, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/client.js';
import { tasks } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { lockWorkspace } from '../../workspaces/workspaces.js';
import { ACTIVE_STATUSES } from '../states.js';
import type { Task } from '../task.js';

/**
 * One active task per code-host thread (docs/triggers.md): a mention, the label, a review or a line
 * comment while a task started on the same issue or pull request is active answers with that
 * task's link instead of starting another. The look and the insert are one step: createTask looks
 * in its own transaction under the workspace lock that admission takes (lockWorkspace), so two
 * deliveries arriving together take turns and the second finds the first's task, on PGlite and on
 * PostgreSQL alike (docs/decisions.md, "One task per thread under the workspace lock").
 */

/** A thread of a repository on a code host, in a workspace: what at most one active task answers. */
export interface ThreadOf {
  workspaceId: string;
  /** The host's id (the task trigger's `host`). */
  host: string;
  repoOwner: string;
  repoName: string;
  thread: 'issue' | 'pull';
  number: number;
}

/** The active task a trigger started on the thread, if any (whichever trigger of the workspace started it). */
export async function activeOnThread(db: Db | Tx, t: ThreadOf): Promise<Task | undefined> {
  const [active] = await db
    .select()
    .from(tasks)
    .where(
      and(
        eq(tasks.workspaceId, t.workspaceId),
        isNotNull(tasks.trigger),
        inArray(tasks.status, [...ACTIVE_STATUSES]),
        sql`${tasks.trigger}->>'host' = ${t.host}`,
        sql`lower(${tasks.repoOwner}) = ${t.repoOwner.toLowerCase()}`,
        sql`lower(${tasks.repoName}) = ${t.repoName.toLowerCase()}`,
        sql`${tasks.trigger}->>'thread' = ${t.thread}`,
        sql`${tasks.trigger}->>'number' = ${String(t.number)}`,
      ),
    )
    .limit(1);
  return active;
}

/** A second task asked for on a thread that an active task already answers; `task` is that one. */
export class ThreadTaskActive extends AppError {
  constructor(readonly task: Task) {
    super(
      'conflict',
      `task ${task.id} is already active on this ${task.trigger?.thread === 'pull' ? 'pull request' : 'issue'}`,
    );
  }
}

/**
 * In the creating transaction, before admission: takes the workspace lock (admission takes it
 * again, a no-op) and refuses with ThreadTaskActive when the thread has an active task already.
 */
export async function refuseSecondOnThread(tx: Tx, t: ThreadOf): Promise<void> {
  await lockWorkspace(tx, t.workspaceId);
  const active = await activeOnThread(tx, t);
  if (active) throw new ThreadTaskActive(active);
}
